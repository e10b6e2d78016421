//===- FlashGradToBlock.cpp - attn.attention_grad -> flash backward -------===//
//
// The backward of plain, RoPE and FoX attention as GPU-form block kernels
// (GpuTiles: mma.sync, wgmma on sm_90a), lowered by the GPU backend and run
// on the CPU after attn-block-strip-gpu: FlashAttention-2's
// algorithm with the probabilities recomputed from the saved LSE,
// P = exp(s - lse), and the softmax's row term D = rowsum(dO * O):
//
//   delta: D for every query row;
//   dkdv:  per key tile and KV head, a walk over the query tiles of each
//          query head of its group: dV += P^T dO, dK += dS^T Q with
//          dS = P * (dP - D). The walk computes S^T = K Q^T, so that these
//          dots read their operands as they lie in memory;
//   dq:    per query tile, the forward's key walk: dQ += dS K
//          (deterministic). With grad-dq=reduce the dkdv walk
//          adds each tile's dS K (dS^T through shared memory, a transposed
//          A) into an f32 scratch by a reducing store instead: from sm_90
//          on the tile staged in shared memory and added by bulk
//          reductions (async_store_add), else atomics per element.
//
// FoX: the gate's gradient needs the row sums of dS (the dq walk, or
// with grad-dq=reduce column sums of dS^T added from the dkdv walk) and its
// column sums per query head (the dkdv walk); a blocked scan kernel turns
// them into dg. RoPE: the kernels take q and k rotated (launchRopeGpu) and
// the opposite rotation of their dq and dk is the gradients
// (launchRopeInverse). docs/training.md.
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "GpuTiles.h"
#include "PackedSequences.h"
#include "Reverse.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;
using arith::CmpIPredicate;

namespace {

constexpr double kLog2e = 1.4426950408889634;
/// Query and key rows of every tile.
constexpr int64_t kRows = kGpuRows;

/// What the kernels share: the forward op (a twin of the attention_grad op,
/// for the helpers that read an attn.attention) and its facts.
struct FlashGrad {
  mutable AttentionOp fwd;
  const BlockTarget &tgt;
  int64_t d, dv;
  /// The softmax scale, and c = scale log2(e): the kernels work in base 2.
  double scale, c;
  MaskKind mask;
  int64_t window;
  /// dQ by the dq kernel's walk, not by reducing stores from the dkdv walk.
  bool dqWalk;
  /// The reducing stores are bulk reductions of a tile staged in shared
  /// memory (BlockTarget::bulkCopies; dQ's sums a scratch of the plan, whose
  /// rows are 16-byte aligned), not atomics per element.
  bool dqBulk;

  /// FoX without the dq walk: the dkdv walk adds the row sums of dS.
  bool addsRowSums() const { return !dqWalk && fwd.getG(); }

