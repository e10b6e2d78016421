//===- RefBuilder.h - loop-nest building blocks for the reference -*- C++
//-*-===//
//
// The reference lowering spells every attn op as plain loops over buffers.
// These helpers keep each op's lowering close to its formula: element loads
// widen to f32, stores narrow to the buffer's type, and loops are scf.for
// from 0 with step 1.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_REFBUILDER_H
#define ATTN_PASSES_REFBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::attn {

class RefBuilder {
public:
  RefBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() { return loc; }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value f64(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value negInf() { return f32(-std::numeric_limits<double>::infinity()); }

  Value dim(Value mem, int64_t i) {
    return memref::DimOp::create(b, loc, mem, i);
  }

  /// Loads an element widened to f32 (f16/bf16 are extended).
  Value load(Value mem, ValueRange ivs) {
    Value v = memref::LoadOp::create(b, loc, mem, ivs);
    if (!v.getType().isF32() && isa<FloatType>(v.getType()))
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return v;
  }
  /// Stores an f32 value, narrowed to the buffer's element type.
  void store(Value v, Value mem, ValueRange ivs) {
    Type elt = cast<MemRefType>(mem.getType()).getElementType();
    if (elt != v.getType())
      v = arith::TruncFOp::create(b, loc, elt, v);
    memref::StoreOp::create(b, loc, v, mem, ivs);
  }

  /// Allocates a buffer of `type`'s shape, taking each dynamic size from
  /// `dynSizes` in order.
  Value alloc(MemRefType type, ValueRange dynSizes) {
    return memref::AllocOp::create(b, loc, type, dynSizes);
  }

  /// for iv in [0, ub): body(iv)
  void loop(Value ub, llvm::function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, idx(0), ub, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    body(forOp.getInductionVar());
  }
  /// for iv in [lb, ub): body(iv)
  void loop(Value lb, Value ub, llvm::function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, lb, ub, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    body(forOp.getInductionVar());
  }
  /// Perfect nest over [0, ubs[0]) x [0, ubs[1]) x ...
  void nest(ArrayRef<Value> ubs, llvm::function_ref<void(ValueRange)> body) {
    SmallVector<Value> ivs;
    std::function<void(size_t)> rec = [&](size_t level) {
      if (level == ubs.size())
        return body(ivs);
      loop(ubs[level], [&](Value iv) {
        ivs.push_back(iv);
        rec(level + 1);
        ivs.pop_back();
      });
    };
    rec(0);
  }
  /// acc = init; for iv in [lb, ub): acc = body(iv, acc); returns acc.
  Value reduce(Value lb, Value ub, Value init,
               llvm::function_ref<Value(Value, Value)> body) {
    auto forOp = scf::ForOp::create(
        b, loc, lb, ub, idx(1), ValueRange{init},
        [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
          Value next = body(iv, args[0]);
          scf::YieldOp::create(nb, loc, next);
        });
    return forOp.getResult(0);
  }
  Value reduce(Value ub, Value init,
               llvm::function_ref<Value(Value, Value)> body) {
    return reduce(idx(0), ub, init, body);
  }
  /// A reduction over the perfect nest [0, ubs[0]) x [0, ubs[1]) x ...
  Value reduceNest(ArrayRef<Value> ubs, Value init,
                   llvm::function_ref<Value(ValueRange, Value)> body) {
    SmallVector<Value> ivs;
    std::function<Value(size_t, Value)> rec = [&](size_t level, Value acc) {
      if (level == ubs.size())
        return body(ivs, acc);
      return reduce(ubs[level], acc, [&](Value iv, Value inner) {
        ivs.push_back(iv);
        Value next = rec(level + 1, inner);
        ivs.pop_back();
        return next;
      });
    };
    return rec(0, init);
  }
  /// mem[ivs] += v (f32 accumulation in an f32 buffer).
  void accumulate(Value v, Value mem, ValueRange ivs) {
    store(add(load(mem, ivs), v), mem, ivs);
  }

  // Scalar arithmetic (float unless stated).
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value log(Value x) { return math::LogOp::create(b, loc, x); }
  Value maxf(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value sigmoid(Value x) {
    Value one = x.getType().isF64() ? f64(1.0) : f32(1.0);
    return div(one, add(one, exp(arith::NegFOp::create(b, loc, x))));
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value cmpf(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  /// a + w x, but `a` where w is exactly 0 (a masked cell's probability or
  /// gradient): x may hold NaN or inf there (docs/input-limits.md,
  /// "Non-finite values").
  Value addSkippingZero(Value a, Value w, Value x) {
    Value zero = w.getType().isF64() ? f64(0.0) : f32(0.0);
    return select(cmpf(arith::CmpFPredicate::OEQ, w, zero), a,
                  add(a, mul(w, x)));
  }
  Value toF64(Value x) {
    return arith::ExtFOp::create(b, loc, b.getF64Type(), x);
  }
  Value toF32(Value x) {
    return arith::TruncFOp::create(b, loc, b.getF32Type(), x);
  }

  // Index arithmetic.
  Value iadd(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value isub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value imul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value idiv(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value cmpi(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value clamp(Value x, Value lo, Value hi) {
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, x, lo),
                                  hi);
  }
  /// index -> f64 (through i64).
  Value indexToF64(Value x) {
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), x);
    return arith::SIToFPOp::create(b, loc, b.getF64Type(), i);
  }

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::attn

#endif // ATTN_PASSES_REFBUILDER_H
