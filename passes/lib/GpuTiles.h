//===- GpuTiles.h - tile builders of the mma.sync GPU forms -----*- C++ -*-===//
//
// The tiles of a GPU-form kernel on 4 warps stacked along rows (mma.sync
// accumulator tiles, their row and column slices, 16-bit operands from
// swizzled shared buffers), or, in wgmma mode (sm_90a), the same kernels for
// warpgroup MMA. Every builder names the layout of the tile it makes, so
// attn-block-to-gpu lowers the kernel op by op. Used by the PaTH and MTA GPU
// forms. The layouts of both modes: docs/lowering-details.md,
// "passes/lib/GpuTiles.h".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_GPUTILES_H
#define ATTN_PASSES_GPUTILES_H

#include "TileBuilder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

namespace mlir::attn {

/// Warps of the GPU-form programs built with GpuTiles, stacked along rows:
/// a program's row tile is 16 * kGpuWarps rows, one m16 tile per warp.
constexpr int64_t kGpuWarps = 4;
constexpr int64_t kGpuRows = 16 * kGpuWarps;

struct GpuTiles : TileBuilder {
  GpuTiles(OpBuilder &b, Location loc, Type elt, bool wgmma = false,
           Type opElt = {})
      : TileBuilder(b, loc), elt(elt), opElt(opElt ? opElt : elt), wgmma(wgmma),
        skipsZeroProbabilities(this->opElt.isF32()) {
    MLIRContext *ctx = b.getContext();
    mma = mmaFor(kGpuRows);
    opA = blk::DotOperandLayoutAttr::get(ctx, 0, mma, 2);
    opB = blk::DotOperandLayoutAttr::get(ctx, 1, mma, 2);
    row = blk::SliceLayoutAttr::get(ctx, 1, mma);
    col = blk::SliceLayoutAttr::get(ctx, 0, mma);
    shared = wgmma ? Attribute(blk::NvmmaSharedLayoutAttr::get(ctx, 128, false))
                   : blk::SharedLayoutAttr::get(ctx, 8, 1, 8, {1, 0});
  }
  /// The same layouts at another insertion point (a loop body).
  GpuTiles(OpBuilder &nb, const GpuTiles &o)
      : GpuTiles(nb, o.loc, o.elt, o.wgmma, o.opElt) {
    skipsZeroProbabilities = o.skipsZeroProbabilities;
  }

  /// The element type of the operands read from memory (q, k, v).
  Type elt;
  /// The element type of the operands the kernel computes (rounded
  /// accumulators and the buffers they go through): `elt` for the tensor
  /// cores, f32 for the CPU target, whose dots compute in f32 anyway.
  Type opElt;
  /// Warpgroup MMA (sm_90a): see the file comment.
  bool wgmma;
  /// Whether P V skips zero probabilities (probabilityProduct): on the CPU
  /// target (f32 operands) and in a FlashRows::redo kernel (mma.sync).
  bool skipsZeroProbabilities;
  Attribute mma, opA, opB, row, col, shared;

  /// `dot` (P V, or a backward's product by P or dS: exact zeros where the
  /// mask hides a cell) marked skip_zero_a where skipsZeroProbabilities. A
  /// GPU's main kernels multiply: wgmma cannot skip, and mma.sync's skip
  /// costs three products (FlashRows, docs/input-limits.md "Non-finite
  /// values").
  Value probabilityProduct(Value dot) {
    return skipsZeroProbabilities ? skippingZeroA(dot) : dot;
  }