  Type elt() const {
    return cast<ShapedType>(fwd.getQ().getType()).getElementType();
  }
  /// The tiles of a kernel at `b`: every dot's operands lie as wgmma reads
  /// them (K-major A, B of either major), so sm_90a takes the warpgroup
  /// form; the CPU computes its dots in f32.
  GpuTiles tiles(OpBuilder &b) const {
    return GpuTiles(b, fwd.getLoc(), elt(), tgt.wgmma,
                    tgt.gpu ? elt() : b.getF32Type());
  }
};

/// Packed sequences as one walk's tiles see them: its rows' sequence bounds
/// (slices like the rows' positions; null where a walk needs no test on
/// them), and whether its rows are the queries or the keys.
struct RowSequences {
  Value starts, ends;
  bool ofQueries = true;
};

/// Whether key `keys` (a [n] i64 slice) and query position `qPos` (another
/// slice) make a visible cell of the [rows, cols] tile whose rows are keys
/// (`keysAlongRows`) or queries: the key exists (< S), the query exists
/// (its index `qIdx` < T) and the mask lets it see the key. Packed
/// sequences (`seqs`): the key and the query lie in one sequence.
Value visible(GpuTiles &g, const FlashGrad &fg, Value keys, Value qPos,
              Value qIdx, Value sLen, Value tLen, bool keysAlongRows,
              const RowSequences &seqs = {}) {
  int64_t keyAxis = keysAlongRows ? 1 : 0, qAxis = 1 - keyAxis;
  auto spread = [&](Value x, int64_t axis) {
    return g.spread(x, axis, kRows, kRows);
  };
  Value kk = spread(keys, keyAxis), qq = spread(qPos, qAxis);
  Value valid = g.keyVisible(kk, qq, sLen, fg.mask, fg.window);
  // The other side's position within [start, end) of the rows' sequence.
  Value other = seqs.ofQueries ? kk : qq;
  int64_t axis = seqs.ofQueries ? qAxis : keyAxis;
  if (seqs.starts)
    valid = g.andi(
        valid, g.cmpi(CmpIPredicate::sge, other, spread(seqs.starts, axis)));
  if (seqs.ends)
    valid = g.andi(valid,
                   g.cmpi(CmpIPredicate::slt, other, spread(seqs.ends, axis)));
  return g.andi(valid,
                g.cmpi(CmpIPredicate::slt, spread(qIdx, qAxis),
                       g.splatIdx(cast<RankedTensorType>(kk.getType()), tLen)));
}

/// c s: a [kRows, kRows] tile of raw scores `s` in base 2, plus FoX's bias
/// where `gRows` (G' at the tile's rows) is given: G'_key - G'_query, with
/// `keysAlongRows` saying which of `gRows`, `gCols` are the keys'.
Value logits(GpuTiles &g, const FlashGrad &fg, Value s, Value gRows,
             Value gCols, bool keysAlongRows) {
  Value x = g.mul(s, g.splatF(g.acc({kRows, kRows}), fg.c));
  return gRows ? g.addFoxBias(x, gRows, gCols, keysAlongRows ? 1.0 : -1.0) : x;
}

/// Whether the tile of keys from `j0` and query rows from `i0` (positions
/// from `qPos0`) holds a cell `visible` hides: a key past S, a query past
/// T, or a pair the mask hides (causal: its last key after its first query;
/// a window: its first key at or before its last query's window). Uniform
/// over the program: the other tiles skip the compares, as the forward's
/// unmasked tiles do (most of a long causal walk).
Value needsMask(GpuTiles &g, const FlashGrad &fg, Value j0, Value i0,
                Value qPos0, Value sLen, Value tLen) {
  auto plus = [&](Value x, int64_t c) -> Value {
    return arith::AddIOp::create(g.b, g.loc, x, g.idx(c));
  };
  Value need = g.ori(g.cmpi(CmpIPredicate::sgt, plus(j0, kRows), sLen),
                     g.cmpi(CmpIPredicate::sgt, plus(i0, kRows), tLen));
  if (fg.mask != MaskKind::none)
    need = g.ori(need, g.cmpi(CmpIPredicate::sgt, plus(j0, kRows - 1), qPos0));
  if (fg.mask == MaskKind::sliding_window)
    need = g.ori(need, g.cmpi(CmpIPredicate::sle, j0,
                              plus(qPos0, kRows - 1 - fg.window)));
  return need;
}

/// `x` with the cells the mask hides set to exactly 0: `valid` (built
/// where it is used) only where `need` holds.
Value zeroHidden(GpuTiles &g, Value x, Value need,
                 llvm::function_ref<Value()> valid) {
  auto type = cast<RankedTensorType>(x.getType());
  auto ifOp = scf::IfOp::create(g.b, g.loc, TypeRange{type}, need,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(g.b);
  g.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(g.b, g.loc,
                       ValueRange{g.select(valid(), x, g.splatF(type, 0.0))});
  g.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(g.b, g.loc, ValueRange{x});
  return ifOp.getResult(0);
}

/// P (or P^T) from logits `x`: exp2(x - lse2) where visible, exactly 0
/// elsewhere (no -inf - -inf for a row without a visible key). `lse2` is
/// the LSE in base 2, a slice along the query axis.
Value probabilities(GpuTiles &g, Value x, Value lse2, int64_t queryAxis,
                    Value need, llvm::function_ref<Value()> valid) {
  Value p = g.exp2(g.sub(x, g.spread(lse2, queryAxis, kRows, kRows)));
  return zeroHidden(g, p, need, valid);
}

/// The saved LSE, in base 2, and the row term D of the kRows queries at `at`
/// ([b, h, first query]), as slices in `enc`.
std::pair<Value, Value> rowTerms(GpuTiles &g, Value lse, Value delta,
                                 ValueRange at, Attribute enc) {
  Value lse2 = g.mul(g.loadSlice(lse, at, 2, kRows, enc),
                     g.splatF(g.slice(kRows, enc), kLog2e));
  return {lse2, g.loadSlice(delta, at, 2, kRows, enc)};
}

/// dS = P * (dP - D), D spread along the query axis `queryAxis`; exactly 0
/// where the mask hides the cell (`need`, `valid` as for probabilities): a
/// hidden key's non-finite v makes its dP non-finite, and its P = 0 does
/// not cancel that (docs/input-limits.md, "Non-finite values").
Value scoreGrad(GpuTiles &g, Value p, Value dp, Value delta, int64_t queryAxis,
                Value need, llvm::function_ref<Value()> valid) {
  return zeroHidden(
      g, g.mul(p, g.sub(dp, g.spread(delta, queryAxis, kRows, kRows))), need,
      valid);
}

/// The gate prefix G' (launchGatePrefix) at `n` positions from `pos` of row
/// (b, h), in slice `enc`, in G's type (f64 on the CPU).
Value loadGate(GpuTiles &g, Value gPrime, Value bIdx, Value h, Value pos,
               Attribute enc) {
  Type e = cast<MemRefType>(gPrime.getType()).getElementType();
  return blk::LoadOp::create(
      g.b, g.loc, g.slice(kRows, enc, e), gPrime, ValueRange{bIdx, h, pos},
      g.b.getDenseI64ArrayAttr({2}), g.b.getF64FloatAttr(0.0));
}

/// D = rowsum(dO * O), one program per (query tile, batch x query head).
void buildDelta(func::FuncOp kernel, const KernelArgs &args,
                const FlashGrad &fg) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  GpuTiles g = fg.tiles(b);
  auto arg = [&](StringRef name) { return args.in(kernel, name); };
  FlashProgram p = g.flashProgram(arg("out"), arg("k"), kRows);
  Value c0 = g.idx(0);
  SmallVector<Value> at = {p.bIdx, p.h, p.row0, c0};
  Value o = g.loadAcc(arg("out"), at, {kRows, fg.dv}, {2, 3});
  Value dO = g.loadAcc(arg("dout"), at, {kRows, fg.dv}, {2, 3});
  Value delta = g.rowReduce(blk::ReduceKind::sum, g.mul(o, dO));
  g.store(delta, arg("delta"), {p.bIdx, p.h, p.row0}, {2});
  // The dkdv walk adds into dQ's rows (and FoX's row sums of dS) from here
  // on.
  if (!fg.dqWalk)
    g.store(g.zeros({kRows, fg.d}), arg("dq"), at, {2, 3});
  if (fg.addsRowSums())
    g.store(g.splatF(g.slice(kRows, g.row), 0.0), arg("dsRows"),
            {p.bIdx, p.h, p.row0}, {2});
  func::ReturnOp::create(b, kernel.getLoc());
}

/// dQ from its f32 sums (reducing stores) in the gradient's type: one
/// program per (query tile, batch x query head).
void buildDqCast(func::FuncOp kernel, const KernelArgs &args,
                 const FlashGrad &fg) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  GpuTiles g = fg.tiles(b);
  auto arg = [&](StringRef name) { return args.in(kernel, name); };
  FlashProgram p = g.flashProgram(arg("out"), arg("k"), kRows);
  SmallVector<Value> at = {p.bIdx, p.h, p.row0, g.idx(0)};
  Value dq = g.loadAcc(arg("dq"), at, {kRows, fg.d}, {2, 3});
  Value out = arg("dqOut");
  g.store(g.convert(dq, cast<MemRefType>(out.getType()).getElementType()), out,
          at, {2, 3});
  func::ReturnOp::create(b, kernel.getLoc());
}

