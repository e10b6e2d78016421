//===- ShapeSpecialize.h - verify a program at concrete shapes --*- C++ -*-===//

#ifndef ATTN_RUNTIME_SHAPESPECIALIZE_H
#define ATTN_RUNTIME_SHAPESPECIALIZE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace attn {

/// Re-runs the verifier of every attn op of `func` as if its arguments had
/// the static `shapes`. Compiled kernels are dynamic in B, H, T and S, so
/// relations between dynamic sizes (GQA divisibility, T <= S, a group size
/// dividing H, matching sequence lengths) can only be checked once the
/// inputs are known; this reuses the op verifiers for that instead of a
/// second copy of their rules. With `resultShapes`, also stores the shape
/// of every result (in result order) at those input shapes, refined
/// through the attn ops; one left empty when a dynamic dim of it stays
/// unknown (that result does not come from an attn op).
llvm::Error
verifyAtShapes(mlir::func::FuncOp func,
               const std::vector<std::vector<int64_t>> &shapes,
               std::vector<std::vector<int64_t>> *resultShapes = nullptr);

} // namespace attn

#endif // ATTN_RUNTIME_SHAPESPECIALIZE_H
