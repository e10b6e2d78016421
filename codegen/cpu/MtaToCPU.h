//===- MtaToCPU.h - CPU lowering of the block ops MTA added -----*- C++ -*-===//

#ifndef ATTN_CODEGEN_CPU_MTATOCPU_H
#define ATTN_CODEGEN_CPU_MTATOCPU_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {

/// attn_block.stencil as row-vector FMAs, and in_bounds loads/stores as row
/// copies (tried before the masked element-wise lowering).
void populateMtaToCPUPatterns(RewritePatternSet &patterns);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_MTATOCPU_H