/// dQ (and FoX's row sums of dS): one program per (query tile, batch x
/// query head), walking the keys the forward walks.
void buildDq(func::FuncOp kernel, const KernelArgs &args, const FlashGrad &fg) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = kernel.getLoc();
  GpuTiles g = fg.tiles(b);
  auto arg = [&](StringRef name) { return args.in(kernel, name); };
  Value q = arg("q"), k = arg("k"), v = arg("v"), gPrime = arg("gPrefix");
  FlashProgram p = g.flashProgram(q, k, kRows, /*reversed=*/true);
  Value c0 = g.idx(0);
  auto [kvStart, kvEnd] = g.flashKeyRange(p, fg.mask, fg.window, kRows, c0);

  Value sQ = g.alloc({kRows, fg.d}), sdO = g.alloc({kRows, fg.dv});
  Value sK = g.alloc({kRows, fg.d}), sV = g.alloc({kRows, fg.dv});
  g.landCopies({g.copy(q, {p.bIdx, p.h, p.row0, c0}, sQ),
                g.copy(arg("dout"), {p.bIdx, p.h, p.row0, c0}, sdO)});
  Value qa = g.operand(sQ, 0), dOa = g.operand(sdO, 0);
  SmallVector<Value> rowAt = {p.bIdx, p.h, p.row0};
  Value lse2, delta;
  std::tie(lse2, delta) = rowTerms(g, arg("lse"), arg("delta"), rowAt, g.row);
  Value qPos = g.iotaIn(g.row, p.qPos0, kRows);
  Value qIdx = g.iotaIn(g.row, p.row0, kRows);
  // Packed sequences: the walk starts at the first row's sequence; the
  // tiles before the last row's start hold other sequences' keys. Without
  // a mask also the tiles past the first row's end, and the walk ends at
  // the last row's.
  Value cu = arg("cuSeqlens");
  const bool seqEnds = cu && fg.mask == MaskKind::none;
  SequenceBounds seqs;
  if (cu) {
    seqs = sequenceBounds(b, loc, cu, p.qPos0, kRows, qPos, seqEnds);
    kvStart = arith::MaxSIOp::create(b, loc, kvStart, seqs.firstStart);
    if (seqEnds)
      kvEnd = arith::MinSIOp::create(b, loc, kvEnd, seqs.lastEnd);
  }
  Value gRows =
      gPrime ? loadGate(g, gPrime, p.bIdx, p.h, p.qPos0, g.row) : Value();

  SmallVector<Value> init = {g.zeros({kRows, fg.d})};
  if (gPrime)
    init.push_back(g.splatF(g.slice(kRows, g.row), 0.0));
  auto loop = scf::ForOp::create(
      b, loc, kvStart, kvEnd, g.idx(kRows), init,
      [&](OpBuilder &nb, Location, Value j0, ValueRange acc) {
        GpuTiles n(nb, g);
        n.landCopies({n.copy(k, {p.bIdx, p.kh, j0, c0}, sK),
                      n.copy(v, {p.bIdx, p.kh, j0, c0}, sV)});
        Value s = n.dot(qa, n.operand(sK, 1), n.zeros({kRows, kRows}),
                        /*transposeB=*/true);
        Value x = logits(n, fg, s, gRows,
                         gPrime ? loadGate(n, gPrime, p.bIdx, p.h, j0, n.col)
                                : Value(),
                         /*keysAlongRows=*/false);
        Value need = needsMask(n, fg, j0, p.row0, p.qPos0, p.sLen, p.tLen);
        if (cu)
          need = n.ori(need, seqs.mayCross(nb, loc, j0, kRows, true, seqEnds));
        auto valid = [&] {
          return visible(n, fg, n.iotaIn(n.col, j0, kRows), qPos, qIdx, p.sLen,
                         p.tLen, /*keysAlongRows=*/false,
                         {seqs.starts, seqs.ends});
        };
        Value pt = probabilities(n, x, lse2, 1, need, valid);
        Value dp = n.dot(dOa, n.operand(sV, 1), n.zeros({kRows, kRows}),
                         /*transposeB=*/true);
        Value ds = scoreGrad(n, pt, dp, delta, 1, need, valid);
        SmallVector<Value> next = {n.probabilityProduct(
            n.dot(n.asA(n.round(ds)), n.operand(sK, 1), acc[0]))};
        if (gPrime)
          next.push_back(n.add(acc[1], n.rowReduce(blk::ReduceKind::sum, ds)));
        // Every warp is done with K and V before the next copies.
        n.barrier();
        scf::YieldOp::create(nb, loc, next);
      });
  Value dq = g.mul(loop.getResult(0), g.splatF(g.acc({kRows, fg.d}), fg.scale));
  Value dqOut = arg("dq");
  g.store(g.convert(dq, cast<MemRefType>(dqOut.getType()).getElementType()),
          dqOut, {p.bIdx, p.h, p.row0, c0}, {2, 3});
  if (gPrime)
    g.store(loop.getResult(1), arg("dsRows"), rowAt, {2});
  func::ReturnOp::create(b, loc);
}

