//===- FlashToBlockGpu.cpp - the flash kernel in the GPU form -------------===//
//
// The flash kernel (plain, RoPE, FoX) for every target (BlockTarget.h), as
// the GPU runs it: Q and K/V tiles through swizzled shared buffers (two K/V
// stages) into mma.sync operands (sm_90a: read in place by wgmma), a base-2
// online softmax, masks only on tiles that cross a bound. FoX reads G' from
// the gate kernel (with a positive scale on a GPU, the bias as one more K = 8
// dot with key records); RoPE reads q, k rotated by the rope kernels. The CPU
// runs it through attn-block-strip-gpu. docs/block-program.md, "The flash
// kernel's GPU form", and docs/gpu-backend.md.
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "BlockTarget.h"
#include "NonFiniteRows.h"
#include "PackedSequences.h"
#include "TileBuilder.h"

#include "attn/Codegen/GpuOccupancy.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

/// The layouts of the kernel's tiles. mma.sync: one accumulator layout for
/// S and O, Q, K and V local_loaded into operand registers. wgmma
/// (makeWgmmaLayouts): S and O each in the accumulator layout of its own
/// instruction (m64n{block_n}k16, m64n{Dv}k16), Q, K and V read in place
/// from 128-byte swizzled buffers, row statistics converted between the
/// two row slices (the same registers).
struct Layouts {
  Attribute mma, opA, opB, row, col, shared;
  /// O's accumulator and row slice (mma.sync: mma, row); P's A layout.
  Attribute mmaO, rowO, opP;
  /// What local_load of Q, K and V produces (operand registers, or the
  /// shared tile in place), and whether wgmma reads shared memory
  /// (fence_async_shared after each wait).
  Attribute qLoad, kLoad, vLoad;
  bool asyncProxy = false;
  /// FoX's key records (FoxRecords): their buffer, the tile local_load
  /// makes of it (the B of S's first dot) and the A of that dot (the query
  /// rows' operand, foxOperand).
  Attribute recShared, recLoad, recA;
};

Layouts makeLayouts(MLIRContext *ctx, const BlockTarget &t) {
  Layouts l;
  l.mma = blk::MmaLayoutAttr::get(ctx, 2, {t.warps, 1}, {16, 8});
  l.opA = blk::DotOperandLayoutAttr::get(ctx, 0, l.mma, 2);
  l.opB = blk::DotOperandLayoutAttr::get(ctx, 1, l.mma, 2);
  l.row = blk::SliceLayoutAttr::get(ctx, 1, l.mma);
  l.col = blk::SliceLayoutAttr::get(ctx, 0, l.mma);
  l.shared = blk::SharedLayoutAttr::get(ctx, 8, 1, 8, {1, 0});
  l.mmaO = l.mma;
  l.rowO = l.row;
  l.opP = l.opA;
  l.qLoad = l.opA;
  l.kLoad = l.vLoad = l.opB;
  // [block_n, 8] records, 16-byte rows: the 8 rows of an ldmatrix are 128
  // consecutive bytes, distinct banks without a swizzle.
  l.recShared = blk::SharedLayoutAttr::get(ctx, 8, 1, 1, {1, 0});
  l.recLoad = l.opB;
  l.recA = l.opA;
  return l;
}

/// sm_90a: warpgroup MMA (see Layouts).
Layouts makeWgmmaLayouts(MLIRContext *ctx, const BlockTarget &t, int64_t bn,
                         int64_t dv) {
  Layouts l;
  l.mma = blk::MmaLayoutAttr::get(ctx, 3, {t.warps, 1}, {64, bn, 16});
  l.mmaO = blk::MmaLayoutAttr::get(ctx, 3, {t.warps, 1}, {64, dv, 16});
  l.row = blk::SliceLayoutAttr::get(ctx, 1, l.mma);
  l.col = blk::SliceLayoutAttr::get(ctx, 0, l.mma);
  l.rowO = blk::SliceLayoutAttr::get(ctx, 1, l.mmaO);
  l.opP = blk::DotOperandLayoutAttr::get(ctx, 0, l.mmaO, 2);
  l.shared = blk::NvmmaSharedLayoutAttr::get(ctx, 128, false);
  l.qLoad = l.kLoad = l.vLoad = l.shared;
  l.asyncProxy = true;
  // Records read in place as interleaved 8 x 16-byte core matrices (no
  // swizzle: 16-byte rows; the k16 step reads them twice, DotToWgmma.cpp),
  // the query rows' operand from registers.
  l.recShared = l.recLoad = blk::NvmmaSharedLayoutAttr::get(ctx, 0, false);
  l.recA = blk::DotOperandLayoutAttr::get(ctx, 0, l.mma, 2);
  return l;
}

/// Columns of the folded softmax row sums: one n8 tile of the accumulator
/// layout, whose columns each thread holds in every n8 tile.
constexpr int64_t kLFold = 8;

/// Tile-level builders that name each tile's layout.
struct GpuTiles {
  OpBuilder &b;
  Location loc;

