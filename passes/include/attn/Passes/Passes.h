//===- Passes.h - attn passes and pipelines ---------------------*- C++ -*-===//

#ifndef ATTN_PASSES_PASSES_H
#define ATTN_PASSES_PASSES_H

#include "attn/Dialect/AttnBlockDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Passes/Passes.h.inc"

/// Patterns rewriting attn.attention into the chain of ops it means.
void populateExpandAttentionPatterns(RewritePatternSet &patterns);

/// attn (tensors) -> reference loops -> bufferized -> LLVM dialect, ready for
/// the ExecutionEngine. Functions get the C interface (`_mlir_ciface_*`).
void buildReferenceToLLVMPipeline(OpPassManager &pm);

/// The CPU pipeline: attn-fuse, fused attention through the block program
/// (program instances over OpenMP threads when `threads`), the reference
/// lowering for the rest, down to the LLVM dialect.
void buildCPUPipeline(OpPassManager &pm, bool threads);

/// Registers the named pipelines (`attn-reference-to-llvm`, ...) for attn-opt.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PASSES_PASSES_H