  /// The accumulator layout of a tile of `n` columns: mma.sync's m16n8
  /// layout, or wgmma's m64nNk16 of N = n.
  Attribute mmaFor(int64_t n) {
    if (!wgmma)
      return blk::MmaLayoutAttr::get(b.getContext(), 2, {kGpuWarps, 1},
                                     {16, 8});
    return blk::MmaLayoutAttr::get(b.getContext(), 3, {kGpuWarps, 1},
                                   {kGpuRows, n, 16});
  }
  RankedTensorType acc(ArrayRef<int64_t> shape, Type e = {}) {
    return RankedTensorType::get(shape, e ? e : b.getF32Type(),
                                 mmaFor(shape.back()));
  }
  /// `t` in layout `enc` (itself when it has it).
  Value relayout(Value t, Attribute enc) {
    auto type = cast<RankedTensorType>(t.getType());
    if (type.getEncoding() == enc)
      return t;
    return blk::ConvertLayoutOp::create(
        b, loc,
        RankedTensorType::get(type.getShape(), type.getElementType(), enc), t);
  }
  RankedTensorType slice(int64_t n, Attribute enc, Type e = {}) {
    return RankedTensorType::get({n}, e ? e : b.getF32Type(), enc);
  }
  Value splatF(RankedTensorType type, double v) { return splatLike(type, v); }
  Value splatIdx(RankedTensorType type, Value index) {
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    return tensor::SplatOp::create(b, loc, type, i);
  }
  Value zeros(ArrayRef<int64_t> shape) { return splatF(acc(shape), 0.0); }
  /// start, start + 1, ... (i64) in slice `enc`.
  Value iotaIn(Attribute enc, Value start, int64_t n) {
    return blk::IotaOp::create(b, loc, slice(n, enc, b.getI64Type()), start);
  }
  /// A row-slice (axis 1) or column-slice (axis 0) tile over [rows, cols].
  /// (wgmma: a row slice goes to the row slice of the wider tile first.)
  Value spread(Value v, int64_t axis, int64_t rows, int64_t cols) {
    Type e = cast<RankedTensorType>(v.getType()).getElementType();
    RankedTensorType to = acc({rows, cols}, e);
    if (wgmma && axis == 1)
      v = relayout(
          v, blk::SliceLayoutAttr::get(b.getContext(), 1, to.getEncoding()));
    return blk::BroadcastOp::create(b, loc, to, v, axis);
  }
  /// Row statistics, in the canonical row slice.
  Value rowReduce(blk::ReduceKind kind, Value t) {
    return reduceAlong(kind, t, 1, Value());
  }
  /// Column statistics, in the canonical column slice: the warps' partial
  /// results meet in `scratch` (allocColumnScratch).
  Value colReduce(blk::ReduceKind kind, Value t, Value scratch) {
    return reduceAlong(kind, t, 0, scratch);
  }
  Value reduceAlong(blk::ReduceKind kind, Value t, int64_t axis,
                    Value scratch) {
    auto type = cast<RankedTensorType>(t.getType());
    Value r = blk::ReduceOp::create(
        b, loc,
        slice(
            type.getDimSize(1 - axis),
            blk::SliceLayoutAttr::get(b.getContext(), axis, type.getEncoding()),
            type.getElementType()),
        kind, t, axis, scratch);
    return relayout(r, axis ? row : col);
  }
  /// The scratch of colReduce for `cols` columns of `e`, a row per warp.
  Value allocColumnScratch(int64_t cols, Type e) {
    return allocPadded(kGpuWarps, cols, e);
  }
  /// `band`: attn_block.dot's b_band (b zero outside it), if any. (wgmma:
  /// a register A goes to the operand layout of `accv`'s instruction.)
  /// `transposeA`: `a` is [K, M], a tile read from shared memory
  /// (`operand(buf, 0)`).
  Value dot(Value a, Value bt, Value accv, bool transposeB = false,
            DenseI64ArrayAttr band = {}, bool transposeA = false) {
    Attribute aEnc = cast<RankedTensorType>(a.getType()).getEncoding();
    if (wgmma && !transposeA &&
        isa<blk::MmaLayoutAttr, blk::DotOperandLayoutAttr>(aEnc))
      a = relayout(a, blk::DotOperandLayoutAttr::get(
                          b.getContext(), 0,
                          cast<RankedTensorType>(accv.getType()).getEncoding(),
                          2));
    return blk::DotOp::create(b, loc, accv.getType(), a, bt, accv,
                              transposeB ? b.getUnitAttr() : UnitAttr(), band,
                              /*skip_zero_a=*/UnitAttr(),
                              transposeA ? b.getUnitAttr() : UnitAttr());
  }
  /// An f32 accumulator tile rounded to the computed operands' type
  /// (itself where that is f32).
  Value round(Value x) { return convert(x, opElt); }
  /// A 16-bit accumulator tile as an A operand (the same registers).
  /// wgmma: the tile itself, which `dot` converts to the operand layout of
  /// the accumulator it is multiplied into (the A layout depends on it).
  Value asA(Value x16) { return wgmma ? x16 : relayout(x16, opA); }
  /// A shared buffer of `e` (default: the operands read from memory).
  Value alloc(ArrayRef<int64_t> shape, Type e = {}) {
    return blk::LocalAllocOp::create(
        b, loc,
        blk::SharedBufferType::get(b.getContext(), shape, e ? e : elt, shared));
  }
  /// async_copy of the tile at `at` (dims 2, 3) of `mem` into `buf`; rows
  /// outside `mem` are zero-filled.
  Value copy(Value mem, ValueRange at, Value buf) {
    return blk::AsyncCopyOp::create(b, loc, mem, at,
                                    b.getDenseI64ArrayAttr({2, 3}),
                                    b.getF64FloatAttr(0.0), buf);
  }
  /// Commit the copies and wait for all of them, visible to the block.
  void landCopies(ValueRange tokens) {
    blk::AsyncCommitGroupOp::create(b, loc, tokens);
    blk::AsyncWaitOp::create(b, loc, ValueRange{}, 0);
    publish();
  }
  void barrier() { blk::BarrierOp::create(b, loc); }
  /// The barrier after a wait: the copies waited for are visible to the
  /// block (and, wgmma, to the async proxy that reads them).
  void publish() {
    if (wgmma)
      blk::FenceAsyncSharedOp::create(b, loc);
    barrier();
  }
  /// The buffer as an operand: A (`opIdx` 0) or B (1), of its elements
  /// (wgmma: the buffer's tile, read in place).
  Value operand(Value buf, int64_t opIdx) {
    auto type = cast<blk::SharedBufferType>(buf.getType());
    Attribute enc = wgmma && isa<blk::NvmmaSharedLayoutAttr>(type.getEncoding())
                        ? type.getEncoding()
                        : (opIdx ? opB : opA);
    return blk::LocalLoadOp::create(
        b, loc,
        RankedTensorType::get(type.getShape(), type.getElementType(), enc),
        buf);
  }
  /// The row stride of a padded buffer of `cols` 16-bit columns: an odd
  /// number of 16-byte chunks, so that the 8 rows of an ldmatrix (and of
  /// an mma tile's stores) start in distinct bank groups.
  static int64_t paddedStride(int64_t cols) {
    return (cols / 8) % 2 ? cols : cols + 8;
  }
  /// A [rows, cols] buffer of `e` in #attn_block.padded_shared.
  Value allocPadded(int64_t rows, int64_t cols, Type e) {
    auto layout =
        blk::PaddedSharedLayoutAttr::get(b.getContext(), paddedStride(cols));
    return blk::LocalAllocOp::create(
        b, loc,
        blk::SharedBufferType::get(b.getContext(), {rows, cols}, e, layout));
  }
  /// The [rows, cols] window of padded `buf` at (row, col).
  Value window(Value buf, Value row, int64_t col, int64_t rows, int64_t cols) {
    auto type = cast<blk::SharedBufferType>(buf.getType());
    return blk::LocalSubviewOp::create(
        b, loc,
        blk::SharedBufferType::get(b.getContext(), {rows, cols},
                                   type.getElementType(), type.getEncoding()),
        buf, row, idx(col));
  }
  void localStore(Value tile, Value buf) {
    blk::LocalStoreOp::create(b, loc, tile, buf);
  }
  /// The 2-D tile at `at` (its dims `dims`) of `mem` in the accumulator
  /// layout, as f32; elements outside `mem` read 0. `inBounds`: the tile
  /// lies inside `mem` (a scratch sized for it), so no guard is needed.
  Value loadAcc(Value mem, ValueRange at, ArrayRef<int64_t> shape,
                ArrayRef<int64_t> dims, bool inBounds = false) {
    Type e = cast<MemRefType>(mem.getType()).getElementType();
    auto load = blk::LoadOp::create(b, loc, acc(shape, e), mem, at,
                                    b.getDenseI64ArrayAttr(dims),
                                    b.getF64FloatAttr(0.0));
    if (inBounds)
      load.setInBoundsAttr(b.getUnitAttr());
    return convert(load, b.getF32Type());
  }
  /// The 1-D tile along dim `dim` of `mem` at `at` in slice `enc`, as f32;
  /// elements outside `mem` read 0.
  Value loadSlice(Value mem, ValueRange at, int64_t dim, int64_t n,
                  Attribute enc) {
    Type e = cast<MemRefType>(mem.getType()).getElementType();
    Value t = blk::LoadOp::create(b, loc, slice(n, enc, e), mem, at,
                                  b.getDenseI64ArrayAttr({dim}),
                                  b.getF64FloatAttr(0.0));
    return convert(t, b.getF32Type());
  }
  /// `add`: a reducing store (f32, atomic per element).
  void store(Value t, Value mem, ValueRange at, ArrayRef<int64_t> dims,
             bool inBounds = false, bool add = false) {
    auto store =
        blk::StoreOp::create(b, loc, t, mem, at, b.getDenseI64ArrayAttr(dims));
    if (inBounds)
      store.setInBoundsAttr(b.getUnitAttr());
    if (add)
      store.setAddAttr(b.getUnitAttr());
  }
  /// Row maxima with -inf (no visible key yet) read as 0.
  Value safeMax(Value m) {
    auto type = cast<RankedTensorType>(m.getType());
    Value dead = cmpf(arith::CmpFPredicate::OEQ, m,
                      splatF(type, -std::numeric_limits<double>::infinity()));
    return select(dead, splatF(type, 0.0), m);
  }
};

} // namespace mlir::attn

#endif // ATTN_PASSES_GPUTILES_H