  RankedTensorType tile(ArrayRef<int64_t> shape, Type elt, Attribute enc) {
    return RankedTensorType::get(shape, elt, enc);
  }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value splat(RankedTensorType type, Value scalar) {
    return tensor::SplatOp::create(b, loc, type, scalar);
  }
  Value splatF(RankedTensorType type, double v) {
    return splat(type, arith::ConstantOp::create(
                           b, loc, b.getFloatAttr(type.getElementType(), v)));
  }
  Value splatIdx(RankedTensorType type, Value index) {
    return splat(type,
                 arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
  }
  Value reduce(blk::ReduceKind kind, Value t, Attribute rowEnc) {
    auto type = cast<RankedTensorType>(t.getType());
    return blk::ReduceOp::create(
        b, loc, tile({type.getDimSize(0)}, type.getElementType(), rowEnc), kind,
        t, 1, Value());
  }
  Value bcast(Value t, int64_t axis, RankedTensorType to) {
    return blk::BroadcastOp::create(b, loc, to, t, axis);
  }
  /// `t` in layout `enc` (itself when it has it).
  Value convert(Value t, Attribute enc) {
    auto type = cast<RankedTensorType>(t.getType());
    if (type.getEncoding() == enc)
      return t;
    return blk::ConvertLayoutOp::create(
        b, loc, tile(type.getShape(), type.getElementType(), enc), t);
  }
  /// Copies waited for are visible to the whole block (and, where wgmma
  /// reads them, to the async proxy).
  void publish(const Layouts &l) {
    if (l.asyncProxy)
      blk::FenceAsyncSharedOp::create(b, loc);
    blk::BarrierOp::create(b, loc);
  }
};

/// FoX's bias from the tensor cores (FoxRecords): the dot of a query row
/// [1, 1, 1, -w_hi, -w_mid, -w_lo, 0, ...] and a key's record [v_hi,
/// v_mid, v_lo, 1, 1, 1, 0, ...] is v_j - w_i, where x_hi + x_mid + x_lo
/// are x's three bf16 pieces (hi = bf16(x), mid = bf16(x - hi), lo =
/// bf16(x - hi - mid): f32's 24 bits), v_j = G'_j / c and w_i = G'_i / c,
/// both rounded alike: (G'_j - G'_i) / c, the bias in the units of c S, to
/// the digits of f32 arithmetic on G' (exactly 0 for j = i). No term
/// depends on the key tile, so the kernel needs no per-tile reference and
/// no row term, and the records serve any block-n.
/// Builds one side's rows from x, a [n] f32 tile in the row slice of `mma`:
/// the records (`query` false: pieces of x in columns 0-2, ones in 3-5) or
/// the query rows (pieces of -x in 3-5, ones in 0-2), [n, kFoxRecordCols]
/// bf16 converted to `enc`.
Value foxOperand(OpBuilder &b, Location loc, Value x, Attribute mma,
                 Attribute enc, bool query) {
  TileBuilder t(b, loc);
  GpuTiles g{b, loc};
  int64_t n = cast<RankedTensorType>(x.getType()).getDimSize(0),
          w = kFoxRecordCols;
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type(), i64 = b.getI64Type();
  // RNE is odd: the pieces of -x are those of x negated.
  if (query)
    x = arith::NegFOp::create(b, loc, x);
  Value x2 = g.bcast(x, 1, g.tile({n, w}, f32, mma));
  Value hi = t.convert(x2, bf16);
  Value r1 = t.sub(x2, t.toF32(hi));
  Value mid = t.convert(r1, bf16);
  Value lo = t.convert(t.sub(r1, t.toF32(mid)), bf16);
  auto iTile = g.tile({n, w}, i64, mma);
  auto colEnc = blk::SliceLayoutAttr::get(b.getContext(), 0, mma);
  Value cols =
      g.bcast(blk::IotaOp::create(b, loc, g.tile({w}, i64, colEnc), t.idx(0)),
              0, iTile);
  auto isCol = [&](int64_t k) {
    return t.cmpi(arith::CmpIPredicate::eq, cols, g.splatIdx(iTile, t.idx(k)));
  };
  auto bfTile = g.tile({n, w}, bf16, mma);
  const int64_t piecesAt = query ? 3 : 0, onesAt = query ? 0 : 3;
  Value r = g.splatF(bfTile, 0.0), one = g.splatF(bfTile, 1.0);
  const Value pieces[] = {hi, mid, lo};
  for (int64_t k = 0; k < 3; ++k) {
    r = t.select(isCol(onesAt + k), one, r);
    r = t.select(isCol(piecesAt + k), pieces[k], r);
  }
  return g.convert(r, enc);
}

/// Emits the GPU-form kernel for `op` into `kernel`'s body.
void buildGpuKernel(AttentionOp op, func::FuncOp kernel, const KernelArgs &args,
                    const BlockTarget &tg, int64_t bm, int64_t bn,
                    FlashRows which) {
  MLIRContext *ctx = op.getContext();
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = op.getLoc();
  TileBuilder t(b, loc);
  GpuTiles g{b, loc};
  Value q = args.in(kernel, "q"), k = args.in(kernel, "k"),
        v = args.in(kernel, "v"), out = args.in(kernel, "out");
  // FoX: G' (see the file comment), indexed [b, h, position].
  Value gPrefix = args.in(kernel, "gPrefix");
  // FoxRecords: the records kernel's [B, Hq, S, 8] key records.
  Value recs = args.in(kernel, "records");
  // The row LSE [B, Hq, T] f32, where the op returns it.
  Value lseOut = args.in(kernel, "lse");
  // Packed sequences: cu_seqlens, [N + 1] i32 (T == S).
  Value cu = args.in(kernel, "cuSeqlens");
  // FlashRows::marking and redo: the rows that came out non-finite,
  // [B, Hq, T] f32.
  Value marks =
      which == FlashRows::all ? Value() : args.in(kernel, "rowsNonFinite");
  auto qType = cast<MemRefType>(q.getType());
  // On a GPU the tiles' head dims are padded (gpuTileHeadDim): copies,
  // loads and the store of the output bound their columns by the tensors'.
  auto tileDim = [&](Value x) {
    int64_t n = cast<MemRefType>(x.getType()).getDimSize(3);
    return tg.gpu ? gpuTileHeadDim(n) : n;
  };
  int64_t d = tileDim(q), dv = tileDim(v);
  Layouts L =
      tg.wgmma ? makeWgmmaLayouts(ctx, tg, bn, dv) : makeLayouts(ctx, tg);
  Type elt = qType.getElementType(), f32 = b.getF32Type(), i64 = b.getI64Type();
  const double log2e = 1.4426950408889634;
  const double inf = std::numeric_limits<double>::infinity();
  auto sTile = g.tile({bm, bn}, f32, L.mma);
  auto rowTile = g.tile({bm}, f32, L.row);
  auto accTile = g.tile({bm, dv}, f32, L.mmaO);

  // FlashRows::redo: a program takes kRedoRowsPerProgram rows and writes
  // only its marked tiles (openRedoTile); the marks are the main kernel's,
  // which a dependent launch waits for.
  FlashProgram prog =
      t.flashProgram(q, k, bm, /*reversed=*/which != FlashRows::redo);
  Operation *redoWalk = nullptr;
  if (which == FlashRows::redo) {
    Value tiles = arith::CeilDivUIOp::create(b, loc, prog.tLen, t.idx(bm));
    RedoTile at = openRedoTile(b, loc, marks, prog.bIdx, prog.h, tiles, bm,
                               tg.warps, tg.dependentLaunch, [&](Value tile) {
                                 return t.flashProgramAt(prog, tile, bm).row0;
                               });
    prog = t.flashProgramAt(prog, at.tile, bm);
    redoWalk = at.walk;
  }
  Value sLen = prog.sLen, bIdx = prog.bIdx, h = prog.h, kh = prog.kh,
        row0 = prog.row0, qPos0 = prog.qPos0;
  Value c0 = t.idx(0), c1 = t.idx(1);

  MaskKind mask = op.getMask();
  int64_t window = op.getWindow().value_or(0);
  Value kvStart, kvEnd;
  std::tie(kvStart, kvEnd) = t.flashKeyRange(prog, mask, window, bm, c0);
  // The query rows' positions.
  Value rows = blk::IotaOp::create(b, loc, g.tile({bm}, i64, L.row), qPos0);
  // Packed sequences: the walk starts at the first row's sequence, and a
  // row's keys before its own sequence's start are masked; without a mask
  // also those at or after its end, and the walk ends at the last row's.
  SequenceBounds seqs;
  const bool seqEnds = cu && mask == MaskKind::none;
  if (cu) {
    seqs = sequenceBounds(b, loc, cu, qPos0, bm, rows, seqEnds);
    kvStart = arith::MaxSIOp::create(b, loc, kvStart, seqs.firstStart);
    if (seqEnds)
      kvEnd = arith::MinSIOp::create(b, loc, kvEnd, seqs.lastEnd);
  }

  // Shared buffers and the first two copy groups (Q; K/V tile 0).
  auto smem = [&](ArrayRef<int64_t> shape) {
    return blk::SharedBufferType::get(ctx, shape, elt, L.shared);
  };
  Value sQ = blk::LocalAllocOp::create(b, loc, smem({bm, d}));
  Value sK = blk::LocalAllocOp::create(b, loc, smem({tg.stages, bn, d}));
  Value sV = blk::LocalAllocOp::create(b, loc, smem({tg.stages, bn, dv}));
  auto dims = b.getDenseI64ArrayAttr({2, 3});
  auto zeroPad = b.getF64FloatAttr(0.0);
  auto stageOf = [&](OpBuilder &ob, Value buf, Value stage) -> Value {
    auto type = cast<blk::SharedBufferType>(buf.getType());
    auto one = blk::SharedBufferType::get(ctx, type.getShape().drop_front(),
                                          elt, L.shared);
    return blk::LocalIndexOp::create(ob, loc, one, buf, stage);
  };
  // FoxRecords: a key tile's record travels with its K tile (the same
  // copy group, `stages` slots); keys past S read zeros.
  Type bf16 = b.getBF16Type();
  auto recSmem = [&](ArrayRef<int64_t> shape) {
    return blk::SharedBufferType::get(ctx, shape, bf16, L.recShared);
  };
  Value sR = recs ? blk::LocalAllocOp::create(
                        b, loc, recSmem({tg.stages, bn, kFoxRecordCols}))
                  : Value();
  auto recStage = [&](OpBuilder &ob, Value stage) -> Value {
    return blk::LocalIndexOp::create(ob, loc, recSmem({bn, kFoxRecordCols}), sR,
                                     stage);
  };
  auto copyKV = [&](OpBuilder &ob, Value j0, Value stage) {
    SmallVector<Value> tokens = {
        blk::AsyncCopyOp::create(ob, loc, k, ValueRange{bIdx, kh, j0, c0}, dims,
                                 zeroPad, stageOf(ob, sK, stage)),
        blk::AsyncCopyOp::create(ob, loc, v, ValueRange{bIdx, kh, j0, c0}, dims,
                                 zeroPad, stageOf(ob, sV, stage))};
    if (recs)
      tokens.push_back(
          blk::AsyncCopyOp::create(ob, loc, recs, ValueRange{bIdx, h, j0, c0},
                                   dims, zeroPad, recStage(ob, stage)));
    blk::AsyncCommitGroupOp::create(ob, loc, tokens);
  };
  // Dependent launch: the rope / gate kernels may still run. The index
  // math and the copies of inputs they do not write (v; q and k without
  // RoPE) overlap them; the wait comes once, in the straight-line
  // prologue, right before the first read of what they wrote.
  bool waited = !tg.dependentLaunch || which == FlashRows::redo;
  auto waitOnce = [&]() {
    if (!waited)
      blk::GriddepWaitOp::create(b, loc);
    waited = true;
  };
  const bool rotated = op.getRopeTheta().has_value();
  if (rotated || recs)
    waitOnce(); // q and k come from the rope kernels, records from theirs
  Value tq = blk::AsyncCopyOp::create(b, loc, q, ValueRange{bIdx, h, row0, c0},
                                      dims, zeroPad, sQ);
  blk::AsyncCommitGroupOp::create(b, loc, ValueRange{tq});
  copyKV(b, kvStart, c0);
  blk::AsyncWaitOp::create(b, loc, ValueRange{}, 1);
  g.publish(L);
  Value qa =
      blk::LocalLoadOp::create(b, loc, g.tile({bm, d}, elt, L.qLoad), sQ);
  // G' at the query rows; rows before position 0 (mask none, T > S) read
  // 0, the empty prefix, as in the CPU form.
  Type gElt =
      gPrefix ? cast<MemRefType>(gPrefix.getType()).getElementType() : f32;
  auto loadG = [&](OpBuilder &ob, Value pos, int64_t n, Attribute enc) {
    return blk::LoadOp::create(ob, loc, g.tile({n}, gElt, enc), gPrefix,
                               ValueRange{bIdx, h, pos},
                               ob.getDenseI64ArrayAttr({2}), zeroPad);
  };
  if (gPrefix)
    waitOnce(); // G' comes from the gate kernel
  Value gRows = gPrefix ? loadG(b, qPos0, bm, L.row) : Value();

  // Masks: keys past S, and the causal / window bounds. Only the tiles
  // that cross one of them pay for the per-score compare and select (an
  // scf.if on a condition uniform over the program): at T = 16K with
  // 64-key tiles that is one or two tiles of a row block's 128 on average,
  // and the compares were a fifth of a step's instructions.
  // The tiles from j0 > lastClean on hold a key past S or (causal, window)
  // after the block's first query; a window's tiles before lastLo a key
  // before its last query's window. Bounds computed once, a compare per
  // step.
  Value keysEnd = sLen;
  if (mask != MaskKind::none)
    keysEnd = arith::MinSIOp::create(b, loc, sLen,
                                     arith::AddIOp::create(b, loc, qPos0, c1));
  Value lastClean = arith::SubIOp::create(b, loc, keysEnd, t.idx(bn));
  Value lastLo =
      mask == MaskKind::sliding_window
          ? arith::AddIOp::create(b, loc, qPos0, t.idx(bm - window)).getResult()
          : Value();
  auto maskTile = [&](OpBuilder &nb, Value j0, Value s) -> Value {
    TileBuilder n(nb, loc);
    GpuTiles ng{nb, loc};
    Value need = n.cmpi(CmpIPredicate::sgt, j0, lastClean);
    if (lastLo)
      need = n.ori(need, n.cmpi(CmpIPredicate::slt, j0, lastLo));
    if (cu)
      need = n.ori(need, seqs.mayCross(nb, loc, j0, bn, true, seqEnds));
    auto ifOp = scf::IfOp::create(nb, loc, TypeRange{sTile}, need,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(nb);
      nb.setInsertionPointToStart(&ifOp.getThenRegion().front());
      auto iTile = ng.tile({bm, bn}, i64, L.mma);
      Value cols =
          ng.bcast(blk::IotaOp::create(nb, loc, ng.tile({bn}, i64, L.col), j0),
                   0, iTile);
      Value valid =
          n.keyVisible(cols, ng.bcast(rows, 1, iTile), sLen, mask, window);
      if (cu)
        valid = n.andi(valid, n.cmpi(CmpIPredicate::sge, cols,
                                     ng.bcast(seqs.starts, 1, iTile)));
      if (seqEnds)
        valid = n.andi(valid, n.cmpi(CmpIPredicate::slt, cols,
                                     ng.bcast(seqs.ends, 1, iTile)));
      scf::YieldOp::create(
          nb, loc, ValueRange{n.select(valid, s, ng.splatF(sTile, -inf))});
      nb.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(nb, loc, ValueRange{s});
    }
    return ifOp.getResult(0);
  };

  // Base-2 softmax of c S, c = scale * log2(e). With c > 0 the row maxima
  // are taken on the raw scores (max commutes with a positive scale) and
  // the scale folds into the exponent's fma, as FlashAttention does: one
  // multiply per score less than scaling S first.
  // FoX with a positive scale on a GPU: S starts as the whole bias, a dot
  // of the records (recs, usesFoxRecords), so a score costs what it costs
  // without FoX. Otherwise (c <= 0, or the CPU's f64 G') the bias, in the
  // units of c S, is added per score after S is scaled.
  const double c = op.getScaleOrDefault() * log2e;
  const bool biasPerScore = gPrefix && !recs;
  const bool rawMax = c > 0 && !biasPerScore;

  // l is carried folded to kLFold columns (attn_block.fold): its row sums
  // are reduced over the lanes once after the loop, not every key tile.
  auto lTile = g.tile({bm, kLFold}, f32, L.mma);
  SmallVector<Value> init = {g.splatF(rowTile, -inf), g.splatF(lTile, 0.0),
                             g.splatF(accTile, 0.0), c0};
  int64_t smemBytes = tg.wgmma ? gpu_occupancy::kWgmmaAlign : 0;
  for (Value buf : {sQ, sK, sV})
    smemBytes += cast<blk::SharedBufferType>(buf.getType()).getSizeInBytes();
  // The occupancy hint (gpu_occupancy::occupancyHint): wgmma, and not
  // with FoX's bias per score (G_j stays live).
  if (sR)
    smemBytes += cast<blk::SharedBufferType>(sR.getType()).getSizeInBytes();
  // FoX's records at D = 64 leave shared memory for 5 blocks, but at 5
  // ptxas spills and the kernel is slower than at 4
  // (bench/history/runs-to-05a9f8e.md, "GPU: FoX's key records in 16
  // bytes"): at most 4 with records.
  if (tg.wgmma && !biasPerScore)
    if (int64_t blocks = gpu_occupancy::occupancyHint(smemBytes, 32 * tg.warps))
      kernel->setAttr(
          blk::kMinBlocksPerSmAttrName,
          b.getI64IntegerAttr(recs ? std::min<int64_t>(blocks, 4) : blocks));
  // FoxRecords: the A operand of S's first dot, made once (foxOperand).
  Value foxA =
      recs ? foxOperand(b, loc, t.mul(gRows, g.splatF(rowTile, 1.0 / c)), L.mma,
                        L.recA, /*query=*/true)
           : Value();
  auto loop = scf::ForOp::create(
      b, loc, kvStart, kvEnd, t.idx(bn), init,
      [&](OpBuilder &nb, Location, Value j0, ValueRange state) {
        TileBuilder n(nb, loc);
        GpuTiles ng{nb, loc};
        Value m = state[0], l = state[1], acc = state[2], stage = state[3];
        Value next = arith::SubIOp::create(nb, loc, c1, stage);
        // FoX's bias per score: G' at this tile's keys, loaded before the
        // step's copies, wait and barrier.
        Value gCols = biasPerScore ? loadG(nb, j0, bn, L.col) : Value();
        // The next tile's copies overlap this step's math. nsw: a key
        // index never wraps, and saying so lets attn-block-to-gpu's range
        // analysis see that the copy's rows are not negative.
        copyKV(nb,
               arith::AddIOp::create(nb, loc, j0, n.idx(bn),
                                     arith::IntegerOverflowFlags::nsw),
               next);
        blk::AsyncWaitOp::create(nb, loc, ValueRange{}, 1);
        ng.publish(L);
        Value kt = blk::LocalLoadOp::create(
            nb, loc, ng.tile({bn, d}, elt, L.kLoad), stageOf(nb, sK, stage));
        Value sInit = ng.splatF(sTile, 0.0);
        // FoxRecords: S starts as the whole bias, (G'_j - G'_i) / c, from
        // foxA x the record: the scores then cost what they cost without
        // FoX.
        if (recs) {
          Value rt = blk::LocalLoadOp::create(
              nb, loc, ng.tile({bn, kFoxRecordCols}, bf16, L.recLoad),
              recStage(nb, stage));
          sInit = blk::DotOp::create(nb, loc, sTile, foxA, rt, sInit,
                                     nb.getUnitAttr());
        }
        Value s =
            blk::DotOp::create(nb, loc, sTile, qa, kt, sInit, nb.getUnitAttr());
        if (!rawMax)
          s = n.mul(s, ng.splatF(sTile, c));
        // FoX: gamma log2(e) (G_i - G_j) = G'_j - G'_i.
        if (biasPerScore)
          s = n.addFoxBias(s, gRows, gCols, -1.0);
        s = maskTile(nb, j0, s);
        // Online softmax (see FlashToBlock.cpp), m in the units of c s (the
        // raw maxima times c: one multiply per row, as FlashAttention
        // does).
        Value rowMax = ng.reduce(blk::ReduceKind::max, s, L.row);
        if (rawMax)
          rowMax = n.mul(rowMax, ng.splatF(rowTile, c));
        Value mNew = n.maxf(m, rowMax);
        Value dead = n.cmpf(CmpFPredicate::OEQ, mNew, ng.splatF(rowTile, -inf));
        Value mSafe = n.select(dead, ng.splatF(rowTile, 0.0), mNew);
        Value alpha = n.exp2(n.sub(m, mSafe));
        Value p;
        if (rawMax) {
          // exp2(c s - m) as one fma per score.
          Value negM =
              ng.bcast(arith::NegFOp::create(nb, loc, mSafe), 1, sTile);
          p = n.exp2(
              math::FmaOp::create(nb, loc, s, ng.splatF(sTile, c), negM));
        } else {
          p = n.exp2(n.sub(s, ng.bcast(mSafe, 1, sTile)));
        }
        // l alpha + the row sums, folded: one fma per folded column.
        Value lNew =
            math::FmaOp::create(nb, loc, l, ng.bcast(alpha, 1, lTile),
                                blk::FoldOp::create(nb, loc, lTile, p, kLFold));
        // The tensor cores take P in the operands' 16 bits; the CPU
        // multiplies it in f32.
        Value p16 = tg.gpu && elt != f32
                        ? arith::TruncFOp::create(
                              nb, loc, ng.tile({bm, bn}, elt, L.mma), p)
                              .getResult()
                        : p;
        Value pa = ng.convert(p16, L.opP);
        Value vt = blk::LocalLoadOp::create(
            nb, loc, ng.tile({bn, dv}, elt, L.vLoad), stageOf(nb, sV, stage));
        Value scaled =
            n.mul(acc, ng.bcast(ng.convert(alpha, L.rowO), 1, accTile));
        // A masked key's zero probability skips its value (FlashRows):
        // exactly on the CPU and in the redo kernel; the main kernels on a
        // GPU multiply, and mark the rows that come out non-finite.
        Value accNew =
            blk::DotOp::create(nb, loc, accTile, pa, vt, scaled, UnitAttr());
        if (which != FlashRows::marking)
          skippingZeroA(accNew);
        // Every warp is done with this stage before it is refilled.
        blk::BarrierOp::create(nb, loc);
        scf::YieldOp::create(nb, loc, ValueRange{mNew, lNew, accNew, next});
      });
  blk::AsyncWaitOp::create(b, loc, ValueRange{}, 0);
  Value l = g.reduce(blk::ReduceKind::sum, loop.getResult(1), L.row),
        acc = loop.getResult(2);
  Value empty = t.cmpf(CmpFPredicate::OEQ, l, g.splatF(rowTile, 0.0));
  Value inv =
      t.select(empty, g.splatF(rowTile, 0.0), t.div(g.splatF(rowTile, 1.0), l));
  Value o = t.mul(acc, g.bcast(g.convert(inv, L.rowO), 1, accTile));
  if (which == FlashRows::marking)
    markNonFiniteRows(b, loc, o, L.row, marks, {bIdx, h, row0});
  Type outElt = cast<MemRefType>(out.getType()).getElementType();
  if (outElt != f32)
    o = arith::TruncFOp::create(b, loc, g.tile({bm, dv}, outElt, L.mmaO), o);
  if (which == FlashRows::redo)
    o = keepUnmarkedRows(b, loc, o, out, {bIdx, h, row0, c0}, marks, L.row);
  blk::StoreOp::create(b, loc, o, out, ValueRange{bIdx, h, row0, c0}, dims);
  // The redo kernel leaves the LSE as the main kernel stored it: it does
  // not depend on v.
  if (lseOut && which != FlashRows::redo) {
    // ln sum_j exp(scale s_j + bias_j) = (m + log2 l) ln 2, m in the units
    // of c s; -inf for a row without a visible key.
    Value lse2 = t.add(loop.getResult(0), math::Log2Op::create(b, loc, l));
    Value lse = t.select(empty, g.splatF(rowTile, -inf),
                         t.mul(lse2, g.splatF(rowTile, 1.0 / log2e)));
    blk::StoreOp::create(b, loc, lse, lseOut, ValueRange{bIdx, h, row0},
                         b.getDenseI64ArrayAttr({2}));
  }
  if (redoWalk)
    b.setInsertionPointAfter(redoWalk);
  func::ReturnOp::create(b, loc);
}

} // namespace

