//===- Reverse.h - reverse mode over a list of attn ops ---------*- C++ -*-===//
//
// The sweep attn-grad runs over a function's op chain, shared with the
// reference meaning of attn.attention_grad (ExpandAttention.cpp), which
// runs it over the expanded chain of one attn.attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_REVERSE_H
#define ATTN_PASSES_REVERSE_H

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// The cotangents the VJPs of `ops` (in program order) give the values they
/// use, with `out`'s cotangent `dOut`; each VJP is emitted at `b`. An op
/// whose result receives no cotangent is skipped. One without a
/// VJPOpInterface asks `custom` for the cotangents of its operands, and
/// fails with an error on the op where that fails too.
FailureOr<DenseMap<Value, Value>> reverseSweep(
    OpBuilder &b, Location loc, ArrayRef<Operation *> ops, Value out,
    Value dOut,
    function_ref<FailureOr<SmallVector<Value>>(Operation *, Value)> custom =
        nullptr);

/// Zeros of `like`'s type: the gradient of an argument the result does not
/// depend on.
Value zerosLike(OpBuilder &b, Location loc, Value like);

/// The properties of attn.attention_grad for the operands of the
/// attn.attention with properties `fwd` (its attributes, and one operand
/// each for out, lse and the cotangent after its operands).
AttentionGradOp::Properties gradProperties(const AttentionOp::Properties &fwd);

/// The properties of the attn.attention whose VJP an attn.attention_grad
/// with properties `grad` is (its attributes and leading operands).
AttentionOp::Properties
forwardProperties(const AttentionGradOp::Properties &grad);

} // namespace mlir::attn

#endif // ATTN_PASSES_REVERSE_H
