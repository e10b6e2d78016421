//===- Passes.td - attn passes -----------------------------*- tablegen -*-===//

#ifndef ATTN_PASSES_TD
#define ATTN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerToReference : Pass<"attn-lower-reference", "ModuleOp"> {
  let summary = "Lower every attn op to its naive reference loops";
  let description = [{
    The readable executable semantics of the dialect: every attn op becomes
    loop nests (scf) over buffers (memref) with arith/math bodies that follow
    the formulas of the op documentation literally, materialising score maps
    `[B, H, T, S]`. Operands are read through `bufferization.to_buffer` and
    results are fresh buffers wrapped by `bufferization.to_tensor`, so the
    module then bufferizes with `one-shot-bufferize`. This is the baseline
    fused kernels are checked against at moderate sizes, not a fast path.

    `attn.attention` is expanded into the unfused chain first (its
    documented meaning), then lowered op by op.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def AttnExpandAttention : Pass<"attn-expand-attention", "ModuleOp"> {
  let summary = "Expand attn.attention into the chain of attn ops it means";
  let description = [{
    The inverse of `attn-fuse`: rewrites every `attn.attention` into
    `[rope] -> scores -> [kq_conv pre] -> [head_mix pre] -> softmax ->
    [kq_conv post] -> [head_mix post] -> weighted_sum -> [head_norm]`.
    The reference lowering runs it first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_PASSES_TD
