//===- RowOpsToCPU.h - CPU lowering of the PaTH tile ops ---------*- C++
//-*-===//
//
// Patterns of attn-block-to-cpu for the ops added for PaTH (row access
// inside a tile); RowOpsToCPU.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_ROWOPSTOCPU_H
#define ATTN_CODEGEN_CPU_ROWOPSTOCPU_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {

/// attn_block.extract_row / insert_row -> tensor.extract_slice /
/// insert_slice of one row (which bufferize to a subview read / an in-place
/// row write of the tile's buffer).
void populateRowOpsToCPUPatterns(RewritePatternSet &patterns);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_ROWOPSTOCPU_H