std::string mlir::attn::checkFlashGpuOperands(Value q, Value k, Value v,
                                              int64_t maxHeadDim,
                                              bool padsHeadDims) {
  Type e = cast<ShapedType>(q.getType()).getElementType();
  if (!e.isBF16() && !e.isF16())
    return "the GPU form takes bf16 or f16 q, k, v (m16n8k16 mma.sync, "
           "m64nNk16 wgmma), not " +
           std::string(e.isF32() ? "f32 operands" : "this element type") +
           " (the CPU backend runs them: --device=cpu)";
  for (Value x : {k, v})
    if (cast<ShapedType>(x.getType()).getElementType() != e)
      return "the GPU form needs q, k and v of one element type";
  for (Value x : {q, v}) {
    int64_t d = cast<ShapedType>(x.getType()).getDimSize(3);
    const int64_t multiple = padsHeadDims ? 8 : 64;
    if (ShapedType::isDynamic(d) || d % multiple != 0 || d > maxHeadDim)
      return "the GPU form needs static head dims that are multiples of " +
             std::to_string(multiple) + " up to " + std::to_string(maxHeadDim) +
             (padsHeadDims ? " (16-byte chunks)"
                           : " (the 8 x 16-byte chunks of a swizzled row)") +
             ", got " +
             (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  }
  return "";
}

std::string mlir::attn::checkFlashGpuSupport(AttentionOp op,
                                             const BlockTarget &target,
                                             int64_t blockN) {
  if (target.wgmma &&
      ((target.warps != 4 && target.warps != 8) || target.mTiles != 1))
    return "the sm_90a (wgmma) GPU form runs one or two warpgroups of 64 "
           "query rows: warps 4 or 8 and m-tiles 1, got warps " +
           std::to_string(target.warps) + ", m-tiles " +
           std::to_string(target.mTiles);
  if (std::string bad = checkFlashGpuOperands(op.getQ(), op.getK(), op.getV(),
                                              /*maxHeadDim=*/256,
                                              /*padsHeadDims=*/true);
      !bad.empty())
    return bad;
  if (blockN % 16 != 0 || blockN < 16)
    return "the GPU form needs block-n to be a multiple of 16, got " +
           std::to_string(blockN);
  if (target.wgmma && blockN > 256)
    return "the sm_90a GPU form needs block-n <= 256 (the N of "
           "m64nNk16), got " +
           std::to_string(blockN);
  return "";
}

Value mlir::attn::launchGatePrefix(AttentionOp op, SymbolTable &symbols,
                                   OpBuilder &b, bool dependentLaunch,
                                   bool f64Out) {
  Location loc = op.getLoc();
  Value g = op.getG();
  auto gType = cast<RankedTensorType>(g.getType());
  auto outType = MemRefType::get(
      gType.getShape(), f64Out ? b.getF64Type() : Type(b.getF32Type()));
  func::FuncOp kernel =
      createBlockKernel(op, symbols, "gate_prefix", {bufferTypeOf(g), outType});
  // The GPU form of FoX's G' = -gamma log2(e) cumsum(g), one program per
  // (batch, query head) row: rounds of kRound keys, each one blocked tile
  // (thread t holds keys [8 t, 8 t + 8) of the round; masked past S),
  // widened to f64 and scanned (attn_block.scan: in-thread sums, a warp
  // scan by shuffles, the 8 warps' totals through `totals`), plus the
  // carried total of the rounds before (the scan's last element), scaled
  // and stored as f32. 8 warps and 8 keys a thread: 256 threads
  // and 2048-key rounds, so that at T = 16K (16 rows
  // at D = 128) a row is 8 rounds of latency.
  constexpr int64_t kWarps = 8, kKeysPerThread = 8,
                    kRound = kWarps * 32 * kKeysPerThread;
  kernel->setAttr("attn_block.num_warps", b.getI64IntegerAttr(kWarps));
  {
    OpBuilder kb = OpBuilder::atBlockBegin(&kernel.getBody().front());
    TileBuilder t(kb, loc);
    MLIRContext *ctx = kb.getContext();
    // Dependent launch: the kernel after this one may set up while it
    // runs; this one waits for the kernels before it (the rope kernels),
    // so that its end implies theirs (BlockLaunchPlan.cpp).
    if (dependentLaunch) {
      blk::LaunchDependentsOp::create(kb, loc);
      blk::GriddepWaitOp::create(kb, loc);
    }
    auto blocked =
        blk::BlockedLayoutAttr::get(ctx, {kKeysPerThread}, {32}, {kWarps}, {0});
    auto tile = [&](Type e) {
      return RankedTensorType::get({kRound}, e, blocked);
    };
    Value gm = kernel.getArgument(0), gp = kernel.getArgument(1);
    Value row = blk::ProgramIdOp::create(kb, loc, 0);
    Value hq = memref::DimOp::create(kb, loc, gm, 1);
    Value sLen = memref::DimOp::create(kb, loc, gm, 2);
    Value bIdx = arith::DivUIOp::create(kb, loc, row, hq);
    Value h = arith::RemUIOp::create(kb, loc, row, hq);
    const double toG = -(op.getGateScaled() ? op.getScaleOrDefault() : 1.0) *
                       1.4426950408889634;
    Type f64 = kb.getF64Type();
    Value totals = blk::LocalAllocOp::create(
        kb, loc,
        blk::SharedBufferType::get(
            ctx, {kWarps}, f64, blk::SharedLayoutAttr::get(ctx, 1, 1, 1, {0})));
    Value scale = t.splatLike(tile(f64), toG);
    Value last = t.idx(kRound - 1);
    Type gElt = cast<MemRefType>(gm.getType()).getElementType();
    auto keys = kb.getDenseI64ArrayAttr({2});
    scf::ForOp::create(
        kb, loc, t.idx(0), sLen, t.idx(kRound),
        ValueRange{arith::ConstantOp::create(kb, loc, kb.getF64FloatAttr(0))},
        [&](OpBuilder &nb, Location, Value r0, ValueRange carry) {
          TileBuilder n(nb, loc);
          Value x = blk::LoadOp::create(nb, loc, tile(gElt), gm,
                                        ValueRange{bIdx, h, r0}, keys,
                                        nb.getF64FloatAttr(0.0));
          Value cum = blk::ScanOp::create(nb, loc, n.convert(x, f64), totals);
          Value total =
              tensor::ExtractOp::create(nb, loc, cum, ValueRange{last});
          Value g =
              n.add(cum, tensor::SplatOp::create(nb, loc, tile(f64), carry[0]));
          Value scaled = n.mul(g, scale);
          blk::StoreOp::create(nb, loc, f64Out ? scaled : n.toF32(scaled), gp,
                               ValueRange{bIdx, h, r0}, keys);
          scf::YieldOp::create(nb, loc, ValueRange{n.add(carry[0], total)});
        });
    func::ReturnOp::create(kb, loc);
  }
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < 3; ++i)
    if (outType.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(b, loc, g, i));
  Value out = memref::AllocOp::create(b, loc, outType, dyn);
  Value rows =
      arith::MulIOp::create(b, loc, tensor::DimOp::create(b, loc, g, 0),
                            tensor::DimOp::create(b, loc, g, 1));
  Value in = bufferization::ToBufferOp::create(b, loc, bufferTypeOf(g), g,
                                               /*read_only=*/true);
  blk::LaunchOp::create(b, loc, kernel.getName(), rows,
                        arith::ConstantIndexOp::create(b, loc, 1),
                        ValueRange{in, out});
  return out;
}