/// The query walk of one query head `h` in the dkdv kernel: returns dK and
/// dV advanced by its tiles (and FoX's column sums of dS, stored here).
struct DkDvWalk {
  const FlashGrad &fg;
  func::FuncOp kernel;
  const KernelArgs &args;
  Value bIdx, j0, sLen, tLen, off, ka, va, sQ, sdO;
  /// K's buffer, dS^T's (reducing stores of dQ; null with dqWalk) and
  /// dQ's f32 tile (bulk reductions; else null); FoX without the dq walk:
  /// the scratch of the column sums of dS^T (its row sums).
  Value sK, sdS, sdQ, sCols;
  /// Packed sequences: the keys' sequence bounds (else null).
  SequenceBounds seqs;

  Value arg(StringRef name) const { return args.in(kernel, name); }

  SmallVector<Value, 2> walk(OpBuilder &ob, Value h, Value iStart, Value iEnd,
                             Value dk, Value dv) {
    Location loc = kernel.getLoc();
    GpuTiles g = fg.tiles(ob);
    Value c0 = g.idx(0), gPrime = arg("gPrefix");
    Value keys = g.iotaIn(g.row, j0, kRows);
    Value gKeys = gPrime ? loadGate(g, gPrime, bIdx, h, j0, g.row) : Value();
    SmallVector<Value> init = {dk, dv};
    if (gPrime)
      init.push_back(g.splatF(g.slice(kRows, g.row), 0.0));
    auto loop = scf::ForOp::create(
        ob, loc, iStart, iEnd, g.idx(kRows), init,
        [&](OpBuilder &nb, Location, Value i0, ValueRange acc) {
          GpuTiles n(nb, g);
          n.landCopies({n.copy(arg("q"), {bIdx, h, i0, c0}, sQ),
                        n.copy(arg("dout"), {bIdx, h, i0, c0}, sdO)});
          SmallVector<Value> colAt = {bIdx, h, i0};
          auto [lse2, delta] =
              rowTerms(n, arg("lse"), arg("delta"), colAt, n.col);
          Value qPos0 = arith::AddIOp::create(nb, loc, off, i0);
          // S^T = K Q^T: rows are keys, columns queries.
          Value st = n.dot(ka, n.operand(sQ, 1), n.zeros({kRows, kRows}),
                           /*transposeB=*/true);
          Value x = logits(n, fg, st, gKeys,
                           gPrime ? loadGate(n, gPrime, bIdx, h, qPos0, n.col)
                                  : Value(),
                           /*keysAlongRows=*/true);
          Value need = needsMask(n, fg, j0, i0, qPos0, sLen, tLen);
          // Packed: a query at or past the first key's sequence end;
          // without a mask also one before the last key's start.
          if (seqs.starts)
            need = n.ori(need, seqs.mayCross(nb, loc, qPos0, kRows,
                                             fg.mask == MaskKind::none, true));
          auto valid = [&] {
            return visible(n, fg, keys, n.iotaIn(n.col, qPos0, kRows),
                           n.iotaIn(n.col, i0, kRows), sLen, tLen,
                           /*keysAlongRows=*/true,
                           {fg.mask == MaskKind::none ? seqs.starts : Value(),
                            seqs.ends,
                            /*ofQueries=*/false});
          };
          Value pt = probabilities(n, x, lse2, 0, need, valid);
          Value dvNew = n.probabilityProduct(
              n.dot(n.asA(n.round(pt)), n.operand(sdO, 1), acc[1]));
          Value dpt = n.dot(va, n.operand(sdO, 1), n.zeros({kRows, kRows}),
                            /*transposeB=*/true);
          Value dst = scoreGrad(n, pt, dpt, delta, 0, need, valid);
          Value dst16 = n.round(dst);
          SmallVector<Value> next = {
              n.probabilityProduct(
                  n.dot(n.asA(dst16), n.operand(sQ, 1), acc[0])),
              dvNew};
          if (sdS)
            addDq(n, dst16, h, i0);
          if (gPrime)
            next.push_back(
                n.add(acc[2], n.rowReduce(blk::ReduceKind::sum, dst)));
          // FoX without the dq walk: the row sums of dS (over this key
          // tile) are added into the query rows' sums.
          if (gPrime && sCols)
            n.store(n.colReduce(blk::ReduceKind::sum, dst, sCols),
                    arg("dsRows"), colAt, {2}, /*inBounds=*/false,
                    /*add=*/true);
          n.barrier();
          scf::YieldOp::create(nb, loc, next);
        });
    if (gPrime)
      g.store(loop.getResult(2), arg("dsCols"), {bIdx, h, j0}, {2});
    return {loop.getResult(0), loop.getResult(1)};
  }

