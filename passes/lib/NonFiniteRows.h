//===- NonFiniteRows.h - rows that met a NaN, written again ----*- C++ -*-===//
//
// The pieces of FlashRows (AttentionToBlock.h): the main kernel marks the
// rows of its output that came out non-finite, and the redo kernel's
// programs ask whether any of their rows is marked.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_NONFINITEROWS_H
#define ATTN_PASSES_NONFINITEROWS_H

#include "TileBuilder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {

/// Stores at `marks[at]` ([B, H, T] f32, dims {2}) each row's count of
/// non-finite elements of `o` ([rows, cols] f32), the row sums reduced in
/// `o`'s row slice and stored from `rowEnc` (the layout the kernel stores
/// row statistics from; the same registers).
inline void markNonFiniteRows(OpBuilder &b, Location loc, Value o,
                              Attribute rowEnc, Value marks, ValueRange at) {
  TileBuilder t(b, loc);
  auto type = cast<RankedTensorType>(o.getType());
  auto mma = type.getEncoding();
  auto splat = [&](double v) { return t.splatLike(type, v); };
  // x - x is 0 for a finite x, NaN otherwise.
  Value bad = t.cmpf(arith::CmpFPredicate::UNE, t.sub(o, o), splat(0.0));
  auto rows =
      RankedTensorType::get({type.getDimSize(0)}, type.getElementType(),
                            blk::SliceLayoutAttr::get(b.getContext(), 1, mma));
  Value count =
      blk::ReduceOp::create(b, loc, rows, blk::ReduceKind::sum,
                            t.select(bad, splat(1.0), splat(0.0)), 1, Value());
  if (rows.getEncoding() != rowEnc)
    count = blk::ConvertLayoutOp::create(
        b, loc,
        RankedTensorType::get(rows.getShape(), rows.getElementType(), rowEnc),
        count);
  blk::StoreOp::create(b, loc, count, marks, at, b.getDenseI64ArrayAttr({2}));
}

/// Whether any of the rows [at[2], at[2] + rows) of `marks` ([B, H, T]
/// f32) is marked: their sum, one scan of a blocked tile over `warps` warps
/// whose total every thread holds, so the answer is uniform over the
/// program.
inline Value anyRowMarked(OpBuilder &b, Location loc, Value marks,
                          ValueRange at, int64_t rows, int64_t warps) {
  MLIRContext *ctx = b.getContext();
  TileBuilder t(b, loc);
  const int64_t threads = 32 * warps;
  const int64_t n = threads * ((rows + threads - 1) / threads);
  auto blocked =
      blk::BlockedLayoutAttr::get(ctx, {n / threads}, {32}, {warps}, {0});
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  auto tile = [&](Type e) { return RankedTensorType::get({n}, e, blocked); };
  Value m =
      blk::LoadOp::create(b, loc, tile(f32), marks, at,
                          b.getDenseI64ArrayAttr({2}), b.getF64FloatAttr(0.0));
  if (n != rows) {
    Value limit = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(rows));
    Value mine = t.cmpi(arith::CmpIPredicate::slt,
                        blk::IotaOp::create(b, loc, tile(i64), t.idx(0)),
                        tensor::SplatOp::create(b, loc, tile(i64), limit));
    m = t.select(mine, m, t.splatLike(tile(f32), 0.0));
  }
  Value totals = blk::LocalAllocOp::create(
      b, loc,
      blk::SharedBufferType::get(
          ctx, {warps}, f32, blk::SharedLayoutAttr::get(ctx, 1, 1, 1, {0})));
  Value cum = blk::ScanOp::create(b, loc, m, totals);
  Value total =
      tensor::ExtractOp::create(b, loc, cum, ValueRange{t.idx(n - 1)});
  return arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT, total,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
}

/// The query rows one program of a redo kernel covers: one load and one
/// scan of their marks, so that with finite inputs the kernel is a few
/// programs that return at once, not one per query tile (bench/RESULTS.md,
/// "the cost of the second kernel").
constexpr int64_t kRedoRowsPerProgram = 1024;

/// The query tiles of `bm` rows one redo program covers.
inline int64_t redoTilesPerProgram(int64_t bm) {
  return std::max<int64_t>(1, kRedoRowsPerProgram / bm);
}

