//===- AttnOps.td - attn dialect operations ---------------*- tablegen -*-===//
//
// One op per piece of an attention layer. The fused `attn.attention` has the
// meaning of the chain
//   scores -> [kq_conv pre] -> [head_mix pre] -> softmax -> [kq_conv post]
//          -> [head_mix post] -> weighted_sum -> [head_norm]
// and is what `attn-fuse` produces from such a chain.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "attn/Dialect/AttnBase.td"
include "attn/Dialect/AttnInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// attn.rope
//===----------------------------------------------------------------------===//

def Attn_RopeOp : Attn_Op<"rope", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding of q or k";
  let description = [{
    Rotates pairs of the first `rotary_dim` (default D, even) features of
    every token by the angle `pos * theta^(-2i / rotary_dim)`,
    `i in [0, rotary_dim/2)`: `(a, b) -> (a cos - b sin, a sin + b cos)`.
    `style half` (default, GPT-NeoX) pairs `(x[i], x[i + rotary_dim/2])`;
    `style interleaved` (GPT-J) pairs `(x[2i], x[2i+1])`. Features at and
    beyond `rotary_dim` pass through. The position of token `t` is
    `offset + t`, or `positions[t]` when the optional `positions` operand
    (`tensor<Txi64>`) is given. Computed in f32, stored in the input type.
    With `inverse` every pair turns by the opposite angle
    `-pos * theta^(-2i / rotary_dim)`: the transpose of the rotation, which
    is rope's VJP (`dx = attn.rope %dy ... inverse`, same attributes).

    ```mlir
    %qr = attn.rope %q theta 1.0e+04 : tensor<?x?x?x64xf32>
    %kr = attn.rope %k positions(%pos) style interleaved rotary_dim 32
        : tensor<?x?x?x64xbf16>, tensor<?xi64>
    ```
  }];
  let arguments = (ins Attn_Activation:$input,
                       Optional<TensorRankOf<[I64], [1]>>:$positions,
                       DefaultValuedAttr<Attn_RopeStyle,
                                         "::mlir::attn::RopeStyle::half">:$style,
                       DefaultValuedAttr<F64Attr, "10000.0">:$theta,
                       OptionalAttr<I64Attr>:$rotary_dim,
                       DefaultValuedAttr<I64Attr, "0">:$offset,
                       UnitAttr:$inverse);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = [{
    $input (`positions` `(` custom<Required>($positions)^ `)`)? (`style` $style^)?
    (`theta` $theta^)? (`rotary_dim` custom<SignedI64>($rotary_dim)^)? (`offset` custom<SignedI64>($offset)^)?
    (`inverse` $inverse^)? attr-dict `:` type($input) (`,` type($positions)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of rotated features (rotary_dim, or D when absent).
    int64_t getRotaryDimOrHeadDim();
  }];
}

//===----------------------------------------------------------------------===//
// attn.scores
//===----------------------------------------------------------------------===//

