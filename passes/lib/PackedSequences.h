//===- PackedSequences.h - cu_seqlens seen from a tile ----------*- C++ -*-===//
//
// Packed sequences (cu_seqlens: N + 1 nondecreasing i32 offsets) as the
// flash kernels see them from a tile of consecutive positions: each
// position's sequence bounds, read with scalar loads only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_PACKEDSEQUENCES_H
#define ATTN_PASSES_PACKEDSEQUENCES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {

/// The number of offsets among cu[0, len) that are <= x (cu nondecreasing):
/// a binary search; every index it reads lies in [0, len).
inline Value countAtMost(OpBuilder &b, Location loc, Value cu, Value len,
                         Value x) {
  Type index = b.getIndexType();
  auto cIdx = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  auto search = scf::WhileOp::create(
      b, loc, TypeRange{index, index}, ValueRange{cIdx(b, 0), len},
      [&](OpBuilder &nb, Location l, ValueRange lh) {
        Value more = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                           lh[0], lh[1]);
        scf::ConditionOp::create(nb, l, more, lh);
      },
      [&](OpBuilder &nb, Location l, ValueRange lh) {
        Value mid = arith::DivUIOp::create(
            nb, l, arith::AddIOp::create(nb, l, lh[0], lh[1]), cIdx(nb, 2));
        Value at = arith::IndexCastOp::create(
            nb, l, index, memref::LoadOp::create(nb, l, cu, mid));
        Value le =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, at, x);
        Value next = arith::AddIOp::create(nb, l, mid, cIdx(nb, 1));
        scf::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, le, next, lh[0]),
                       arith::SelectOp::create(nb, l, le, lh[1], mid)});
      });
  return search.getResult(0);
}

/// The index of the sequence that holds position `pos`: the last of the
/// N = dim(cu) - 1 starts cu[0, N) at or before it (0 before cu[0]).
inline Value sequenceOf(OpBuilder &b, Location loc, Value cu, Value pos) {
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value numSeqs = arith::MaxSIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, memref::DimOp::create(b, loc, cu, 0), c1),
      c1);
  return arith::MaxSIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, countAtMost(b, loc, cu, numSeqs, pos), c1),
      arith::ConstantIndexOp::create(b, loc, 0));
}

/// cu[i] as an index.
inline Value offsetAt(OpBuilder &b, Location loc, Value cu, Value i) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                    memref::LoadOp::create(b, loc, cu, i));
}

/// The sequences of the positions [pos0, pos0 + n): `starts` and `ends`
/// hold each position's sequence bounds [start, end), as i64 tiles shaped
/// and laid out like `positions` (the positions themselves; `ends` only
/// with `withEnds`: the forward's rows need only their starts); the
/// scalars are the first and last positions' bounds. A binary search finds the
/// first and last positions' sequences, then one pair of selects per
/// sequence that starts inside the range. Bad offsets give wrong bounds,
/// never a load outside cu.
struct SequenceBounds {
  Value starts, ends;
  Value firstStart, firstEnd, lastStart, lastEnd;

  /// Whether the other side's tile of positions [other0, other0 + n) may
  /// hold one outside some row's sequence: before the last row's start
  /// (`byStarts`) or at or after the first row's end (`byEnds`). Uniform
  /// over the program, so that the tiles where it fails skip the per-cell
  /// test.
  Value mayCross(OpBuilder &b, Location loc, Value other0, int64_t n,
                 bool byStarts, bool byEnds) const {
    assert((byStarts || byEnds) && "mayCross tests starts, ends or both");
    Value cross;
    if (byStarts)
      cross = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, other0,
                                    lastStart);
    if (byEnds) {
      Value end = arith::AddIOp::create(
          b, loc, other0, arith::ConstantIndexOp::create(b, loc, n));
      Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end,
                                         firstEnd);
      cross = cross ? arith::OrIOp::create(b, loc, cross, past) : past;
    }
    return cross;
  }
};
inline SequenceBounds sequenceBounds(OpBuilder &b, Location loc, Value cu,
                                     Value pos0, int64_t n, Value positions,
                                     bool withEnds = true) {
  auto cIdx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto tileType = cast<RankedTensorType>(positions.getType());
  auto splat = [&](OpBuilder &ob, Value i) -> Value {
    Value x = arith::IndexCastOp::create(ob, loc, ob.getI64Type(), i);
    return tensor::SplatOp::create(ob, loc, tileType, x);
  };
  Value c1 = cIdx(1);
  Value first = sequenceOf(b, loc, cu, pos0);
  Value lastPos = arith::AddIOp::create(b, loc, pos0, cIdx(n - 1));
  // The sequences past `first` that start inside the range: [first + 1,
  // upTo), upTo = last + 1.
  Value last =
      arith::MaxSIOp::create(b, loc, sequenceOf(b, loc, cu, lastPos), first);
  Value upTo = arith::AddIOp::create(b, loc, last, c1);
  SequenceBounds s;
  s.firstStart = offsetAt(b, loc, cu, first);
  s.firstEnd = offsetAt(b, loc, cu, arith::AddIOp::create(b, loc, first, c1));
  s.lastStart = offsetAt(b, loc, cu, last);
  s.lastEnd = offsetAt(b, loc, cu, upTo);
  SmallVector<Value> init = {splat(b, s.firstStart)};
  if (withEnds)
    init.push_back(splat(b, s.firstEnd));
  auto loop = scf::ForOp::create(
      b, loc, arith::AddIOp::create(b, loc, first, c1), upTo, c1, init,
      [&](OpBuilder &nb, Location, Value i, ValueRange carry) {
        Value start = splat(nb, offsetAt(nb, loc, cu, i));
        Value after = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::sge,
                                            positions, start);
        SmallVector<Value> next = {
            arith::SelectOp::create(nb, loc, after, start, carry[0])};
        if (withEnds) {
          Value end = splat(
              nb, offsetAt(nb, loc, cu, arith::AddIOp::create(nb, loc, i, c1)));
          next.push_back(
              arith::SelectOp::create(nb, loc, after, end, carry[1]));
        }
        scf::YieldOp::create(nb, loc, next);
      });
  s.starts = loop.getResult(0);
  if (withEnds)
    s.ends = loop.getResult(1);
  return s;
}

} // namespace mlir::attn

#endif // ATTN_PASSES_PACKEDSEQUENCES_H