  /// dQ of the query tile at `i0` of head `h` += scale dS K: dS^T (keys
  /// along rows, rounded) through shared memory as the transposed A. Bulk:
  /// the tile goes through sdQ, whose last bulk reductions must have read
  /// it before any thread writes it again (the wait, then publish's
  /// barrier), and whose writes the async proxy must see (fence, barrier).
  void addDq(GpuTiles &n, Value dst16, Value h, Value i0) {
    if (sdQ)
      blk::AsyncStoreWaitOp::create(n.b, n.loc, 0, /*read=*/true);
    n.localStore(dst16, sdS);
    n.publish();
    Value dq = n.probabilityProduct(n.dot(n.operand(sdS, 0), n.operand(sK, 1),
                                          n.zeros({kRows, fg.d}),
                                          /*transposeB=*/false, {},
                                          /*transposeA=*/true));
    dq = n.mul(dq, n.splatF(n.acc({kRows, fg.d}), fg.scale));
    SmallVector<Value> at = {bIdx, h, i0, n.idx(0)};
    if (!sdQ) {
      n.store(dq, arg("dq"), at, {2, 3}, /*inBounds=*/false, /*add=*/true);
      return;
    }
    n.localStore(dq, sdQ);
    blk::FenceAsyncSharedOp::create(n.b, n.loc);
    n.barrier();
    blk::AsyncStoreAddOp::create(n.b, n.loc, sdQ, arg("dq"), at,
                                 n.b.getDenseI64ArrayAttr({2, 3}));
  }
};