def Attn_ScoresOp : Attn_Op<"scores", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, AttrSizedOperandSegments]> {
  let summary = "attention logits with optional PaTH transforms and forget gate";
  let description = [{
    Computes the `[B, Hq, T, S]` f32 logit map
    `s * q_i^T P(i, j) k_j + gamma * (G_i - G_j)` for visible `(i, j)` and
    `-inf` for masked ones (spec/path_fox.md §1.2-1.3). Query row `i` is at
    position `p_i = i + S - T`; positions below refer to `p_i`.

    * `P(i, j) = H_i H_{i-1} ... H_{j+1}` (identity for `j >= i`) with
      `H_t = I - beta_t w_t w_t^T` when a PaTH path `path(%w, %beta)`
      (`w: [B, Hk, S, D]`, `beta: [B, Hk, S]`, f32) is given, else `I`.
      `H_j` itself never touches `k_j`. `w` rows are unit-norm (the
      caller's, e.g. through `attn.l2norm`) and `beta` lies in `[0, 2]`,
      where every `H_t` is a reflection or a contraction; the runtime
      refuses a `beta` entry argument with a value outside it (outside it
      the products of transforms grow without bound and overflow f32).
      NaN propagates.
    * `G` is the inclusive cumsum over the sequence of the log forget gate
      `gate(%g)` (`g: [B, Hq, S]`, f32, one per query head), else 0.
      `gamma = s` with `scaled` (fla PaTH-FoX convention), else 1 (FoX).
    * `mask causal` (default): `j <= p_i`; `mask none`: every key;
      `mask sliding_window window W`: `p_i - W < j <= p_i`. PaTH and the
      gate need a causal or sliding-window mask.
    * `scale s` defaults to `1/sqrt(D)`.
    * `cu_seqlens(%cu)` (`tensor<?xi32>`, N + 1 offsets): packed sequences,
      N of them laid end to end along the sequence axis, sequence n at
      `[cu[n], cu[n+1])` (FlashAttention's and fla's `cu_seqlens`; the
      offsets are nondecreasing from 0 to S, and T == S). A query sees only
      keys of its own sequence, under the mask: each sequence is computed
      as if alone (PaTH's transforms and the gate's sums between a query
      and its keys never leave it).

    Vector-Jacobian product: `attn.scores_grad`.

    ```mlir
    %s = attn.scores %q, %k path(%w, %beta) gate(%g) scaled
        : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
           tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins Attn_Activation:$q, Attn_Activation:$k,
                       Optional<Attn_F32Tensor4D>:$w,
                       Optional<Attn_F32Tensor3D>:$beta,
                       Optional<Attn_F32Tensor3D>:$g,
                       Optional<Attn_CuSeqlens>:$cu_seqlens,
                       UnitAttr:$gate_scaled,
                       DefaultValuedAttr<Attn_MaskKind,
                                         "::mlir::attn::MaskKind::causal">:$mask,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Attn_ScoreMap:$result);
  let assemblyFormat = [{
    $q `,` $k (`path` `(` custom<Required>($w)^ `,` custom<Required>($beta) `)`)? (`gate` `(` custom<Required>($g)^ `)`)?
    (`scaled` $gate_scaled^)? (`cu_seqlens` `(` custom<Required>($cu_seqlens)^ `)`)?
    (`mask` $mask^)? (`window` custom<SignedI64>($window)^)?
    (`scale` $scale^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or 1/sqrt(D).
    double getScaleOrDefault();
  }];
}

//===----------------------------------------------------------------------===//
// attn.kq_conv
//===----------------------------------------------------------------------===//

def Attn_KqConvOp : Attn_Op<"kq_conv", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "MTA key-query convolution over a score map";
  let description = [{
    Per-head 2-D cross-correlation of the `[B, H, T, S]` map with
    `kernel: [H, c_q, c_k]` (`c_k` odd), exactly spec/mta.md §1.2 (Eq. 5/6 of
    the paper, as the official code computes it). With `p = c_q - 1`,
    `c = (c_k - 1) / 2` and `off = S - T`:

    `X0[i', j'] = x[i', j']` if `0 <= i' < T`, `0 <= j' < S`,
    `j' <= i' + off` and `x[i', j'] != -inf`, else 0 (Mask_0 on the *source*
    position plus zero padding: `p` rows above, `c` columns each side);
    `C[i, j] = sum_{a < c_q, b < c_k} kernel[h, a, b] * X0[i - p + a, j - c + b]`.

    Row `a = c_q - 1` is the current query, column `b = c` the same key.
    Outputs right of the diagonal (`j > i + off`) are `-inf` for stage `pre`
    (logits, ready for the softmax) and 0 for stage `post` (probabilities;
    no renormalisation).

    `cu_seqlens(%cu)` (packed sequences as on `attn.scores`, T == S): each
    sequence is convolved as if alone. For output row `i` of the sequence
    starting at `s_i`, a source key `j' < s_i` reads 0 (the halo never
    reaches into an earlier sequence), and outputs left of it (`j < s_i`)
    are masked as those right of the diagonal.
    Vector-Jacobian product: `attn.kq_conv_grad`.

    ```mlir
    %c = attn.kq_conv pre %s, %theta : tensor<?x?x?x?xf32>, tensor<16x6x11xf32>
    ```
  }];
  let arguments = (ins Attn_Stage:$stage, Attn_ScoreMap:$input,
                       Attn_F32Tensor3D:$kernel,
                       Optional<Attn_CuSeqlens>:$cu_seqlens);
  let results = (outs Attn_ScoreMap:$result);
  let assemblyFormat = [{
    $stage $input `,` $kernel (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict
    `:` type($input) `,` type($kernel) (`,` type($cu_seqlens)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.head_mix
//===----------------------------------------------------------------------===//

def Attn_HeadMixOp : Attn_Op<"head_mix", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "MTA head mixing at every (query, key)";
  let description = [{
    Heads are split into contiguous groups of `c_h = weight.shape[1]`
    (`weight: [H, c_h]`, `c_h` divides H; `c_h = H` is a full `[H, H]` map).
    At every `(i, j)`:
    `out[h] = sum_{m < c_h} weight[h, m] * in[g0 + m]`, `g0 = (h / c_h) c_h`,
    i.e. `out[h] = sum_g W[h, g] in[g]` over the heads of `h`'s group
    (the `nn.Linear` convention `y = x W^T`). Masked inputs (`-inf`) count
    as 0. Outputs right of the diagonal (`j > i + S - T`) are `-inf` for
    stage `pre` and 0 for stage `post`; with `cu_seqlens(%cu)` (packed
    sequences as on `attn.scores`) so are those left of the row's sequence
    start.

    Checkpoint conventions (spec/mta.md §1.2): the official pre-softmax mix
    is a full `nn.Linear(M, M)` and loads as is (`W = linear.weight`); the
    official grouped post-softmax kernel `K_g[in, out]` is transposed:
    `weight[g0 + o, i] = K_g[i, o]`.
    Vector-Jacobian product: `attn.head_mix_grad`.

    ```mlir
    %m = attn.head_mix post %p, %w : tensor<?x16x?x?xf32>, tensor<16x4xf32>
    ```
  }];
  let arguments = (ins Attn_Stage:$stage, Attn_ScoreMap:$input,
                       Attn_F32Tensor2D:$weight,
                       Optional<Attn_CuSeqlens>:$cu_seqlens);
  let results = (outs Attn_ScoreMap:$result);
  let assemblyFormat = [{
    $stage $input `,` $weight (`cu_seqlens` `(` $cu_seqlens^ `)`)? attr-dict
    `:` type($input) `,` type($weight) (`,` type($cu_seqlens)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.softmax
//===----------------------------------------------------------------------===//

def Attn_SoftmaxOp : Attn_Op<"softmax", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, SameOperandsAndResultType]> {
  let summary = "row softmax over keys";
  let description = [{
    `p_ij = exp(x_ij - m_i) / sum_j exp(x_ij - m_i)` over the last axis in
    f32, `m_i = max_j x_ij`. `-inf` entries give 0; a row that is entirely
    `-inf` gives zeros, never NaN.
    VJP: `attn.softmax_grad` (of the output p).
  }];
  let arguments = (ins Attn_ScoreMap:$input);
  let results = (outs Attn_ScoreMap:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// attn.weighted_sum
//===----------------------------------------------------------------------===//

def Attn_WeightedSumOp : Attn_Op<"weighted_sum", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure]> {
  let summary = "probability-weighted sum of values";
  let description = [{
    `o_i = sum_j p_ij v_j`: `p: [B, Hq, T, S]` (f32), `v: [B, Hk, S, Dv]`,
    result `[B, Hq, T, Dv]` in v's element type; query head `h` reads KV head
    `h / (Hq / Hk)`. Accumulates in f32. A zero `p_ij` (a masked key) is
    skipped, never multiplied: a NaN or inf in `v_j` reaches only the rows
    that give key `j` weight (docs/input-limits.md, "Non-finite values").
    VJP: `attn.weighted_sum_grad`.
  }];
  let arguments = (ins Attn_ScoreMap:$probs, Attn_Activation:$v);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = "$probs `,` $v attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.head_norm
//===----------------------------------------------------------------------===//

def Attn_HeadNormOp : Attn_Op<"head_norm", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, AttrSizedOperandSegments,
                                             AllTypesMatch<["input", "result"]>]> {
  let summary = "MTA output norm: per-head RMSNorm with an optional scalar gate";
  let description = [{
    Per `(token, head)` row of `input: [B, H, T, Dv]`, in f32
    (spec/mta.md §3): `y = o / sqrt(mean(o^2) + eps) * gamma` with
    `gamma: [Dv]` shared by all heads; with `gate(%w, %b)` (`w: [Dv]`,
    `b: [1]`) then `y <- y * sigmoid(w . y + b)`, a scalar per row computed
    from the normalised row. `eps` defaults to 1e-5.
    VJP: `attn.head_norm_grad`.
  }];
  let arguments = (ins Attn_Activation:$input, Attn_F32Tensor1D:$gamma,
                       Optional<Attn_F32Tensor1D>:$gate_w,
                       Optional<Attn_F32Tensor1D>:$gate_b,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = [{
    $input `,` $gamma (`gate` `(` custom<Required>($gate_w)^ `,` custom<Required>($gate_b) `)`)? (`eps` $eps^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.short_conv
//===----------------------------------------------------------------------===//

def Attn_ShortConvOp : Attn_Op<"short_conv", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "depthwise causal 1-D convolution along the sequence";
  let description = [{
    Per channel `(h, d)` of `input: [B, H, T, D]` with `kernel: [H, D, K]`:
    `y_t = sum_{r < K} kernel[h, d, r] * x_{t - K + 1 + r}` (zero before the
    sequence start; `r = K - 1` is the current token), then
    `y <- y * sigmoid(y)` with `silu`. PaTH's w preprocessing (kernel 3,
    SiLU; spec/path_fox.md §1.1) on the head-split layout.
    VJP: `attn.short_conv_grad`.
  }];
  let arguments = (ins Attn_Activation:$input, Attn_F32Tensor3D:$kernel,
                       UnitAttr:$silu);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = [{
    $input `,` $kernel (`silu` $silu^)? attr-dict `:` type($input) `,` type($kernel)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.l2norm
//===----------------------------------------------------------------------===//

def Attn_L2NormOp : Attn_Op<"l2norm", [DeclareOpInterfaceMethods<Attn_VJPOpInterface>, Pure, SameOperandsAndResultType]> {
  let summary = "row L2 normalisation (PaTH's w)";
  let description = [{
    `x / sqrt(sum_d x_d^2 + eps)` over the last axis, in f32; `eps`
    defaults to 1e-6 (spec/path_fox.md §1.1).
    VJP: `attn.l2norm_grad`.
  }];
  let arguments = (ins Attn_Activation:$input,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$eps);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = "$input (`eps` $eps^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Vector-Jacobian products of softmax, weighted_sum, head_norm, short_conv and
// l2norm, and the log-sum-exp the training forward saves. Each VJP op takes
// the forward's operands and then the cotangent of its result, last, as
// `$grad`; its results are the cotangents of the forward's differentiable
// operands in their order, activations in the activation's type (f32
// accumulation inside), parameters in f32.
//===----------------------------------------------------------------------===//

def Attn_SoftmaxGradOp : Attn_Op<"softmax_grad", [Pure,
    AllTypesMatch<["probs", "grad", "result"]>]> {
  let summary = "VJP of attn.softmax, from its output";
  let description = [{
    With `p = softmax(x)` (the forward's *output*) and `dp` the cotangent
    of p, per row: `dx_ij = p_ij (dp_ij - sum_k p_ik dp_ik)` in f32. Masked
    entries (`p_ij = 0`) and fully masked rows get 0.

    ```mlir
    %dx = attn.softmax_grad %p, %dp : tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins Attn_ScoreMap:$probs, Attn_ScoreMap:$grad);
  let results = (outs Attn_ScoreMap:$result);
  let assemblyFormat = "$probs `,` $grad attr-dict `:` type($probs)";
}

def Attn_WeightedSumGradOp : Attn_Op<"weighted_sum_grad", [Pure]> {
  let summary = "VJP of attn.weighted_sum";
  let description = [{
    For `o_i = sum_j p_ij v_j` with cotangent `dO: [B, Hq, T, Dv]` (v's
    element type): `dp_ij = dO_i . v_j` (f32, p's type, every entry) and
    `dv_j = sum_{h in group(kh)} sum_i p_ij dO_i` in v's type, where the
    group of KV head `kh` is the query heads `h` with `h / (Hq / Hk) = kh`
    (GQA). Accumulates in f32.

    ```mlir
    %dp, %dv = attn.weighted_sum_grad %p, %v, %do
        : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
        -> (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>)
    ```
  }];
  let arguments = (ins Attn_ScoreMap:$probs, Attn_Activation:$v,
                       Attn_Activation:$grad);
  let results = (outs Attn_ScoreMap:$probs_grad, Attn_Activation:$v_grad);
  let assemblyFormat = [{
    $probs `,` $v `,` $grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_HeadNormGradOp : Attn_Op<"head_norm_grad", [Pure,
    AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let summary = "VJP of attn.head_norm";
  let description = [{
    Per row `o` of `input: [B, H, T, Dv]`, with the forward's
    `inv = 1 / sqrt(mean(o^2) + eps)`, `n = o inv`, `u = n gamma` and, with
    `gate(%w, %b)`, `s = sigmoid(w . u + b)`, `y = u s` (else `y = u`); `dy`
    the cotangent of y:

    * gate: `dz = (dy . u) s (1 - s)`, `dgate_b += dz`, `dgate_w += dz u`,
      `du = dy s + dz w`; without a gate `du = dy`;
    * `dgamma += du n`;
    * `dx = inv du gamma - inv^3 o ((du gamma) . o) / Dv`.

    `dgamma`, `dgate_w` and `dgate_b` sum over every row (f32); dx has the
    input's type. The results `gate_w_grad` and `gate_b_grad` are present
    exactly when the gate operands are.

    ```mlir
    %dx, %dg, %dw, %db = attn.head_norm_grad %o, %gamma gate(%w, %b), %dy
        : (tensor<?x?x?x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>,
           tensor<?x?x?x64xf32>)
        -> (tensor<?x?x?x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>)
    ```
  }];
  let arguments = (ins Attn_Activation:$input, Attn_F32Tensor1D:$gamma,
                       Optional<Attn_F32Tensor1D>:$gate_w,
                       Optional<Attn_F32Tensor1D>:$gate_b,
                       Attn_Activation:$grad,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Attn_Activation:$input_grad, Attn_F32Tensor1D:$gamma_grad,
                      Optional<Attn_F32Tensor1D>:$gate_w_grad,
                      Optional<Attn_F32Tensor1D>:$gate_b_grad);
  let assemblyFormat = [{
    $input `,` $gamma (`gate` `(` custom<Required>($gate_w)^ `,` custom<Required>($gate_b) `)`)? `,` $grad
    (`eps` $eps^)? attr-dict `:` custom<HeadNormGradTypes>(type($input), type($gamma), type($gate_w),
      type($gate_b), type($grad), type($input_grad), type($gamma_grad), type($gate_w_grad), type($gate_b_grad))
  }];
  let hasVerifier = 1;
}

def Attn_ShortConvGradOp : Attn_Op<"short_conv_grad", [Pure,
    AllTypesMatch<["input", "grad", "input_grad"]>,
    AllTypesMatch<["kernel", "kernel_grad"]>]> {
  let summary = "VJP of attn.short_conv";
  let description = [{
    With the forward's pre-activation `a_t = sum_{r < K} kernel[h, d, r]
    x_{t-K+1+r}` per channel `(h, d)` and `dy` the cotangent of its output:
    `da_t = dy_t` (plain) or `da_t = dy_t s (1 + a_t (1 - s))`,
    `s = sigmoid(a_t)` (with `silu`); then
    `dx_u = sum_{r < K, t = u+K-1-r < T} kernel[h, d, r] da_t` (x's type) and
    `dkernel[h, d, r] = sum_{b, t >= K-1-r} da_t x_{t-K+1+r}` (f32
    `[H, D, K]`).

    ```mlir
    %dx, %dk = attn.short_conv_grad %x, %kernel, %dy silu
        : tensor<?x?x?x64xf32>, tensor<4x64x3xf32>
    ```
  }];
  let arguments = (ins Attn_Activation:$input, Attn_F32Tensor3D:$kernel,
                       Attn_Activation:$grad, UnitAttr:$silu);
  let results = (outs Attn_Activation:$input_grad,
                      Attn_F32Tensor3D:$kernel_grad);
  let assemblyFormat = [{
    $input `,` $kernel `,` $grad (`silu` $silu^)? attr-dict `:` type($input) `,` type($kernel)
  }];
  let hasVerifier = 1;
}

def Attn_L2NormGradOp : Attn_Op<"l2norm_grad", [Pure,
    AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "VJP of attn.l2norm";
  let description = [{
    Per row x with `inv = 1 / sqrt(sum_d x_d^2 + eps)` and `dy` the
    cotangent of `x inv`: `dx = inv dy - inv^3 x (dy . x)`, in f32, stored in
    the input's type.

    ```mlir
    %dx = attn.l2norm_grad %x, %dy eps 1.0e-06 : tensor<?x?x?x64xf32>
    ```
  }];
  let arguments = (ins Attn_Activation:$input, Attn_Activation:$grad,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$eps);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = "$input `,` $grad (`eps` $eps^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Attn_LogSumExpOp : Attn_Op<"logsumexp", [Pure]> {
  let summary = "row log-sum-exp of a score map";
  let description = [{
    `lse_bhi = m + log(sum_j exp(s_bhij - m))` over the last axis of
    `input: [B, H, T, S]` in f32, `m = max_j s_bhij`; a row that is entirely
    `-inf` gives `-inf`. The result is `[B, H, T]` f32. The training forward
    saves it so that the backward recomputes the probabilities
    `p_ij = exp(s_ij - lse_i)` without the T x S map.

    ```mlir
    %lse = attn.logsumexp %s : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins Attn_ScoreMap:$input);
  let results = (outs Attn_F32Tensor3D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.attention
//===----------------------------------------------------------------------===//

// The operands and attributes of attn.attention, and their syntax; attn.attention_grad
// takes the same ones first.
defvar Attn_AttentionPieces = (ins Attn_Activation:$q, Attn_Activation:$k,
                       Attn_Activation:$v,
                       Optional<Attn_F32Tensor4D>:$w,
                       Optional<Attn_F32Tensor3D>:$beta,
                       Optional<Attn_F32Tensor3D>:$g,
                       Optional<Attn_F32Tensor3D>:$kq_conv_pre,
                       Optional<Attn_F32Tensor2D>:$head_mix_pre,
                       Optional<Attn_F32Tensor3D>:$kq_conv_post,
                       Optional<Attn_F32Tensor2D>:$head_mix_post,
                       Optional<Attn_F32Tensor1D>:$norm,
                       Optional<Attn_F32Tensor1D>:$norm_gate_w,
                       Optional<Attn_F32Tensor1D>:$norm_gate_b,
                       Optional<Attn_CuSeqlens>:$cu_seqlens,
                       OptionalAttr<F64Attr>:$rope_theta,
                       DefaultValuedAttr<Attn_RopeStyle,
                                         "::mlir::attn::RopeStyle::half">:$rope_style,
                       OptionalAttr<I64Attr>:$rope_dim,
                       DefaultValuedAttr<I64Attr, "0">:$rope_offset,
                       OptionalAttr<I64Attr>:$rope_q_offset,
                       UnitAttr:$gate_scaled,
                       DefaultValuedAttr<Attn_MaskKind,
                                         "::mlir::attn::MaskKind::causal">:$mask,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$scale,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$norm_eps);
defvar Attn_AttentionSyntax = [{
    $q `,` $k `,` $v
    (`rope` `(` $rope_theta^ `)`)? (`rope_style` $rope_style^)?
    (`rope_dim` custom<SignedI64>($rope_dim)^)? (`rope_offset` custom<SignedI64>($rope_offset)^)?
    (`rope_q_offset` custom<SignedI64>($rope_q_offset)^)?
    (`path` `(` custom<Required>($w)^ `,` custom<Required>($beta) `)`)? (`gate` `(` custom<Required>($g)^ `)`)?
    (`scaled` $gate_scaled^)?
    (`kq_conv_pre` `(` custom<Required>($kq_conv_pre)^ `)`)? (`head_mix_pre` `(` custom<Required>($head_mix_pre)^ `)`)?
    (`kq_conv_post` `(` custom<Required>($kq_conv_post)^ `)`)? (`head_mix_post` `(` custom<Required>($head_mix_post)^ `)`)?
    (`norm` `(` custom<Required>($norm)^ `)`)? (`norm_gate` `(` custom<Required>($norm_gate_w)^ `,` custom<Required>($norm_gate_b) `)`)?
    (`norm_eps` $norm_eps^)? (`cu_seqlens` `(` custom<Required>($cu_seqlens)^ `)`)?
    (`mask` $mask^)? (`window` custom<SignedI64>($window)^)? (`scale` $scale^)?
}];

def Attn_AttentionOp : Attn_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "fused position-aware attention";
  let description = [{
    One attention layer with every optional piece; its meaning is the chain

    ```
    q' = rope(q), k' = rope(k)            if rope (q at positions S-T+i)
    s  = scores(q', k', path, gate, mask, scale)
    s  = kq_conv pre (s, kq_conv_pre)     if kq_conv_pre
    s  = head_mix pre (s, head_mix_pre)   if head_mix_pre
    p  = softmax(s)
    p  = kq_conv post (p, kq_conv_post)   if kq_conv_post
    p  = head_mix post (p, head_mix_post) if head_mix_post
    o  = weighted_sum(p, v)
    o  = head_norm(o, norm, norm_gate)    if norm
    ```

    with each op's semantics as documented on it (`path(%w, %beta)`: unit
    `w` rows, `beta` in `[0, 2]`, as on `attn.scores`). `rope(theta)` enables RoPE
    on q and k (`rope_style`, `rope_dim` as on `attn.rope`): key j sits at
    position `rope_offset + j`, query i at `rope_offset + S - T + i`, or at
    `rope_q_offset + i` when that attribute is given (what `attn-fuse`
    produces from two `attn.rope` ops whose offsets it cannot relate).
    The MTA pieces need a causal mask and `Hq == Hk` is not required (the
    mixing acts on query heads). `cu_seqlens(%cu)` packs sequences as on
    `attn.scores` (T == S): each sequence is computed as if alone, its
    RoPE positions restarting at `rope_offset` (not with `rope_q_offset`,
    nor yet with the MTA pieces). Users may write this op directly;
    `attn-fuse` produces it from the chain.

    With a second result type, the op also returns `lse`, the row
    log-sum-exp of the logits `s` that enter the softmax (as
    `attn.logsumexp` gives it, `[B, Hq, T]` f32): what a training forward
    saves for `attn.attention_grad`.
  }];
  let arguments = Attn_AttentionPieces;
  let results = (outs Attn_Activation:$result,
                      Optional<Attn_F32Tensor3D>:$lse);
  let assemblyFormat = !strconcat(Attn_AttentionSyntax, [{
    attr-dict `:` functional-type(operands, results)
  }]);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or 1/sqrt(D).
    double getScaleOrDefault();
    /// True when any MTA piece (convolution or head mix) is present.
    bool hasMTA() {
      return getKqConvPre() || getHeadMixPre() || getKqConvPost() ||
             getHeadMixPost();
    }
  }];
}

def Attn_AttentionGradOp : Attn_Op<"attention_grad",
                                   [Pure, AttrSizedOperandSegments]> {
  let summary = "vector-Jacobian product of attn.attention";
  let description = [{
    The gradients of `L = sum(grad * o)`, `o` the result of `attn.attention`
    with the same operands and attributes (given first, in its syntax), with
    respect to each of its float operands present, in operand order: `dq`,
    `dk`, `dv`, then `dw`, `dbeta`, `dg`, the MTA pieces' and the norm's
    parameters where given. `out` and `lse` are that op's two results for
    these operands; a lowering may use them instead of recomputing (the
    fused flash backward recomputes the probabilities as
    `exp(s - lse)` and takes `rowsum(grad * out)` as the softmax's row
    term). Its meaning is the VJPs of the expanded chain's ops in reverse
    (`attn-expand-attention`), each as documented on its `_grad` op; `dq`,
    `dk`, `dv` have their operands' types, the rest are f32. GQA: the
    gradients of a KV head's `k`, `v` (and PaTH's `w`, `beta`) sum over its
    query heads. Where one value fills several operands (`q, q, q`), only
    the sum of their gradients is defined.

    ```mlir
    %dq, %dk, %dv, %dg = attn.attention_grad %q, %k, %v gate(%g), %o, %lse, %do
        : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
           tensor<?x?x?xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>,
           tensor<?x?x?x64xbf16>)
        -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
            tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
    ```
  }];
  let arguments = !con(Attn_AttentionPieces,
                       (ins Attn_Activation:$out, Attn_F32Tensor3D:$lse,
                            Attn_Activation:$grad));
  let results = (outs Variadic<AnyRankedTensor>:$grads);
  let assemblyFormat = !strconcat(Attn_AttentionSyntax, [{
    `,` $out `,` $lse `,` $grad attr-dict `:` functional-type(operands, results)
  }]);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or 1/sqrt(D).
    double getScaleOrDefault();
    /// True when any MTA piece (convolution or head mix) is present.
    bool hasMTA() {
      return getKqConvPre() || getHeadMixPre() || getKqConvPost() ||
             getHeadMixPost();
    }
    /// The float operands the results are the gradients of, in order.
    ::llvm::SmallVector<::mlir::Value> differentiated();
  }];
}

//===----------------------------------------------------------------------===//
// Vector-Jacobian products of attn.scores, attn.kq_conv and attn.head_mix
//
// Each takes the forward op's operands and attributes, then the cotangent
// `$grad` of its result last, and returns the gradients of the forward's
// differentiable operands in their order.
//===----------------------------------------------------------------------===//

def Attn_ScoresGradOp : Attn_Op<"scores_grad", [Pure, AttrSizedOperandSegments,
                                                AttrSizedResultSegments]> {
  let summary = "vector-Jacobian product of attn.scores";
  let description = [{
    The gradients of `L = sum_{visible (i, j)} grad_ij * s_ij`, `s` the
    logits of `attn.scores` with the same operands and attributes: only
    visible cells count, a masked cell's `grad` is never read into the
    result (it may hold anything, NaN included). With `p_i = i + S - T`,
    `P(a, j) = H_a ... H_{j+1}` and `H_t = I - beta_t w_t w_t^T`:

    * `dq_i = s * sum_j grad_ij P(p_i, j) k_j`
    * `dk_j = s * sum_{h in j's group} sum_i grad_ij P(p_i, j)^T q_i`
    * PaTH: with `r_ij(t) = H_{t+1} ... H_{p_i} q_i` (the query carried back
      to just after `t`) and `u_ij(t) = H_{t-1} ... H_{j+1} k_j` (the key
      carried forward to just before `t`), for every visible cell whose
      path crosses `t` (`j < t <= p_i`):
      `dbeta_t -= s grad_ij (w_t . r_ij(t)) (w_t . u_ij(t))` and
      `dw_t -= s beta_t grad_ij ((w_t . u_ij(t)) r_ij(t) + (w_t . r_ij(t)) u_ij(t))`
    * FoX: `dg_t = gamma * sum_{visible, j < t <= p_i} grad_ij`, i.e. the
      cells whose gate sum `G_{p_i} - G_j` contains `g_t`.

    GQA: `dk`, `dw`, `dbeta` sum over the query heads of their KV head;
    `dg` is per query head. Results: `dq` and `dk` in q's and k's types
    (accumulated in f32), then `dw`, `dbeta` exactly when `path` is given
    and `dg` exactly when `gate` is, all f32.

    ```mlir
    %dq, %dk, %dw, %dbeta, %dg = attn.scores_grad %q, %k path(%w, %beta)
        gate(%g) scaled, %ds
        : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
           tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>)
        -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
            tensor<?x?x?xf32>, tensor<?x?x?xf32>)
    ```
  }];
  let arguments = (ins Attn_Activation:$q, Attn_Activation:$k,
                       Optional<Attn_F32Tensor4D>:$w,
                       Optional<Attn_F32Tensor3D>:$beta,
                       Optional<Attn_F32Tensor3D>:$g,
                       Optional<Attn_CuSeqlens>:$cu_seqlens,
                       Attn_ScoreMap:$grad,
                       UnitAttr:$gate_scaled,
                       DefaultValuedAttr<Attn_MaskKind,
                                         "::mlir::attn::MaskKind::causal">:$mask,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Attn_Activation:$dq, Attn_Activation:$dk,
                      Optional<Attn_F32Tensor4D>:$dw,
                      Optional<Attn_F32Tensor3D>:$dbeta,
                      Optional<Attn_F32Tensor3D>:$dg);
  // functional-type(operands, results) cannot say which optional results a
  // type list holds; ScoresGradResults reads them by count.
  let assemblyFormat = [{
    $q `,` $k (`path` `(` custom<Required>($w)^ `,` custom<Required>($beta) `)`)? (`gate` `(` custom<Required>($g)^ `)`)?
    (`scaled` $gate_scaled^)? (`cu_seqlens` `(` custom<Required>($cu_seqlens)^ `)`)?
    (`mask` $mask^)? (`window` custom<SignedI64>($window)^)?
    (`scale` $scale^)? `,` $grad attr-dict `:` `(` type(operands) `)` `->`
    `(` custom<ScoresGradResults>(type($dq), type($dk), type($dw), type($dbeta), type($dg)) `)`
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The forward's scale: the `scale` attribute or 1/sqrt(D).
    double getScaleOrDefault();
  }];
}

def Attn_KqConvGradOp : Attn_Op<"kq_conv_grad", [Pure]> {
  let summary = "vector-Jacobian product of attn.kq_conv";
  let description = [{
    The gradients of `L = sum_{j <= i + off} grad_ij C_ij` with `C`, `X0`,
    `p`, `c` and `off` as on `attn.kq_conv` (outputs right of the diagonal
    are constants and pass no gradient; `grad` there is never read):

    * `dkernel[h, a, b] = sum_{n, i, j <= i + off} grad[n, h, i, j] * X0[i - p + a, j - c + b]`
    * `dx[i', j'] = sum_{a, b} kernel[h, a, b] * grad[i' + p - a, j' + c - b]`
      over the terms whose output cell exists and lies on or left of the
      diagonal, and `dx[i', j'] = 0` where `X0` masks the source
      (`x[i', j'] = -inf` or `j' > i' + off`).
    * With `cu_seqlens`, as on `attn.kq_conv`: a term whose output row's
      sequence starts after its source key, or whose output is left of that
      start, is left out of both sums.

    Both results are f32: `dx` has the score map's shape, `dkernel` the
    kernel's `[H, c_q, c_k]`.

    ```mlir
    %dx, %dk = attn.kq_conv_grad pre %s, %theta, %dc
        : (tensor<?x?x?x?xf32>, tensor<16x6x11xf32>, tensor<?x?x?x?xf32>)
        -> (tensor<?x?x?x?xf32>, tensor<16x6x11xf32>)
    ```
  }];
  let arguments = (ins Attn_Stage:$stage, Attn_ScoreMap:$input,
                       Attn_F32Tensor3D:$kernel, Attn_ScoreMap:$grad,
                       Optional<Attn_CuSeqlens>:$cu_seqlens);
  let results = (outs Attn_ScoreMap:$dx, Attn_F32Tensor3D:$dkernel);
  let assemblyFormat = [{
    $stage $input `,` $kernel `,` $grad (`cu_seqlens` `(` $cu_seqlens^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Attn_HeadMixGradOp : Attn_Op<"head_mix_grad", [Pure]> {
  let summary = "vector-Jacobian product of attn.head_mix";
  let description = [{
    The gradients of `L = sum_{h, j <= i + off} grad[h]_ij out[h]_ij`,
    `off = S - T`, with `out` as on `attn.head_mix` (outputs right of the
    diagonal are constants; `grad` there is never read). With
    `g0 = (h / c_h) c_h` and `x0` the input with `-inf` read as 0:

    * `dweight[h, m] = sum_{n, i, j <= i + off} grad[n, h, i, j] * x0[n, g0 + m, i, j]`
    * `dx[n, g0 + m, i, j] = sum_{h in the group of g0} weight[h, m] * grad[n, h, i, j]`
      for `j <= i + off` and a finite input; 0 where the input is `-inf`
      or right of the diagonal.
    * With `cu_seqlens`, as on `attn.head_mix`: cells left of the row's
      sequence start are outside too.

    Both results are f32: `dx` has the score map's shape, `dweight` the
    weight's `[H, c_h]`.

    ```mlir
    %dx, %dw = attn.head_mix_grad post %p, %w, %dm
        : (tensor<?x16x?x?xf32>, tensor<16x4xf32>, tensor<?x16x?x?xf32>)
        -> (tensor<?x16x?x?xf32>, tensor<16x4xf32>)
    ```
  }];
  let arguments = (ins Attn_Stage:$stage, Attn_ScoreMap:$input,
                       Attn_F32Tensor2D:$weight, Attn_ScoreMap:$grad,
                       Optional<Attn_CuSeqlens>:$cu_seqlens);
  let results = (outs Attn_ScoreMap:$dx, Attn_F32Tensor2D:$dweight);
  let assemblyFormat = [{
    $stage $input `,` $weight `,` $grad (`cu_seqlens` `(` $cu_seqlens^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_OPS_TD
