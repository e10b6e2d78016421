//===- ShapeCheck.h - symbolic shape checking for verifiers -----*- C++ -*-===//
//
// The attn ops relate their operands through a handful of named extents (B,
// Hq, Hk, T, S, D, Dv, ...), any of which may be dynamic. ShapeEnv binds the
// static sizes it sees to those names and reports a contradiction naming the
// operand, the expected shape and where the conflicting size came from, so a
// user reads "'w' must be [B, Hk, S, D] = [?, 2, ?, 64]" rather than a bare
// type mismatch.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_SHAPECHECK_H
#define ATTN_DIALECT_SHAPECHECK_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::attn {

class ShapeEnv {
public:
  explicit ShapeEnv(Operation *op) : op(op) {}

  /// Binds the dims of operand `name` (of ranked tensor type `type`) to the
  /// extents `dims`; an entry that is an integer literal ("1") is a fixed
  /// size. Emits an error on `op` and fails on a rank or size mismatch.
  LogicalResult bind(StringRef name, Type type, ArrayRef<StringRef> dims);

  /// The static value bound to `sym`, or ShapedType::kDynamic.
  int64_t get(StringRef sym) const;

  /// "[B, Hk, S, D] = [?, 2, ?, 64]" with the current bindings.
  std::string describe(ArrayRef<StringRef> dims) const;

private:
  Operation *op;
  llvm::StringMap<int64_t> values;
  llvm::StringMap<std::string> origin;
};

/// Fails with "<what> must be static" when `value` is dynamic, and with
/// "<what> must be >= 1" when it is 0 (head dims, kernel sizes).
LogicalResult requireStatic(Operation *op, int64_t value, StringRef what);

} // namespace mlir::attn

#endif // ATTN_DIALECT_SHAPECHECK_H