/// dK and dV (and FoX's column sums of dS): one program per (key tile,
/// batch x KV head), over the query heads of its group.
void buildDkDv(func::FuncOp kernel, const KernelArgs &args,
               const FlashGrad &fg) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = kernel.getLoc();
  GpuTiles g = fg.tiles(b);
  auto arg = [&](StringRef name) { return args.in(kernel, name); };
  Value q = arg("q"), k = arg("k");
  Value hq = memref::DimOp::create(b, loc, q, 1);
  Value hk = memref::DimOp::create(b, loc, k, 1);
  Value tLen = memref::DimOp::create(b, loc, q, 2);
  Value sLen = memref::DimOp::create(b, loc, k, 2);
  Value pidBH = blk::ProgramIdOp::create(b, loc, 1);
  Value bIdx = arith::DivUIOp::create(b, loc, pidBH, hk);
  Value kh = arith::RemUIOp::create(b, loc, pidBH, hk);
  Value j0 = arith::MulIOp::create(b, loc, blk::ProgramIdOp::create(b, loc, 0),
                                   g.idx(kRows));
  Value off = arith::SubIOp::create(b, loc, sLen, tLen);
  Value c0 = g.idx(0), c1 = g.idx(1), rows = g.idx(kRows);

  // The query tiles that see a key of this tile: from the one holding the
  // first query at or after j0 (a mask), up to the last query whose window
  // reaches the tile's last key.
  Value iStart = c0, iEnd = tLen;
  if (fg.mask != MaskKind::none) {
    Value first = arith::MaxSIOp::create(
        b, loc, c0, arith::SubIOp::create(b, loc, j0, off));
    iStart = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, first, rows), rows);
  }
  if (fg.mask == MaskKind::sliding_window) {
    Value last = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, j0, g.idx(kRows - 1 + fg.window)),
        off);
    iEnd = arith::MaxSIOp::create(b, loc, iStart,
                                  arith::MinSIOp::create(b, loc, tLen, last));
  }

  // Packed sequences: no query after the last key's sequence sees the
  // tile; without a mask none before the first key's either.
  SequenceBounds seqs;
  if (Value cu = arg("cuSeqlens")) {
    seqs = sequenceBounds(b, loc, cu, j0, kRows, g.iotaIn(g.row, j0, kRows));
    if (fg.mask == MaskKind::none)
      iStart = arith::MulIOp::create(
          b, loc,
          arith::DivUIOp::create(
              b, loc, arith::SubIOp::create(b, loc, seqs.firstStart, off),
              rows),
          rows);
    iEnd = arith::MaxSIOp::create(
        b, loc, iStart,
        arith::MinSIOp::create(
            b, loc, iEnd, arith::SubIOp::create(b, loc, seqs.lastEnd, off)));
  }

  Value sK = g.alloc({kRows, fg.d}), sV = g.alloc({kRows, fg.dv});
  g.landCopies({g.copy(k, {bIdx, kh, j0, c0}, sK),
                g.copy(arg("v"), {bIdx, kh, j0, c0}, sV)});
  DkDvWalk w{fg,
             kernel,
             args,
             bIdx,
             j0,
             sLen,
             tLen,
             off,
             g.operand(sK, 0),
             g.operand(sV, 0),
             g.alloc({kRows, fg.d}),
             g.alloc({kRows, fg.dv}),
             sK,
             fg.dqWalk ? Value() : g.alloc({kRows, kRows}, g.opElt),
             fg.dqBulk ? g.allocPadded(kRows, fg.d, b.getF32Type()) : Value(),
             fg.addsRowSums() ? g.allocColumnScratch(kRows, b.getF32Type())
                              : Value(),
             seqs};
  // GQA: the query heads kh * group + [0, group) add into one dK, dV.
  Value group = arith::DivUIOp::create(b, loc, hq, hk);
  Value h0 = arith::MulIOp::create(b, loc, kh, group);
  auto heads = scf::ForOp::create(
      b, loc, c0, group, c1,
      ValueRange{g.zeros({kRows, fg.d}), g.zeros({kRows, fg.dv})},
      [&](OpBuilder &nb, Location, Value hl, ValueRange acc) {
        Value h = arith::AddIOp::create(nb, loc, h0, hl);
        scf::YieldOp::create(nb, loc,
                             w.walk(nb, h, iStart, iEnd, acc[0], acc[1]));
      });
  Value dk =
      g.mul(heads.getResult(0), g.splatF(g.acc({kRows, fg.d}), fg.scale));
  for (auto [name, tile] :
       {std::pair<StringRef, Value>{"dk", dk}, {"dv", heads.getResult(1)}}) {
    Value mem = arg(name);
    g.store(g.convert(tile, cast<MemRefType>(mem.getType()).getElementType()),
            mem, {bIdx, kh, j0, c0}, {2, 3});
  }
  // The shared memory the bulk reductions read goes with the program.
  if (fg.dqBulk)
    blk::AsyncStoreWaitOp::create(b, loc, 0, /*read=*/false);
  func::ReturnOp::create(b, loc);
}