/// Where a redo program's walk over its tiles sits: `tile`, the index of a
/// marked tile (in [0, tiles)), whose body the builder is left in; the
/// kernel goes on after `walk`.
struct RedoTile {
  Value tile;
  Operation *walk;
};

/// Opens a FlashRows::redo program (grid x: ceil(tiles /
/// redoTilesPerProgram(bm))) for head `h` of batch `bIdx`: after the
/// main kernel's marks are visible (`wait`: a dependent launch), the marks
/// of its tiles' rows are scanned once; where one is set, its tiles are
/// walked, each checked again and, if marked, written by the body the
/// caller builds. `row0Of(tile)` is a tile's first query row (negative
/// rows and rows past T read as unmarked).
inline RedoTile openRedoTile(OpBuilder &b, Location loc, Value marks,
                             Value bIdx, Value h, Value tiles, int64_t bm,
                             int64_t warps, bool wait,
                             function_ref<Value(Value)> row0Of) {
  TileBuilder t(b, loc);
  const int64_t per = redoTilesPerProgram(bm);
  if (wait)
    blk::GriddepWaitOp::create(b, loc);
  Value first = arith::MulIOp::create(
      b, loc, blk::ProgramIdOp::create(b, loc, 0), t.idx(per));
  auto any = scf::IfOp::create(
      b, loc, TypeRange{},
      anyRowMarked(b, loc, marks, {bIdx, h, row0Of(first)}, per * bm, warps),
      false);
  b.setInsertionPoint(any.thenBlock()->getTerminator());
  auto walk = scf::ForOp::create(b, loc, t.idx(0), t.idx(per), t.idx(1));
  b.setInsertionPoint(walk.getBody()->getTerminator());
  // The scan's totals (and the body's buffers) are reused by the next
  // tile once every warp is done with them.
  blk::BarrierOp::create(b, loc);
  b.setInsertionPoint(walk.getBody()->getTerminator()->getPrevNode());
  Value tile = arith::AddIOp::create(b, loc, first, walk.getInductionVar());
  Value marked = arith::AndIOp::create(
      b, loc, t.cmpi(arith::CmpIPredicate::ult, tile, tiles),
      anyRowMarked(b, loc, marks, {bIdx, h, row0Of(tile)}, bm, warps));
  auto body = scf::IfOp::create(b, loc, TypeRange{}, marked, false);
  b.setInsertionPoint(body.thenBlock()->getTerminator());
  return {tile, any};
}

/// FlashRows::redo: `o` (a [rows, cols] output tile in the output's type,
/// to be stored at `out[at]`, dims {2, 3}) where the main kernel marked
/// the row in `marks` (at at's first three indices), else what the main
/// kernel stored there, read back: a row it did not mark stays bit for bit.
/// `rowEnc` is the layout the kernel loads row statistics into.
inline Value keepUnmarkedRows(OpBuilder &b, Location loc, Value o, Value out,
                              ValueRange at, Value marks, Attribute rowEnc) {
  TileBuilder t(b, loc);
  auto type = cast<RankedTensorType>(o.getType());
  Value before =
      blk::LoadOp::create(b, loc, type, out, at, b.getDenseI64ArrayAttr({2, 3}),
                          b.getF64FloatAttr(0.0));
  Type f32 = b.getF32Type();
  auto rowType = RankedTensorType::get({type.getDimSize(0)}, f32, rowEnc);
  Value m =
      blk::LoadOp::create(b, loc, rowType, marks, at.take_front(3),
                          b.getDenseI64ArrayAttr({2}), b.getF64FloatAttr(0.0));
  auto slice = blk::SliceLayoutAttr::get(b.getContext(), 1, type.getEncoding());
  if (slice != rowEnc)
    m = blk::ConvertLayoutOp::create(
        b, loc, RankedTensorType::get(rowType.getShape(), f32, slice), m);
  auto wide = RankedTensorType::get(type.getShape(), f32, type.getEncoding());
  Value marked = t.cmpf(arith::CmpFPredicate::OGT,
                        blk::BroadcastOp::create(b, loc, wide, m, 1),
                        t.splatLike(wide, 0.0));
  return t.select(marked, o, before);
}

} // namespace mlir::attn

#endif // ATTN_PASSES_NONFINITEROWS_H