bool mlir::attn::usesFoxRecords(AttentionOp op, const BlockTarget &target) {
  return target.gpu && op.getG() && op.getScaleOrDefault() > 0;
}

/// The records buffer's type: [B, Hq, S, kFoxRecordCols] bf16.
static MemRefType foxRecordsType(AttentionOp op) {
  auto shape =
      llvm::to_vector(cast<ShapedType>(op.getG().getType()).getShape());
  shape.push_back(kFoxRecordCols);
  return MemRefType::get(shape, BFloat16Type::get(op.getContext()));
}

Value mlir::attn::launchFoxRecords(AttentionOp op, SymbolTable &symbols,
                                   OpBuilder &b, Value gPrime,
                                   bool dependentLaunch) {
  Location loc = op.getLoc();
  auto gType = cast<MemRefType>(gPrime.getType());
  MemRefType recType = foxRecordsType(op);
  func::FuncOp kernel =
      createBlockKernel(op, symbols, "fox_records", {gType, recType});
  // One program of 4 warps per kFoxRecordKeys keys of a (batch, query
  // head) row: the record of key j (foxOperand) from v_j = G'_j / c, built
  // in the accumulator layout of the mma tiles, whose loads and stores the
  // backend has.
  constexpr int64_t kWarps = kFoxRecordKeys / 16;
  kernel->setAttr("attn_block.num_warps", b.getI64IntegerAttr(kWarps));
  {
    OpBuilder kb = OpBuilder::atBlockBegin(&kernel.getBody().front());
    TileBuilder t(kb, loc);
    GpuTiles g{kb, loc};
    MLIRContext *ctx = kb.getContext();
    auto mma = blk::MmaLayoutAttr::get(ctx, 2, {kWarps, 1}, {16, 8});
    auto rowEnc = blk::SliceLayoutAttr::get(ctx, 1, mma);
    if (dependentLaunch) {
      blk::LaunchDependentsOp::create(kb, loc);
      blk::GriddepWaitOp::create(kb, loc);
    }
    Value gp = kernel.getArgument(0), rec = kernel.getArgument(1);
    Value j = arith::MulIOp::create(
        kb, loc, blk::ProgramIdOp::create(kb, loc, 0), t.idx(kFoxRecordKeys));
    Value row = blk::ProgramIdOp::create(kb, loc, 1);
    Value hq = memref::DimOp::create(kb, loc, gp, 1);
    Value bIdx = arith::DivUIOp::create(kb, loc, row, hq);
    Value h = arith::RemUIOp::create(kb, loc, row, hq);
    const double c = op.getScaleOrDefault() * 1.4426950408889634;
    auto rowType = g.tile({kFoxRecordKeys}, kb.getF32Type(), rowEnc);
    Value gj = blk::LoadOp::create(kb, loc, rowType, gp, ValueRange{bIdx, h, j},
                                   kb.getDenseI64ArrayAttr({2}),
                                   kb.getF64FloatAttr(0.0));
    Value x = foxOperand(kb, loc, t.mul(gj, g.splatF(rowType, 1.0 / c)), mma,
                         mma, /*query=*/false);
    blk::StoreOp::create(kb, loc, x, rec, ValueRange{bIdx, h, j, t.idx(0)},
                         kb.getDenseI64ArrayAttr({2, 3}));
    func::ReturnOp::create(kb, loc);
  }
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < 3; ++i)
    if (recType.isDynamicDim(i))
      dyn.push_back(memref::DimOp::create(b, loc, gPrime, i));
  Value out = memref::AllocOp::create(b, loc, recType, dyn);
  Value sLen = memref::DimOp::create(b, loc, gPrime, 2);
  Value rows =
      arith::MulIOp::create(b, loc, memref::DimOp::create(b, loc, gPrime, 0),
                            memref::DimOp::create(b, loc, gPrime, 1));
  Value tiles = arith::CeilDivUIOp::create(
      b, loc, sLen, arith::ConstantIndexOp::create(b, loc, kFoxRecordKeys));
  blk::LaunchOp::create(b, loc, kernel.getName(), tiles, rows,
                        ValueRange{gPrime, out});
  return out;
}

void mlir::attn::buildFlashGpuKernel(AttentionOp op, func::FuncOp kernel,
                                     const KernelArgs &args,
                                     const BlockTarget &target, int64_t blockM,
                                     int64_t blockN, FlashRows which) {
  kernel->setAttr("attn_block.num_warps",
                  Builder(op.getContext()).getI64IntegerAttr(target.warps));
  buildGpuKernel(op, kernel, args, target, blockM, blockN, which);
}

BlockTarget mlir::attn::redoTarget(const BlockTarget &target) {
  BlockTarget t = target;
  t.wgmma = false;
  t.warps = 4;
  t.mTiles = 1;
  t.blockN = 64;
  return t;
}