/// FoX: dg_t = gamma sum_{u >= t} (R_u - C_u), R_u the row sum of dS of the
/// query at position u (0 before the first query), C_u the column sum of
/// key u: the cells whose gate sum G_{p_i} - G_j holds g_t (attn.scores_grad).
/// One program per (batch, query head) row, the gate prefix's blocked scan
/// (launchGatePrefix) run backwards: rounds of kRound positions from the
/// last, each scanned in f64 (attn_block.scan), its suffix sums the round's
/// total minus the inclusive prefix plus the element, plus the carried sum
/// of the rounds after it.
void buildGateGrad(func::FuncOp kernel, const KernelArgs &args,
                   const FlashGrad &fg) {
  constexpr int64_t kWarps = 8, kPerThread = 8,
                    kRound = kWarps * 32 * kPerThread;
  kernel->setAttr(
      "attn_block.num_warps",
      IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), kWarps));
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = kernel.getLoc();
  MLIRContext *ctx = b.getContext();
  TileBuilder t(b, loc);
  auto arg = [&](StringRef name) { return args.in(kernel, name); };
  Value rowsMem = arg("dsRows"), colsMem = arg("dsCols"), dg = arg("dg");
  Value row = blk::ProgramIdOp::create(b, loc, 0);
  Value hq = memref::DimOp::create(b, loc, dg, 1);
  Value sLen = memref::DimOp::create(b, loc, dg, 2);
  Value tLen = memref::DimOp::create(b, loc, rowsMem, 2);
  Value bIdx = arith::DivUIOp::create(b, loc, row, hq);
  Value h = arith::RemUIOp::create(b, loc, row, hq);
  Value off = arith::SubIOp::create(b, loc, sLen, tLen);
  Type f64 = b.getF64Type();
  auto blocked =
      blk::BlockedLayoutAttr::get(ctx, {kPerThread}, {32}, {kWarps}, {0});
  auto tile = [&](Type e) {
    return RankedTensorType::get({kRound}, e, blocked);
  };
  Value totals = blk::LocalAllocOp::create(
      b, loc,
      blk::SharedBufferType::get(
          ctx, {kWarps}, f64, blk::SharedLayoutAttr::get(ctx, 1, 1, 1, {0})));
  double gamma = fg.fwd.getGateScaled() ? fg.scale : 1.0;
  Value gammaT = t.splatLike(tile(f64), gamma);
  Value last = t.idx(kRound - 1);
  Type gElt = cast<MemRefType>(dg.getType()).getElementType();
  auto keys = b.getDenseI64ArrayAttr({2});
  Value rounds = arith::CeilDivUIOp::create(b, loc, sLen, t.idx(kRound));
  Value lastRound = arith::SubIOp::create(b, loc, rounds, t.idx(1));
  scf::ForOp::create(
      b, loc, t.idx(0), rounds, t.idx(1),
      ValueRange{arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0))},
      [&](OpBuilder &nb, Location, Value r, ValueRange carry) {
        TileBuilder n(nb, loc);
        Value u0 = arith::MulIOp::create(
            nb, loc, arith::SubIOp::create(nb, loc, lastRound, r),
            n.idx(kRound));
        // Outside [0, T) (a position before the first query, past S) the
        // masked loads read 0.
        auto load = [&](Value mem, Value at) {
          return n.convert(blk::LoadOp::create(nb, loc, tile(nb.getF32Type()),
                                               mem, ValueRange{bIdx, h, at},
                                               keys, nb.getF64FloatAttr(0.0)),
                           f64);
        };
        Value x = n.sub(load(rowsMem, arith::SubIOp::create(nb, loc, u0, off)),
                        load(colsMem, u0));
        Value cum = blk::ScanOp::create(nb, loc, x, totals);
        Value total = tensor::ExtractOp::create(nb, loc, cum, ValueRange{last});
        Value upTo = arith::AddFOp::create(nb, loc, carry[0], total);
        Value after = tensor::SplatOp::create(nb, loc, tile(f64), upTo);
        Value suffix = n.add(n.sub(after, cum), x);
        blk::StoreOp::create(nb, loc, n.convert(n.mul(suffix, gammaT), gElt),
                             dg, ValueRange{bIdx, h, u0}, keys);
        scf::YieldOp::create(nb, loc, ValueRange{upTo});
      });
  func::ReturnOp::create(b, loc);
}

} // namespace

std::string mlir::attn::checkFlashGradSupport(AttentionGradOp op,
                                              const BlockTarget &target) {
  if (op.getW() || op.hasMTA() || op.getNorm())
    return "no fused backward for PaTH and MTA yet";
  // dK and dV of a 64-key tile stay in registers across the query walk:
  // beyond D = 128 they would spill. Smaller head dims that are multiples
  // of 8 are padded to a multiple of 64 (gpuTileHeadDim), as the forward's.
  if (target.gpu)
    return checkFlashGpuOperands(op.getQ(), op.getK(), op.getV(),
                                 /*maxHeadDim=*/128, /*padsHeadDims=*/true);
  return "";
}

