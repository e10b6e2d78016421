//===- TileBuilder.h - tile-level IR builder for block kernels --*- C++ -*-===//
//
// Thin wrappers over the attn_block, arith, math, linalg and tensor builders
// that keep the kernels of every attn.attention lowering (flash, PaTH, MTA)
// readable. Shared by the per-algorithm lowerings of attn-to-block.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_TILEBUILDER_H
#define ATTN_PASSES_TILEBUILDER_H

#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {

namespace blk = mlir::attn_block;

/// Where a flash-attention program instance sits (grid (query tiles,
/// B*Hq)): its batch, query head and KV head (GQA), the head counts, T, S,
/// the first query row and that row's key position (queries are the last T
/// of the S positions).
struct FlashProgram {
  Value pidM, hq, hk, tLen, sLen, bIdx, h, kh, off, row0, qPos0;
};

/// Builds tile-level IR: thin wrappers that keep the kernel readable.
class TileBuilder {
public:
  TileBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// Program `count - 1 - pid` of `count`: the GPU forms number their
  /// query tiles heaviest first (most keys under a causal mask), so that the
  /// last wave of blocks is made of short ones rather than of the longest.
  Value heaviestFirst(Value pid, Value count) {
    return arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, count, idx(1)), pid);
  }

  /// The program indices of a flash kernel over q [B, Hq, T, D] and
  /// k [B, Hk, S, D] with `bm` query rows per program; `reversed` numbers
  /// the query tiles heaviest first (see heaviestFirst).
  FlashProgram flashProgram(Value q, Value k, int64_t bm,
                            bool reversed = false) {
    FlashProgram p;
    p.pidM = blk::ProgramIdOp::create(b, loc, 0);
    Value pidBH = blk::ProgramIdOp::create(b, loc, 1);
    p.hq = memref::DimOp::create(b, loc, q, 1);
    p.hk = memref::DimOp::create(b, loc, k, 1);
    p.tLen = memref::DimOp::create(b, loc, q, 2);
    p.sLen = memref::DimOp::create(b, loc, k, 2);
    if (reversed)
      p.pidM = heaviestFirst(
          p.pidM, arith::CeilDivUIOp::create(b, loc, p.tLen, idx(bm)));
    p.bIdx = arith::DivUIOp::create(b, loc, pidBH, p.hq);
    p.h = arith::RemUIOp::create(b, loc, pidBH, p.hq);
    p.kh = arith::DivUIOp::create(b, loc, p.h,
                                  arith::DivUIOp::create(b, loc, p.hq, p.hk));
    p.off = arith::SubIOp::create(b, loc, p.sLen, p.tLen);
    return flashProgramAt(p, p.pidM, bm);
  }

  /// `p` moved to query tile `tile` (FlashRows::redo's programs walk
  /// several).
  FlashProgram flashProgramAt(FlashProgram p, Value tile, int64_t bm) {
    p.pidM = tile;
    p.row0 = arith::MulIOp::create(b, loc, tile, idx(bm));
    p.qPos0 = arith::AddIOp::create(b, loc, p.off, p.row0);
    return p;
  }

  /// The keys [start, end) a flash program's walk visits: causal tile
  /// skipping stops it after the diagonal (`mask` not none), a sliding
  /// window of `window` keys starts it at the window of the first query.
  /// `zero` is the kernel's index 0 (the walk's start without a window).
  std::pair<Value, Value> flashKeyRange(const FlashProgram &p, MaskKind mask,
                                        int64_t window, int64_t bm,
                                        Value zero) {
    Value end = p.sLen;
    if (mask != MaskKind::none)
      end = arith::MinSIOp::create(
          b, loc, p.sLen, arith::AddIOp::create(b, loc, p.qPos0, idx(bm)));
    Value start = zero;
    if (mask == MaskKind::sliding_window)
      start = arith::MaxSIOp::create(
          b, loc, zero,
          arith::SubIOp::create(b, loc, p.qPos0, idx(window - 1)));
    return {start, end};
  }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// A tile of `shape` filled with the scalar `v`.
  Value fill(ArrayRef<int64_t> shape, Value v) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, v.getType());
    return linalg::FillOp::create(b, loc, ValueRange{v}, ValueRange{empty})
        .getResult(0);
  }
  Value splat(ArrayRef<int64_t> shape, Type elt, double v) {
    return fill(shape,
                arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, v)));
  }
  Value splatI64(ArrayRef<int64_t> shape, Value scalarIndex) {
    return fill(
        shape, arith::IndexCastOp::create(b, loc, b.getI64Type(), scalarIndex));
  }
  Value load(Value mem, ValueRange indices, ArrayRef<int64_t> dims,
             ArrayRef<int64_t> shape) {
    Type elt = cast<MemRefType>(mem.getType()).getElementType();
    return blk::LoadOp::create(b, loc, RankedTensorType::get(shape, elt), mem,
                               indices, b.getDenseI64ArrayAttr(dims),
                               b.getF64FloatAttr(0.0));
  }
  Value toF32(Value t) { return convert(t, b.getF32Type()); }
  Value convert(Value t, Type elt) {
    auto type = cast<RankedTensorType>(t.getType());
    if (type.getElementType() == elt)
      return t;
    auto to = type.clone(elt);
    if (elt.getIntOrFloatBitWidth() > type.getElementTypeBitWidth())
      return arith::ExtFOp::create(b, loc, to, t);
    return arith::TruncFOp::create(b, loc, to, t);
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value maxf(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value exp2(Value x) { return math::Exp2Op::create(b, loc, x); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value cmpf(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value cmpi(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value reduce(blk::ReduceKind kind, Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    auto out =
        RankedTensorType::get({type.getDimSize(0)}, type.getElementType());
    return blk::ReduceOp::create(b, loc, out, kind, t, 1, Value());
  }
  /// A [n] tile spread over a [rows, cols] tile: axis 1 repeats it along
  /// columns (a per-row value), axis 0 along rows (a per-column value).
  Value bcast(Value t, int64_t axis, int64_t rows, int64_t cols) {
    Type elt = cast<RankedTensorType>(t.getType()).getElementType();
    return blk::BroadcastOp::create(
        b, loc, RankedTensorType::get({rows, cols}, elt), t, axis);
  }
  /// A tile of `type` (a layout included) filled with `v`: tensor.splat
  /// where the type has a layout (the GPU form writes its tile constants
  /// so), else as fill() does.
  Value splatLike(RankedTensorType type, double v) {
    Value c = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(type.getElementType(), v));
    if (type.getEncoding())
      return tensor::SplatOp::create(b, loc, type, c);
    return fill(type.getShape(), c);
  }
  /// s + scale * (G_i - G_j): FoX's bias on the score tile `s` [M, N] (f32,
  /// base-2 logits) from G at its rows (`gi` [M]) and keys (`gj` [N]). The
  /// difference is taken in G's type (f64 keeps the digits that cancel) and
  /// then rounded to f32; tiles keep s's layout (in the GPU form gi and gj
  /// are s's row and column slices). A scale of 1 or -1 multiplies nothing.
  Value addFoxBias(Value s, Value gi, Value gj, double scale) {
    auto sType = cast<RankedTensorType>(s.getType());
    auto gType =
        sType.clone(cast<RankedTensorType>(gi.getType()).getElementType());
    Value colG = blk::BroadcastOp::create(b, loc, gType, gj, 0);
    Value rowG = blk::BroadcastOp::create(b, loc, gType, gi, 1);
    Value bias = scale == -1.0 ? sub(colG, rowG) : sub(rowG, colG);
    Value factor =
        scale == 1.0 || scale == -1.0 ? Value() : splatLike(sType, scale);
    bias = convert(bias, sType.getElementType());
    if (factor)
      bias = mul(bias, factor);
    return add(s, bias);
  }
  Value iota(Value start, int64_t n) {
    return blk::IotaOp::create(
        b, loc, RankedTensorType::get({n}, b.getI64Type()), start);
  }
  /// Whether query positions `qPos` see keys `keys` (i64 tiles of one shape
  /// and layout): the key exists (< `sLen`) and the mask lets the query see
  /// it (causal: key <= query; a sliding window also key > query - window).
  /// The flash forward's masked tiles and its backward's tiles.
  Value keyVisible(Value keys, Value qPos, Value sLen, MaskKind mask,
                   int64_t window) {
    auto type = cast<RankedTensorType>(keys.getType());
    auto splatIdx = [&](Value index) -> Value {
      Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
      return tensor::SplatOp::create(b, loc, type, i);
    };
    Value valid = cmpi(arith::CmpIPredicate::slt, keys, splatIdx(sLen));
    if (mask != MaskKind::none)
      valid = andi(valid, cmpi(arith::CmpIPredicate::sle, keys, qPos));
    if (mask == MaskKind::sliding_window) {
      Value lo = arith::SubIOp::create(b, loc, qPos, splatIdx(idx(window)));
      valid = andi(valid, cmpi(arith::CmpIPredicate::sgt, keys, lo));
    }
    return valid;
  }

  OpBuilder &b;
  Location loc;
};

/// `dot`, an attn_block.dot's result, marked skip_zero_a: the product of
/// probabilities and values, where a masked key's exact-zero probability
/// must skip its value even where that is NaN or inf.
inline Value skippingZeroA(Value dot) {
  dot.getDefiningOp<blk::DotOp>().setSkipZeroA(true);
  return dot;
}

/// The identity-layout memref type of a ranked tensor value.
inline MemRefType bufferTypeOf(Value tensor) {
  auto t = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// A buffer for `result`, a tensor whose leading dims are [B, H, T] (dynamic
/// sizes from `bDim`, `h`, `tLen`; the rest static), that a lowering's
/// kernel writes; of element type `elt` where given (a scratch of its shape,
/// or of its leading `rank` dims where given).
inline Value allocResult(OpBuilder &b, Location loc, Value result, Value bDim,
                         Value h, Value tLen, Type elt = {}, int64_t rank = 0) {
  MemRefType outType = bufferTypeOf(result);
  if (elt || rank)
    outType = MemRefType::get(rank ? outType.getShape().take_front(rank)
                                   : outType.getShape(),
                              elt ? elt : outType.getElementType());
  SmallVector<Value> dyn;
  Value sizes[3] = {bDim, h, tLen};
  for (int64_t i = 0; i < 3; ++i)
    if (outType.isDynamicDim(i))
      dyn.push_back(sizes[i]);
  return memref::AllocOp::create(b, loc, outType, dyn);
}

/// The buffer of `op`'s result [B, Hq, T, Dv] (allocResult).
inline Value allocResult(OpBuilder &b, Location loc, Operation *op, Value bDim,
                         Value hq, Value tLen) {
  return allocResult(b, loc, op->getResult(0), bDim, hq, tLen);
}

} // namespace mlir::attn

#endif // ATTN_PASSES_TILEBUILDER_H
