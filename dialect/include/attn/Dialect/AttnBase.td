//===- AttnBase.td - attn dialect definition and enums ----*- tablegen -*-===//
//
// The attn dialect states *what* a position-aware attention layer computes
// (RoPE, PaTH, FoX, Multi-Token Attention and their combinations). The exact
// math of every op is in spec/path_fox.md and spec/mta.md; each op's
// description restates the formula it implements.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BASE_TD
#define ATTN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let summary = "Declarative position-aware attention (RoPE, PaTH, FoX, MTA)";
  let description = [{
    Tensors follow the `[B, H, T, D]` convention (batch, heads, sequence,
    head dim). `q: [B, Hq, T, D]`, `k: [B, Hk, S, D]`, `v: [B, Hk, S, Dv]`
    with `Hq % Hk == 0` (GQA: query head `h` reads KV head `h / (Hq/Hk)`).
    When `T < S` the queries are the last `T` positions: query row `i` sits
    at absolute position `i + S - T`. B, H, T and S may be dynamic; head dims
    are static. Score maps, softmax, gates, PaTH transforms and accumulators
    are f32 whatever the input element type.
  }];
  let cppNamespace = "::mlir::attn";
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

def Attn_MaskKind : I32EnumAttr<"MaskKind", "attention mask", [
    I32EnumAttrCase<"causal", 0>,
    I32EnumAttrCase<"none", 1>,
    I32EnumAttrCase<"sliding_window", 2>]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_RopeStyle : I32EnumAttr<"RopeStyle", "rotary embedding pairing", [
    I32EnumAttrCase<"half", 0>,
    I32EnumAttrCase<"interleaved", 1>]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_Stage : I32EnumAttr<"Stage", "MTA stage relative to the softmax", [
    I32EnumAttrCase<"pre", 0>,
    I32EnumAttrCase<"post", 1>]> {
  let cppNamespace = "::mlir::attn";
}

// Activations may be any of the three float types; score maps and the PaTH
// and gate parameters are f32 (spec/path_fox.md §2.3: fla requires fp32).
def Attn_Activation : 4DTensorOf<[F32, F16, BF16]>;
def Attn_ScoreMap : 4DTensorOf<[F32]>;
def Attn_F32Tensor1D : TensorRankOf<[F32], [1]>;
def Attn_F32Tensor2D : TensorRankOf<[F32], [2]>;
def Attn_F32Tensor3D : TensorRankOf<[F32], [3]>;
def Attn_F32Tensor4D : TensorRankOf<[F32], [4]>;
// Packed sequences' offsets (FlashAttention's and fla's cu_seqlens): N + 1
// nondecreasing int32 offsets from 0 to S.
def Attn_CuSeqlens : TensorRankOf<[I32], [1]>;

#endif // ATTN_BASE_TD