void mlir::attn::lowerFlashAttentionGrad(AttentionGradOp op,
                                         SymbolTable &symbols,
                                         const BlockLoweringConfig &cfg) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  // The forward op these gradients are of, for the helpers that read one
  // (kernel names, G'); erased at the end.
  SmallVector<Value> fwdOperands(
      op->getOperands().take_front(op->getNumOperands() - 3));
  auto fwd =
      AttentionOp::create(b, loc, TypeRange{op.getOut().getType()}, fwdOperands,
                          forwardProperties(op.getProperties()));
  auto qType = cast<ShapedType>(op.getQ().getType());
  bool fox = static_cast<bool>(op.getG());
  // On a GPU the tiles' head dims are padded (gpuTileHeadDim): loads read
  // the columns past D as 0 and stores leave them out.
  auto tileDim = [&](Value x) {
    int64_t n = cast<ShapedType>(x.getType()).getDimSize(3);
    return cfg.target.gpu ? gpuTileHeadDim(n) : n;
  };
  FlashGrad fg{fwd,
               cfg.target,
               tileDim(op.getQ()),
               tileDim(op.getV()),
               fwd.getScaleOrDefault(),
               fwd.getScaleOrDefault() * kLog2e,
               op.getMask(),
               static_cast<int64_t>(op.getWindow().value_or(0)),
               cfg.gradDqWalk,
               /*dqBulk=*/false};

  auto input = [&](Value v) -> Value {
    return bufferization::ToBufferOp::create(b, loc, bufferTypeOf(v), v,
                                             /*read_only=*/true);
  };
  Value bDim = tensor::DimOp::create(b, loc, op.getQ(), 0);
  Value hq = tensor::DimOp::create(b, loc, op.getQ(), 1);
  Value tLen = tensor::DimOp::create(b, loc, op.getQ(), 2);
  Value hk = tensor::DimOp::create(b, loc, op.getK(), 1);
  Value sLen = tensor::DimOp::create(b, loc, op.getK(), 2);
  auto grads = op.getGrads();
  auto rowScratch = [&](Value len) -> Value {
    auto type = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic},
        b.getF32Type());
    return memref::AllocOp::create(b, loc, type, ValueRange{bDim, hq, len});
  };
  // RoPE: the kernels see q and k rotated, so their dq and dk are the
  // rotated inputs' gradients (f32 scratch); the opposite rotation of those
  // is the inputs' gradients.
  bool rope = op.getRopeTheta().has_value();
  RopeTables tables;
  Value q, k;
  if (rope)
    std::tie(q, k) =
        launchRopeGpu(fwd, symbols, b, /*dependentLaunch=*/false, &tables);
  else
    std::tie(q, k) = std::pair(input(op.getQ()), input(op.getK()));
  Value dq = allocResult(b, loc, grads[0], bDim, hq, tLen);
  Value dk = allocResult(b, loc, grads[1], bDim, hk, sLen);
  KernelArgs args;
  args.add("q", q);
  args.add("k", k);
  args.add("v", input(op.getV()));
  args.add("gPrefix",
           fox ? launchGatePrefix(fwd, symbols, b, /*dependentLaunch=*/false,
                                  gatePrefixInF64(cfg.target))
               : Value());
  args.add("out", input(op.getOut()));
  args.add("lse", input(op.getLse()));
  args.add("dout", input(op.getGrad()));
  args.add("delta", rowScratch(tLen));
  args.add("cuSeqlens", op.getCuSeqlens() ? input(op.getCuSeqlens()) : Value());
  Type f32 = b.getF32Type();
  // Reducing stores sum dQ in f32: the gradient itself where it is f32,
  // else a scratch cast into it (dqOut) at the end.
  bool dqCast = !fg.dqWalk && !rope &&
                !cast<MemRefType>(dq.getType()).getElementType().isF32();
  // A bulk reduction writes whole tile rows: the scratch's rows must be
  // as wide as the tile.
  fg.dqBulk =
      cfg.target.bulkCopies && (rope || dqCast) && fg.d == qType.getDimSize(3);
  args.add("dq", rope || dqCast
                     ? allocResult(b, loc, grads[0], bDim, hq, tLen, f32)
                     : dq);
  args.add("dqOut", dqCast ? dq : Value());
  args.add("dk",
           rope ? allocResult(b, loc, grads[1], bDim, hk, sLen, f32) : dk);
  args.add("dv", allocResult(b, loc, grads[2], bDim, hk, sLen));
  args.add("dsRows", fox ? rowScratch(tLen) : Value());
  args.add("dsCols", fox ? rowScratch(sLen) : Value());
  args.add("dg", fox ? allocResult(b, loc, grads[3], bDim, hq, sLen) : Value());

  Value rows = arith::ConstantIndexOp::create(b, loc, kRows);
  Value bh = arith::MulIOp::create(b, loc, bDim, hq);
  Value bhk = arith::MulIOp::create(b, loc, bDim, hk);
  Value queryTiles = arith::CeilDivUIOp::create(b, loc, tLen, rows);
  Value keyTiles = arith::CeilDivUIOp::create(b, loc, sLen, rows);
  using Builder = void (*)(func::FuncOp, const KernelArgs &, const FlashGrad &);
  auto kernelOf = [&](StringRef suffix, Builder build, Value grid0,
                      Value grid1) {
    func::FuncOp kernel = args.createKernel(fwd, symbols, suffix);
    kernel->setAttr("attn_block.num_warps", b.getI64IntegerAttr(kGpuWarps));
    build(kernel, args, fg);
    args.launch(b, loc, kernel, grid0, grid1);
  };
  kernelOf("grad_delta", buildDelta, queryTiles, bh);
  if (fg.dqWalk)
    kernelOf("grad_dq", buildDq, queryTiles, bh);
  kernelOf("grad_dkdv", buildDkDv, keyTiles, bhk);
  if (dqCast)
    kernelOf("grad_dq_cast", buildDqCast, queryTiles, bh);
  if (fox)
    kernelOf("grad_dg", buildGateGrad, bh,
             arith::ConstantIndexOp::create(b, loc, 1));
  if (rope)
    launchRopeInverse(fwd, symbols, b, tables,
                      {{args.value("dq"), dq}, {args.value("dk"), dk}});

  SmallVector<Value> results;
  Value buffers[] = {dq, dk, args.value("dv"), args.value("dg")};
  for (auto [buf, grad] : llvm::zip(buffers, grads))
    results.push_back(bufferization::ToTensorOp::create(
        b, loc, grad.getType(), buf, /*restrict=*/true, /*writable=*/true));
  op->replaceAllUsesWith(results);
  op.erase();
  fwd.erase();
}
