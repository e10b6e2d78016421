//===- PathToBlock.cpp - PaTH attention -> chunked block kernels ----------===//
//
// PaTH / PaTH-FoX (spec/path_fox.md §2, fla's forward) for every target:
// two 4-warp kernels over chunks of C positions, every operand global ->
// shared -> registers. The chunk kernel, grid (ceil(S/C), B*Hk), inverts
// I + A by columns and stores W, U, KC and Khat; the attention kernel, grid
// (query chunks, B*Hq), computes the diagonal block in registers, then
// walks right to left carrying q~ (f32). On a GPU the f32 operands are
// split hi + lo for the tensor cores (the transport: path-transport); the
// CPU runs the same kernels with f32 operands (GpuTiles::opElt).
// Design and precision: docs/block-program.md, "PaTH's kernels".
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "GpuTiles.h"
#include "NonFiniteRows.h"
#include "PackedSequences.h"
#include "PathTiles.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Warps of both kernels: on a GPU C = 16 * kWarps rows, one m16 tile per
/// warp.
constexpr int64_t kWarps = kGpuWarps;
constexpr int64_t kGpuChunk = kGpuRows;
/// Rows of the column inverse's diagonal blocks (invertUnitLower): one
/// warp's m16 tile; C is a multiple of it on every target.
constexpr int64_t kInverseBlock = 16;

/// Whether f32 tiles become operands `opElt` as a 16-bit pair hi + lo (the
/// tensor cores) or whole (the CPU's f32).
bool splitsOperands(Type opElt) { return opElt.getIntOrFloatBitWidth() == 16; }

/// An f32 tile as the operands the kernel computes: on a GPU a 16-bit pair
/// hi + lo, on the CPU the f32 tile itself (lo null).
struct Split {
  Value hi, lo;
};

/// GpuTiles with PaTH's own pieces: the hi/lo splits of f32 operands, the
/// tiles of `mem`'s dims 2 and 3, local masks.
struct GpuPathTiles : GpuTiles {
  GpuPathTiles(OpBuilder &b, Location loc, Type elt, bool wgmma, Type opElt)
      : GpuTiles(b, loc, elt, wgmma, opElt) {}
  GpuPathTiles(OpBuilder &nb, const GpuPathTiles &o)
      : GpuTiles(nb, o.loc, o.elt, o.wgmma, o.opElt) {
    freshReads = o.freshReads;
    skipsZeroProbabilities = o.skipsZeroProbabilities;
  }

  /// Whether dotSplit2 reads its hi buffer afresh (a barrier before the
  /// second read); set for D > 64, see dotSplit2.
  bool freshReads = false;

  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  /// The 16-bit rounding of x - hi (hi = round(x)).
  Value lowHalf(Value x, Value hi) {
    return round(sub(x, arith::ExtFOp::create(b, loc, x.getType(), hi)));
  }
  Split split(Value x) {
    Value hi = round(x);
    return {hi, splitsOperands(opElt) ? lowHalf(x, hi) : Value()};
  }
  /// The copies of a split's halves at `at` of `mem` and `memLo` into `buf`
  /// and `bufLo` (the lo ones absent on the CPU), added to `tokens`.
  void copySplit(SmallVectorImpl<Value> &tokens, Value mem, Value memLo,
                 ValueRange at, Value buf, Value bufLo) {
    tokens.push_back(copy(mem, at, buf));
    if (memLo)
      tokens.push_back(copy(memLo, at, bufLo));
  }
  /// Stores `x`'s split into `mem` and `memLo` (null on the CPU).
  void storeSplit(Value x, Value mem, Value memLo, ValueRange at) {
    Split xs = split(x);
    store(xs.hi, mem, at);
    if (xs.lo)
      store(xs.lo, memLo, at);
  }
  /// acc + x (yHi + yLo) for a 16-bit A operand x and a hi/lo pair of
  /// shared buffers, each read as the B operand right before its product:
  /// one B tile is live at a time (at D = 128 one is 128 registers).
  Value dot2(Value x, Value bufHi, Value bufLo, Value accv,
             bool transposeB = false) {
    accv = dot(x, operand(bufHi, 1), accv, transposeB);
    if (!bufLo)
      return accv;
    return dot(x, operand(bufLo, 1), accv, transposeB);
  }
  /// acc + x y for an f32 tile x split into 16-bit hi + lo and a hi/lo
  /// pair y in shared buffers: hi yHi + hi yLo + lo yHi (lo lo is below
  /// f32's last digits). x's lo half is formed after hi's products, so
  /// both halves are never live at once (yHi is read twice instead). With
  /// `freshReads` a barrier before the second read of yHi makes it a second
  /// read: without it the compiler reuses the registers of the first (two
  /// reads of one buffer with no write between), which keeps the whole B
  /// tile live across the yLo product, 128 registers a thread for a
  /// [64, 128] tile (ptxas -arch=sm_90 at D = 128: spill stores 192 -> 0
  /// bytes in the chunk kernel, 1680 -> 348 in the attention kernel). At
  /// D = 64 the kernels hold the reused tiles and the barrier cost spills
  /// (attention kernel 48 -> 84 bytes); docs/block-program.md, "PaTH's GPU
  /// form".
  Value dotSplit2(Value x, Value bufHi, Value bufLo, Value accv,
                  bool transposeB = false) {
    Value hi = round(x);
    Value hiA = asA(hi);
    if (!bufLo)
      return dot(hiA, operand(bufHi, 1), accv, transposeB);
    accv = dot(hiA, operand(bufHi, 1), accv, transposeB);
    accv = dot(hiA, operand(bufLo, 1), accv, transposeB);
    if (freshReads)
      blk::BarrierOp::create(b, loc);
    return dot(asA(lowHalf(x, hi)), operand(bufHi, 1), accv, transposeB);
  }

  /// A 2-D tile of `mem` (dims 2, 3) in the accumulator layout, as f32.
  Value loadAcc(Value mem, ValueRange at, ArrayRef<int64_t> shape) {
    return GpuTiles::loadAcc(mem, at, shape, {2, 3});
  }
  /// A 1-D tile along dim 2 of `mem` at `at` in slice `enc`, as f32.
  Value loadSlice(Value mem, ValueRange at, int64_t n, Attribute enc) {
    return GpuTiles::loadSlice(mem, at, 2, n, enc);
  }
  /// FoX's G' along dim 2 at `at` in slice `enc`, in its own type (f64 on
  /// the CPU: gatePrefixInF64).
  Value loadGate(Value gPrime, ValueRange at, int64_t n, Attribute enc) {
    Type e = cast<MemRefType>(gPrime.getType()).getElementType();
    return blk::LoadOp::create(b, loc, slice(n, enc, e), gPrime, at,
                               b.getDenseI64ArrayAttr({2}),
                               b.getF64FloatAttr(0.0));
  }
  void store(Value t, Value mem, ValueRange at) {
    GpuTiles::store(t, mem, at, {2, 3});
  }
  /// Stores a 1-D tile along dim 2 of `mem` at `at`.
  void storeSlice(Value t, Value mem, ValueRange at) {
    GpuTiles::store(t, mem, at, {2});
  }
  /// The [n, n] i1 tile `column + shift pred row` over local indices.
  Value localMask(CmpIPredicate pred, int64_t n, int64_t shift = 0) {
    Value r = spread(iotaIn(row, idx(0), n), 1, n, n);
    Value c = spread(iotaIn(col, idx(shift), n), 0, n, n);
    return cmpi(pred, c, r);
  }
  Value keep(Value mask, Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    return select(mask, t, splatF(type, 0.0));
  }
  /// Where x is NaN or infinite (x - x is NaN there, 0 elsewhere).
  Value nonFinite(Value x) {
    Value z = sub(x, x);
    return cmpf(CmpFPredicate::UNO, z, z);
  }
  /// `t` with `v` where the f32 tile `count` (t's shape) is above 0.
  Value replaceWhere(Value count, double v, Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    return select(cmpf(CmpFPredicate::OGT, count, splatF(type, 0.0)),
                  splatF(type, v), t);
  }
  Value poisonWhere(Value count, Value t) {
    return replaceWhere(count, std::numeric_limits<double>::quiet_NaN(), t);
  }
};

/// X = (I + A)^-1 for the strictly lower [C, C] tile A in `aMem` (at
/// `at`), by blocks of kBlock rows (one warp's):
///  1. the diagonal blocks' inverses D by columns, right to left, all
///     C / kBlock blocks in one step, X[:, c] = e_c - sum_i X[:, i] A[i, c]
///     (A strictly lower: only final columns meet A[:, c]): kBlock steps
///     of whole-tile ops instead of C. Each step's A vector holds, at row i,
///     A[i, the column of i's block]: block diagonal X reads only those.
///  2. the rest by block forward substitution, X <- D - (D A_off) X from
///     X = D, A_off the blocks below the diagonal: after k rounds the
///     first k + 1 row blocks are final, so C / kBlock - 1 rounds.
/// The B operands (A_off, X) go through `scratch` (split: hi / lo, lo null
/// on the CPU) into the shared `bufs`, as the chunk kernel's T does.
Value invertUnitLower(GpuPathTiles &t, const PathProgram &p, int64_t c,
                      Value aMem, std::array<Value, 2> scratch,
                      std::array<Value, 2> bufs, ArrayRef<Value> at) {
  constexpr int64_t kBlock = kInverseBlock;
  const int64_t kBlocks = c / kBlock;
  Location loc = t.loc;
  Value rowIdx = t.iotaIn(t.row, t.idx(0), c);
  Value colIdx = t.iotaIn(t.col, t.idx(0), c);
  // The slice whose element i is element i of slices[i / kBlock]; `pos`
  // is rowIdx or colIdx, the slices' layout.
  auto pickByBlock = [&](GpuPathTiles &x, Value pos,
                         ArrayRef<Value> slices) -> Value {
    auto posType = cast<RankedTensorType>(pos.getType());
    Value v = slices[kBlocks - 1];
    for (int64_t blk = kBlocks - 2; blk >= 0; --blk)
      v = x.select(x.cmpi(CmpIPredicate::slt, pos,
                          x.splatIdx(posType, x.idx((blk + 1) * kBlock))),
                   slices[blk], v);
    return v;
  };
  // The same for one index value per block.
  auto byBlock = [&](GpuPathTiles &x, Value pos,
                     ArrayRef<Value> vals) -> Value {
    SmallVector<Value> splats;
    for (Value v : vals)
      splats.push_back(x.splatIdx(cast<RankedTensorType>(pos.getType()), v));
    return pickByBlock(x, pos, splats);
  };
  auto loop = scf::ForOp::create(
      t.b, loc, t.idx(0), t.idx(kBlock), t.idx(1), ValueRange{t.zeros({c, c})},
      [&](OpBuilder &nb, Location, Value n, ValueRange state) {
        GpuPathTiles x(nb, t);
        // Column kBlock - 1 - n of every block, and A's column of it.
        SmallVector<Value> cols;
        SmallVector<Value> aCols;
        for (int64_t blk = 0; blk < kBlocks; ++blk) {
          cols.push_back(
              arith::SubIOp::create(nb, loc, x.idx((blk + 1) * kBlock - 1), n));
          aCols.push_back(x.loadSlice(
              aMem, {p.b, p.kvHead, p.pos0, cols.back()}, c, x.col));
        }
        Value aVec = pickByBlock(x, colIdx, aCols);
        Value sum = x.rowReduce(blk::ReduceKind::sum,
                                x.mul(state[0], x.spread(aVec, 0, c, c)));
        // Row r's column: the one of r's block.
        Value target = byBlock(x, rowIdx, cols);
        Value unit = x.select(x.cmpi(CmpIPredicate::eq, rowIdx, target),
                              x.splatF(x.slice(c, x.row), 1.0),
                              x.splatF(x.slice(c, x.row), 0.0));
        Value isCol = x.cmpi(CmpIPredicate::eq, x.spread(colIdx, 0, c, c),
                             x.spread(target, 1, c, c));
        Value next =
            x.select(isCol, x.spread(x.sub(unit, sum), 1, c, c), state[0]);
        scf::YieldOp::create(nb, loc, ValueRange{next});
      });
  Value d = loop.getResult(0);

  // A_off: A where the key's block is left of the row's.
  SmallVector<Value> starts;
  for (int64_t blk = 0; blk < kBlocks; ++blk)
    starts.push_back(t.idx(blk * kBlock));
  Value below = t.cmpi(CmpIPredicate::slt, t.spread(colIdx, 0, c, c),
                       t.spread(byBlock(t, rowIdx, starts), 1, c, c));
  Value aOff = t.keep(below, t.loadAcc(aMem, at, {c, c}));
  // y as the B operand in `bufs`: through the scratch, then shared.
  auto toShared = [&](Value y) {
    t.storeSplit(y, scratch[0], scratch[1], at);
    t.barrier();
    SmallVector<Value> tokens;
    t.copySplit(tokens, scratch[0], scratch[1], at, bufs[0], bufs[1]);
    t.landCopies(tokens);
  };
  toShared(aOff);
  Value negM = t.neg(t.dotSplit2(d, bufs[0], bufs[1], t.zeros({c, c})));
  t.barrier();
  Value x = d;
  for (int64_t round = 1; round < kBlocks; ++round) {
    toShared(x);
    x = t.dotSplit2(negM, bufs[0], bufs[1], d);
    t.barrier();
  }
  return x;
}

/// The element types of PaTH's kernels: `elt` of q, k, v; `opElt` of the
/// operands the kernels compute (GpuTiles::opElt); the transport's (opElt,
/// or f16 with the GPU's f16 transport).
struct PathTypes {
  Type elt, opElt, transport;
  /// The walk's transport through a chunk as one dot by the dense D x D
  /// matrix N = -W^T U (PathShape::dense; kept in f32, so not where f32
  /// operands are split: the GPU keeps the low-rank dots).
  bool dense = false;
  bool f16Transport() const { return transport != opElt; }
};

/// N = -W^T U [D, D] of the chunk at `at` (W in `sW`, U stored at `uMem`),
/// rows [chunk * D, chunk * D + D) of `nMem`; NaN where a position is
/// marked in `badMem` (buildChunkKernel). W^T is dot(I, W^T): the block
/// program transposes only dot's B operand.
void storeDenseTransport(GpuPathTiles &t, const PathProgram &p, int64_t c,
                         int64_t d, Value uMem, Value sW, Value nMem,
                         Value badMem, ArrayRef<Value> at) {
  t.barrier(); // U is in global memory
  Value sU = t.alloc({c, d}, t.opElt);
  t.landCopies({t.copy(uMem, at, sU)});
  Value ones = t.splatF(t.acc({d, d}), 1.0);
  Value eye = t.keep(t.localMask(CmpIPredicate::eq, d), ones);
  Value wT = t.dot(t.asA(t.round(eye)), t.operand(sW, 1), t.zeros({d, c}),
                   /*transposeB=*/true);
  wT = t.poisonWhere(
      t.spread(t.loadSlice(badMem, at.take_front(3), c, t.col), 0, d, c), wT);
  Value n = t.dot(t.asA(t.round(t.neg(wT))), t.operand(sU, 1), t.zeros({d, d}));
  Value row = arith::MulIOp::create(t.b, t.loc, p.chunk, t.idx(d));
  t.store(n, nMem, {p.b, p.kvHead, row, t.idx(0)});
}

/// Kernel 1 (its arguments: lowerPathAttention): A, T and W's split are its
/// own scratch; it stores U and KC (split, or in f16 with W as "wOut") for
/// the attention kernel, and Khat.
void buildChunkKernel(func::FuncOp kernel, const KernelArgs &args,
                      const PathShape &ps, const PathTypes &ty, bool wgmma,
                      Location loc) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  GpuPathTiles t(b, loc, ty.elt, wgmma, ty.opElt);
  t.freshReads = ps.d > 64 && !wgmma;
  auto arg = [&](StringRef name) { return args.in(kernel, name); };
  Value k = arg("k"), w = arg("w"), betaMem = arg("beta"), aMem = arg("a"),
        tMem = arg("t"), tLoMem = arg("tLo"), wMem = arg("wSplit"),
        wLoMem = arg("wSplitLo"), khatMem = arg("khat");
  int64_t c = ps.c, d = ps.d;
  PathProgram p = programIndices(t, Value(), k, c);
  SmallVector<Value> at = {p.b, p.kvHead, p.pos0, t.idx(0)};
  GpuPathTiles h(b, loc, ty.transport, wgmma, ty.transport);
  // Where the attention kernel's operands go: U, KC as splits (W's is this
  // kernel's own), or W, U, KC in f16.
  auto storeOut = [&](Value x, StringRef name) {
    if (ty.f16Transport())
      return h.store(h.round(x), arg(name), at);
    t.storeSplit(x, arg(name), arg((name + "Lo").str()), at);
  };

  SmallVector<Value> sliceAt = {p.b, p.kvHead, p.pos0};
  // A non-finite w_t or beta_t (docs/input-limits.md, "Non-finite
  // values"): the chunk computes with H_t = I (both read as 0), so that
  // what t does not reach is the same as with finite values there. It
  // marks t in `bad` (1, else 0) and `badUpTo` (the chunk's marks up to
  // each position), and poisons what t reaches: the rows of Khat before t,
  // and the attention kernel's W, whose row t is NaN, so that every
  // transport through the chunk is (the attention kernel takes W's NaN
  // columns out of its in-chunk products).
  Value wTile = t.loadAcc(w, at, {c, d});
  // beta (a slice in `enc`) with its non-finite values read as 0.
  auto finiteBeta = [&](Value beta, Attribute enc) {
    return t.select(t.nonFinite(beta), t.splatF(t.slice(c, enc), 0.0), beta);
  };
  Value betaRows = t.loadSlice(betaMem, sliceAt, c, t.row);
  Value badRows =
      t.ori(t.nonFinite(t.rowReduce(blk::ReduceKind::sum, t.sub(wTile, wTile))),
            t.nonFinite(betaRows));
  Value badMem = arg("bad");
  Value bad = t.select(badRows, t.splatF(t.slice(c, t.row), 1.0),
                       t.splatF(t.slice(c, t.row), 0.0));
  t.storeSlice(bad, badMem, sliceAt);
  Value badW = t.spread(bad, 1, c, d);
  wTile = t.replaceWhere(badW, 0.0, wTile);
  t.storeSplit(wTile, wMem, wLoMem, at);
  if (ty.f16Transport())
    h.store(h.round(t.poisonWhere(badW, wTile)), arg("wOut"), at);
  blk::BarrierOp::create(b, loc);
  Value sW = t.alloc({c, d}, ty.opElt);
  Value sWLo = wLoMem ? t.alloc({c, d}, ty.opElt) : Value();
  Value sK = t.alloc({c, d});
  Value sT = t.alloc({c, c}, ty.opElt);
  Value sTLo = tLoMem ? t.alloc({c, c}, ty.opElt) : Value();
  SmallVector<Value> tokens;
  t.copySplit(tokens, wMem, wLoMem, at, sW, sWLo);
  tokens.push_back(t.copy(k, at, sK));
  t.landCopies(tokens);
  // Operand tiles are read from shared memory where they are used (W's
  // rows as the keys of a transpose_b dot, W^T, or as the B of T W), so
  // that no register tile lives across the substitution.

  // (`bad` was stored above the landed copies' barrier.)
  Value badCols = t.spread(t.loadSlice(badMem, sliceAt, c, t.col), 0, c, c);
  Value badUpTo =
      t.rowReduce(blk::ReduceKind::sum,
                  t.keep(t.localMask(CmpIPredicate::sle, c), badCols));
  Value badTotal = t.rowReduce(blk::ReduceKind::sum, badCols);
  t.storeSlice(badUpTo, arg("badUpTo"), sliceAt);

  // A = stril(beta W W^T), to the scratch its columns are read from.
  Value a = t.dotSplit2(wTile, sW, sWLo, t.zeros({c, c}), /*transposeB=*/true);
  a = t.mul(a, t.spread(finiteBeta(betaRows, t.row), 1, c, c));
  a = t.keep(t.localMask(CmpIPredicate::slt, c), a);
  t.store(a, aMem, at);
  blk::BarrierOp::create(b, loc);

  Value x = invertUnitLower(t, p, c, aMem, {tMem, tLoMem}, {sT, sTLo}, at);
  // T = X diag(beta), then U = T W.
  Value tt = t.mul(
      x, t.spread(finiteBeta(t.loadSlice(betaMem, sliceAt, c, t.col), t.col), 0,
                  c, c));
  t.storeSplit(tt, tMem, tLoMem, at);
  storeOut(t.dotSplit2(tt, sW, sWLo, t.zeros({c, d})), "u");

  // KC = stril'(K W^T) T^T: T comes back through shared memory as the B
  // operand (rows of T are its [N, K] rows).
  Value kw =
      t.dot2(t.operand(sK, 0), sW, sWLo, t.zeros({c, c}), /*transposeB=*/true);
  kw = t.keep(t.localMask(CmpIPredicate::sgt, c), kw);
  blk::BarrierOp::create(b, loc);
  SmallVector<Value> tCopies;
  t.copySplit(tCopies, tMem, tLoMem, at, sT, sTLo);
  t.landCopies(tCopies);
  Value kc = t.dotSplit2(kw, sT, sTLo, t.zeros({c, c}), /*transposeB=*/true);
  storeOut(kc, "kc");
  if (ty.dense)
    storeDenseTransport(t, p, c, d, arg("u"), sW, arg("n"), badMem, at);
  // Khat = K - KC W: the keys moved to the chunk end, in k's type (the
  // attention kernel's key buffer holds k, then Khat).
  Value khat = t.dotSplit2(t.neg(kc), sW, sWLo, t.loadAcc(k, at, {c, d}));
  // Key j's row crosses the marks after it.
  khat = t.poisonWhere(t.spread(t.sub(badTotal, badUpTo), 1, c, d), khat);
  t.store(t.convert(khat, ty.elt), khatMem, at);
  // The attention kernel reads this kernel's W split: poisoned now that
  // the copies above have read it.
  if (!ty.f16Transport())
    t.storeSplit(
        t.poisonWhere(t.spread(bad, 1, c, d), t.loadAcc(w, at, {c, d})), wMem,
        wLoMem, at);
  func::ReturnOp::create(b, loc);
}

/// The attention kernel's tiles: W, U, KC as splits (the lo halves null on
/// the CPU) or in f16 (f16 transport, the lo halves null).
struct AttnTiles {
  Value q, k, v, w, wLo, u, uLo, kc, kcLo;
  Value n; ///< the dense transports (PathTypes::dense), else null
  /// The chunk kernel's marks of non-finite w or beta (operands only).
  Value bad, badUpTo;
};
/// The global operands.
using AttnOperands = AttnTiles;
/// The shared buffers, one stage each: the diagonal block's tiles, then
/// each walk step's (K holds Khat there).
using AttnBuffers = AttnTiles;

/// Packed sequences: whether key j0 + col is in the sequence of its row's
/// query (a key before the row's start is another sequence's; the walk
/// never reaches keys after a query).
Value sameSequence(GpuPathTiles &x, Value j0, int64_t c,
                   const SequenceBounds &seqs) {
  return x.cmpi(CmpIPredicate::sge, x.spread(x.iotaIn(x.col, j0, c), 0, c, c),
                x.spread(seqs.starts, 1, c, c));
}

/// The softmax state of the walk (and of the diagonal block). `qt` is the
/// transported query; with the f16 transport it is stored divided by the
/// row scale `rowScale` (loop-invariant, null with the split transport).
struct WalkState {
  Value qt, m, l, acc;
};

/// The transport's precision (the `path-transport` option): `split`
/// splits each f32 operand into a 16-bit hi / lo pair (three products a
/// dot); `f16` rounds each once to f16 (one product) and keeps q~ at a
/// per-row scale so that its rows have max |.| = 1: f16's 11 bits (bf16
/// has 8) at no risk of its range, since a PaTH step (beta in [0, 2], |w|
/// = 1) does not lengthen q~. docs/block-program.md, "PaTH's kernels on a GPU".
struct Transport {
  bool split;
  Value rowScale; ///< max_d |q c| per row (f16 only)
};

/// The copies of one chunk's W, U (and their lo halves) into `s`.
SmallVector<Value> transportCopies(GpuPathTiles &x, const AttnOperands &g,
                                   ValueRange at, const AttnBuffers &s) {
  SmallVector<Value> tokens = {x.copy(g.w, at, s.w), x.copy(g.u, at, s.u)};
  if (g.wLo)
    tokens.append({x.copy(g.wLo, at, s.wLo), x.copy(g.uLo, at, s.uLo)});
  return tokens;
}

/// acc + x y (y^T with transposeB) for an f32 tile x and the shared tile
/// y (and its lo half): dotSplit2, or one f16 product.
Value transportDot(GpuPathTiles &x, const Transport &tr, Value a, Value y,
                   Value yLo, Value accv, bool transposeB = false) {
  if (tr.split)
    return x.dotSplit2(a, y, yLo, accv, transposeB);
  Type f16 = x.b.getF16Type();
  GpuPathTiles h(x.b, x.loc, f16, x.wgmma, f16);
  return h.dot(h.asA(h.round(a)), h.operand(y, 1), accv, transposeB);
}

/// Kernel 2's diagonal block: q^ and the in-chunk softmax state; sets
/// tr.rowScale for the f16 transport.
WalkState diagonalBlock(GpuPathTiles &t, const PathShape &ps,
                        const PathProgram &p, const AttnOperands &g,
                        Value gPrime, const AttnBuffers &s, Transport &tr,
                        const SequenceBounds &seqs) {
  int64_t c = ps.c, d = ps.d, dv = ps.dv;
  Value c0 = t.idx(0);
  SmallVector<Value> kvAt = {p.b, p.kvHead, p.pos0, c0};
  SmallVector<Value> qAt = {p.b, p.head, p.row0, c0};
  SmallVector<Value> kvSlice = {p.b, p.kvHead, p.pos0};
  SmallVector<Value> tokens = {t.copy(g.q, qAt, s.q), t.copy(g.k, kvAt, s.k),
                               t.copy(g.v, kvAt, s.v),
                               t.copy(g.kc, kvAt, s.kc)};
  if (g.kcLo)
    tokens.push_back(t.copy(g.kcLo, kvAt, s.kcLo));
  tokens.append(transportCopies(t, g, kvAt, s));
  t.landCopies(tokens);
  Value qA = t.operand(s.q, 0);
  auto scale = [&](Value x) {
    return t.mul(x, t.splatF(cast<RankedTensorType>(x.getType()), ps.qScale));
  };
  auto rowType = t.slice(c, t.row);
  Value q0 = scale(t.loadAcc(g.q, qAt, {c, d}));
  Value qw;
  if (tr.split) {
    qw = scale(t.dot2(qA, s.w, s.wLo, t.zeros({c, c}), /*transposeB=*/true));
  } else {
    // The row scale: max |q c| (1 for a zero row), and q c / it.
    Value mx = t.rowReduce(blk::ReduceKind::max, t.maxf(q0, t.neg(q0)));
    tr.rowScale = t.select(t.cmpf(CmpFPredicate::OEQ, mx, t.splatF(rowType, 0)),
                           t.splatF(rowType, 1.0), mx);
    Value inv = t.div(t.splatF(rowType, 1.0), tr.rowScale);
    q0 = t.mul(q0, t.spread(inv, 1, c, d));
    qw = transportDot(t, tr, q0, s.w, Value(), t.zeros({c, c}),
                      /*transposeB=*/true);
  }
  // W's NaN rows (buildChunkKernel) are 0 here.
  qw = t.replaceWhere(t.spread(t.loadSlice(g.bad, kvSlice, c, t.col), 0, c, c),
                      0.0, qw);
  // q_i^T H_i ... H_a: the query's projections on the w's up to its own.
  Value nqw = t.neg(t.keep(t.localMask(CmpIPredicate::sle, c), qw));
  Value qhat = transportDot(t, tr, nqw, s.u, s.uLo, q0);
  // Non-finite w or beta at t (buildChunkKernel): q^ of the rows from t
  // on, and the cells (i, j) with j < t <= i, are NaN.
  Value badRows = t.loadSlice(g.badUpTo, kvSlice, c, t.row);
  qhat = t.poisonWhere(t.spread(badRows, 1, c, d), qhat);
  // Exact in-chunk logits q K^T - QW KC^T.
  Value sc =
      scale(t.dot(qA, t.operand(s.k, 1), t.zeros({c, c}), /*transposeB=*/true));
  if (tr.split) {
    sc = transportDot(t, tr, nqw, s.kc, s.kcLo, sc, /*transposeB=*/true);
  } else {
    Value corr = transportDot(t, tr, nqw, s.kc, Value(), t.zeros({c, c}),
                              /*transposeB=*/true);
    sc = t.add(sc, t.mul(corr, t.spread(tr.rowScale, 1, c, c)));
  }
  if (gPrime) {
    // gamma log2(e) (G_i - G_j) = G'_j - G'_i (one statement each: the IR's
    // order does not hang on the compiler's argument order).
    Value gi = t.loadGate(gPrime, {p.b, p.head, p.pos0}, c, t.row);
    Value gj = t.loadGate(gPrime, {p.b, p.head, p.pos0}, c, t.col);
    sc = t.addFoxBias(sc, gi, gj, -1.0);
  }
  sc = t.poisonWhere(
      t.sub(t.spread(badRows, 1, c, c),
            t.spread(t.loadSlice(g.badUpTo, kvSlice, c, t.col), 0, c, c)),
      sc);
  Value sLen = memref::DimOp::create(t.b, t.loc, g.k, 2);
  // Causal inside the chunk, keys before S, and with a window
  // key + window > query.
  Value inS = t.cmpi(CmpIPredicate::slt, t.iotaIn(t.col, p.pos0, c),
                     t.splatIdx(t.slice(c, t.col, t.b.getI64Type()), sLen));
  Value valid =
      t.andi(t.localMask(CmpIPredicate::sle, c), t.spread(inS, 0, c, c));
  if (ps.mask == MaskKind::sliding_window)
    valid = t.andi(valid, t.localMask(CmpIPredicate::sgt, c, ps.window));
  if (seqs.starts)
    valid = t.andi(valid, sameSequence(t, p.pos0, c, seqs));
  sc = t.select(valid, sc, t.splatF(t.acc({c, c}), -kInf));
  Value m = t.rowReduce(blk::ReduceKind::max, sc);
  Value pr = t.exp2(t.sub(sc, t.spread(t.safeMax(m), 1, c, c)));
  Value l = t.rowReduce(blk::ReduceKind::sum, pr);
  Value acc = t.probabilityProduct(
      t.dot(t.asA(t.round(pr)), t.operand(s.v, 1), t.zeros({c, dv})));
  return {qhat, m, l, acc};
}

/// The first half of a walk step over key chunk `j0` (Khat and V in `s`):
/// the scores, the online softmax and P V; q~ is unchanged.
WalkState attendStep(GpuPathTiles &x, const PathShape &ps, const PathProgram &p,
                     const Transport &tr, Value gPrime, Value gRows,
                     Value rowPos, Value j0, const AttnBuffers &s,
                     const WalkState &st, const SequenceBounds &seqs) {
  int64_t c = ps.c, dv = ps.dv;
  Value sc = x.dot(x.asA(x.round(st.qt)), x.operand(s.k, 1), x.zeros({c, c}),
                   /*transposeB=*/true);
  if (tr.rowScale)
    sc = x.mul(sc, x.spread(tr.rowScale, 1, c, c));
  if (gPrime)
    sc = x.addFoxBias(sc, gRows,
                      x.loadGate(gPrime, {p.b, p.head, j0}, c, x.col), -1.0);
  if (ps.mask == MaskKind::sliding_window) {
    // key + window > query.
    Value shifted = arith::AddIOp::create(x.b, x.loc, j0, x.idx(ps.window));
    Value keys = x.spread(x.iotaIn(x.col, shifted, c), 0, c, c);
    sc = x.select(x.cmpi(CmpIPredicate::sgt, keys, x.spread(rowPos, 1, c, c)),
                  sc, x.splatF(x.acc({c, c}), -kInf));
  }
  // Packed sequences: only the chunks before the last row's start can hold
  // another sequence's keys.
  if (seqs.starts) {
    auto type = cast<RankedTensorType>(sc.getType());
    auto ifOp = scf::IfOp::create(
        x.b, x.loc, TypeRange{type},
        seqs.mayCross(x.b, x.loc, j0, c, /*byStarts=*/true, /*byEnds=*/false),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(x.b);
    x.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(x.b, x.loc,
                         ValueRange{x.select(sameSequence(x, j0, c, seqs), sc,
                                             x.splatF(type, -kInf))});
    x.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(x.b, x.loc, ValueRange{sc});
    sc = ifOp.getResult(0);
  }
  Value mNew = x.maxf(st.m, x.rowReduce(blk::ReduceKind::max, sc));
  Value mSafe = x.safeMax(mNew);
  Value alpha = x.exp2(x.sub(st.m, mSafe));
  Value pr = x.exp2(x.sub(sc, x.spread(mSafe, 1, c, c)));
  Value lNew = x.add(x.mul(st.l, alpha), x.rowReduce(blk::ReduceKind::sum, pr));
  Value accNew =
      x.probabilityProduct(x.dot(x.asA(x.round(pr)), x.operand(s.v, 1),
                                 x.mul(st.acc, x.spread(alpha, 1, c, dv))));
  return {st.qt, mNew, lNew, accNew};
}

/// The second half: q~ <- q~ - (q~ W^T) U through the chunk (W, U in `s`),
/// or q~ + q~ N (the dense transport N in `s`).
Value transportStep(GpuPathTiles &x, const PathShape &ps, const Transport &tr,
                    const AttnBuffers &s, Value qt) {
  if (s.n)
    return x.dot(x.asA(x.round(qt)), x.operand(s.n, 1), qt);
  Value r = transportDot(x, tr, qt, s.w, s.wLo, x.zeros({ps.c, ps.c}),
                         /*transposeB=*/true);
  return transportDot(x, tr, x.neg(r), s.u, s.uLo, qt);
}

/// Kernel 2 (its arguments: lowerPathAttention).
void buildAttentionKernel(func::FuncOp kernel, const KernelArgs &args,
                          const PathShape &ps, const PathTypes &ty, bool wgmma,
                          FlashRows which, Location loc) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  GpuPathTiles t(b, loc, ty.elt, wgmma, ty.opElt);
  t.freshReads = ps.d > 64 && !wgmma;
  t.skipsZeroProbabilities = which != FlashRows::marking;
  auto arg = [&](StringRef name) { return args.in(kernel, name); };
  AttnOperands g;
  g.q = arg("q");
  g.k = arg("k");
  g.v = arg("v");
  Value gPrime = arg("gPrime");
  g.w = arg("w");
  g.wLo = arg("wLo");
  g.u = arg("u");
  g.uLo = arg("uLo");
  g.kc = arg("kc");
  g.kcLo = arg("kcLo");
  g.n = arg("n");
  g.bad = arg("bad");
  g.badUpTo = arg("badUpTo");
  Value khat = arg("khat"), out = arg("out");
  int64_t c = ps.c, d = ps.d, dv = ps.dv;
  PathProgram p =
      programIndices(t, g.q, g.k, c, /*reversed=*/which != FlashRows::redo);
  Value c0 = t.idx(0);
  // FlashRows: the rows that came out non-finite, [B, Hq, T] f32; a redo
  // program takes kRedoRowsPerProgram rows and writes only its marked
  // chunks (openRedoTile).
  Value marks = arg("rowsNonFinite");
  Operation *redoWalk = nullptr;
  if (which == FlashRows::redo) {
    Value chunks = arith::SubIOp::create(
        b, loc,
        arith::CeilDivUIOp::create(
            b, loc, memref::DimOp::create(b, loc, g.k, 2), t.idx(c)),
        p.firstChunk);
    auto at = [&](Value tile) {
      return programAtChunk(
          t, p, arith::AddIOp::create(b, loc, p.firstChunk, tile), c);
    };
    RedoTile redo =
        openRedoTile(b, loc, marks, p.b, p.head, chunks, c, kWarps,
                     /*wait=*/false, [&](Value tile) { return at(tile).row0; });
    p = at(redo.tile);
    redoWalk = redo.walk;
  }

  AttnBuffers s;
  s.q = t.alloc({c, d});
  s.k = t.alloc({c, d});
  s.v = t.alloc({c, dv});
  s.w = t.alloc({c, d}, ty.transport);
  s.u = t.alloc({c, d}, ty.transport);
  s.kc = t.alloc({c, c}, ty.transport);
  if (g.wLo) {
    s.wLo = t.alloc({c, d}, ty.opElt);
    s.uLo = t.alloc({c, d}, ty.opElt);
    s.kcLo = t.alloc({c, c}, ty.opElt);
  }
  if (g.n)
    s.n = t.alloc({d, d}, ty.opElt);
  Transport tr{!ty.f16Transport(), Value()};
  Value rowPos = t.iotaIn(t.row, p.pos0, c);
  // Packed sequences (T == S): each row's sequence start; the walk stops at
  // the first row's.
  SequenceBounds seqs;
  if (Value cu = arg("cuSeqlens"))
    seqs = sequenceBounds(b, loc, cu, p.pos0, c, rowPos, /*withEnds=*/false);
  WalkState st = diagonalBlock(t, ps, p, g, gPrime, s, tr, seqs);
  // Every warp is done with the diagonal's tiles before the walk refills.
  blk::BarrierOp::create(b, loc);

  Value gRows =
      gPrime ? t.loadGate(gPrime, {p.b, p.head, p.pos0}, c, t.row) : Value();
  Value lowChunk = walkLowChunk(t, ps, p.pos0);
  if (seqs.starts)
    lowChunk = arith::MaxSIOp::create(
        b, loc, lowChunk,
        arith::DivUIOp::create(b, loc, seqs.firstStart, t.idx(c)));
  Value steps = arith::SubIOp::create(b, loc, p.chunk, lowChunk);
  Value lowPos = arith::MulIOp::create(b, loc, lowChunk, t.idx(c));
  // The walk's copies run one half-step ahead of their use, in two groups
  // a chunk: Khat and V (for the scores and P V) land while the previous
  // chunk's transport runs, W and U while this chunk's scores run. One
  // buffer each: a group is issued right after the barrier that ends the
  // reads of its buffers. The chunk after the last is clamped to the last
  // (a copy nobody reads, always in bounds).
  auto nextChunk = [&](OpBuilder &nb, Value j) -> Value {
    Value prev = arith::SubIOp::create(nb, loc, j, t.idx(c));
    return arith::MaxSIOp::create(nb, loc, prev, lowPos);
  };
  auto copyKV = [&](GpuPathTiles &x, Value j) {
    SmallVector<Value> at = {p.b, p.kvHead, j, x.idx(0)};
    blk::AsyncCommitGroupOp::create(
        x.b, loc, ValueRange{x.copy(khat, at, s.k), x.copy(g.v, at, s.v)});
  };
  auto copyWU = [&](GpuPathTiles &x, Value j) {
    SmallVector<Value> at = {p.b, p.kvHead, j, x.idx(0)};
    if (!g.n)
      return (void)blk::AsyncCommitGroupOp::create(
          x.b, loc, transportCopies(x, g, at, s));
    Value row = arith::MulIOp::create(
        x.b, loc, arith::DivUIOp::create(x.b, loc, j, x.idx(c)), x.idx(d));
    blk::AsyncCommitGroupOp::create(
        x.b, loc, ValueRange{x.copy(g.n, {p.b, p.kvHead, row, x.idx(0)}, s.n)});
  };
  auto waitOlder = [&](GpuPathTiles &x) {
    blk::AsyncWaitOp::create(x.b, loc, ValueRange{}, 1);
    x.publish(); // wgmma: the copies reach the async proxy that reads them
  };
  Value first = nextChunk(b, p.pos0);
  copyKV(t, first);
  copyWU(t, first);
  auto loop = scf::ForOp::create(
      b, loc, c0, steps, t.idx(1), ValueRange{st.qt, st.m, st.l, st.acc},
      [&](OpBuilder &nb, Location, Value n, ValueRange state) {
        GpuPathTiles x(nb, t);
        Value j0 = arith::SubIOp::create(
            nb, loc, p.pos0,
            arith::MulIOp::create(nb, loc,
                                  arith::AddIOp::create(nb, loc, n, x.idx(1)),
                                  x.idx(c)));
        Value jNext = nextChunk(nb, j0);
        waitOlder(x); // Khat, V of j0
        WalkState next =
            attendStep(x, ps, p, tr, gPrime, gRows, rowPos, j0, s,
                       {state[0], state[1], state[2], state[3]}, seqs);
        x.barrier(); // every warp is done with Khat and V
        copyKV(x, jNext);
        waitOlder(x); // W, U of j0
        next.qt = transportStep(x, ps, tr, s, next.qt);
        x.barrier(); // every warp is done with W and U
        copyWU(x, jNext);
        scf::YieldOp::create(nb, loc,
                             ValueRange{next.qt, next.m, next.l, next.acc});
      });
  blk::AsyncWaitOp::create(b, loc, ValueRange{}, 0);
  Value l = loop.getResult(2), acc = loop.getResult(3);
  auto rowType = t.slice(c, t.row);
  Value empty = t.cmpf(CmpFPredicate::OEQ, l, t.splatF(rowType, 0.0));
  Value inv =
      t.select(empty, t.splatF(rowType, 0.0), t.div(t.splatF(rowType, 1.0), l));
  Value o = t.mul(acc, t.spread(inv, 1, c, dv));
  if (which == FlashRows::marking)
    markNonFiniteRows(b, loc, o, t.row, marks, {p.b, p.head, p.row0});
  o = t.convert(o, cast<MemRefType>(out.getType()).getElementType());
  if (which == FlashRows::redo)
    o = keepUnmarkedRows(b, loc, o, out, {p.b, p.head, p.row0, c0}, marks,
                         t.row);
  t.store(o, out, {p.b, p.head, p.row0, c0});
  // The redo kernel leaves the LSE as the main kernel stored it: it does
  // not depend on v.
  Value lseOut = which == FlashRows::redo ? Value() : arg("lse");
  if (lseOut) {
    // ln sum_j exp(z_j) = (m + log2 l) ln 2: the logits are in base 2 (q
    // carries scale log2(e), G' the gate's); -inf for a row without a
    // visible key.
    Value lse2 = t.add(loop.getResult(1), math::Log2Op::create(b, loc, l));
    Value lse = t.select(empty, t.splatF(rowType, -kInf),
                         t.mul(lse2, t.splatF(rowType, 1.0 / kPathLog2e)));
    blk::StoreOp::create(b, loc, lse, lseOut, ValueRange{p.b, p.head, p.row0},
                         b.getDenseI64ArrayAttr({2}));
  }
  if (redoWalk)
    b.setInsertionPointAfter(redoWalk);
  func::ReturnOp::create(b, loc);
}

void markGpuKernel(func::FuncOp kernel) {
  kernel->setAttr(
      "attn_block.num_warps",
      IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), kWarps));
}

} // namespace

std::string mlir::attn::checkPathSupport(AttentionOp op,
                                         const BlockTarget &target,
                                         int64_t pathChunk) {
  if (!target.gpu) {
    if (pathChunk % kInverseBlock != 0)
      return "the PaTH kernels run chunks of a multiple of " +
             std::to_string(kInverseBlock) +
             " positions (the column inverse's blocks), got path-chunk " +
             std::to_string(pathChunk);
    return "";
  }
  if (pathChunk != kGpuChunk)
    return "the PaTH GPU form runs chunks of " + std::to_string(kGpuChunk) +
           " positions (the rows of " + std::to_string(kWarps) +
           " warps' m16 tiles), got path-chunk " + std::to_string(pathChunk);
  Type e = cast<ShapedType>(op.getQ().getType()).getElementType();
  if (!e.isBF16() && !e.isF16())
    return "the PaTH GPU form takes bf16 or f16 q, k, v (the m16n8k16 "
           "mma.sync operands)";
  for (Value x : {op.getK(), op.getV()})
    if (cast<ShapedType>(x.getType()).getElementType() != e)
      return "the PaTH GPU form needs q, k and v of one element type";
  for (Value x : {op.getQ(), op.getV()}) {
    int64_t d = cast<ShapedType>(x.getType()).getDimSize(3);
    if (ShapedType::isDynamic(d) || d % 8 != 0 || d > 128)
      return "the PaTH GPU form needs static head dims that are multiples of "
             "8 up to 128 (16-byte chunks; its tiles pad them to 64 or 128), "
             "got " +
             (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  }
  return "";
}

void mlir::attn::lowerPathAttention(AttentionOp op, SymbolTable &symbols,
                                    const BlockLoweringConfig &cfg) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  const BlockTarget &target = cfg.target;
  int64_t c = cfg.pathChunk;
  PathShape ps = makePathShape(op, c);
  // The GPU's tiles pad the head dims (gpuTileHeadDim): zero columns of q,
  // k, w leave every product, and so every transform, as it is.
  if (target.gpu) {
    ps.d = gpuTileHeadDim(ps.d);
    ps.dv = gpuTileHeadDim(ps.dv);
  }
  PathTypes ty;
  ty.elt = cast<ShapedType>(op.getQ().getType()).getElementType();
  ty.opElt = target.gpu ? ty.elt : b.getF32Type();
  // The CPU's transport is f32 whatever path-transport says.
  ty.transport =
      target.gpu && !cfg.pathSplitTransport ? Type(b.getF16Type()) : ty.opElt;
  const bool splits = splitsOperands(ty.opElt);
  ty.dense = ps.dense() && !splits;

  auto dim = [&](Value x, int64_t i) -> Value {
    return tensor::DimOp::create(b, loc, x, i);
  };
  auto buffer = [&](Value x) -> Value {
    return bufferization::ToBufferOp::create(b, loc, bufferTypeOf(x), x,
                                             /*read_only=*/true);
  };
  Value q = buffer(op.getQ()), k = buffer(op.getK()), v = buffer(op.getV()),
        w = buffer(op.getW()), beta = buffer(op.getBeta());
  Value gPrime = op.getG() ? launchGatePrefix(op, symbols, b, false,
                                              gatePrefixInF64(target))
                           : Value();
  Value bDim = dim(op.getQ(), 0), hq = dim(op.getQ(), 1),
        tLen = dim(op.getQ(), 2), hk = dim(op.getK(), 1),
        sLen = dim(op.getK(), 2);

  // Scratch, O(B Hk S (C + D)): A (f32), T and W's split for the chunk
  // kernel itself; U and KC as splits (W's too) or W, U and KC in f16, and
  // Khat, for the attention kernel. A lo half exists where f32 operands
  // are split.
  auto scratch = [&](Type e, int64_t inner, Value len = {}) -> Value {
    return memref::AllocOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic,
                         ShapedType::kDynamic, inner},
                        e),
        ValueRange{bDim, hk, len ? len : sLen});
  };
  auto lo = [&](Type e, int64_t inner) {
    return splits ? scratch(e, inner) : Value();
  };
  bool f16 = ty.f16Transport();
  Type opElt = ty.opElt;
  Value aMem = scratch(b.getF32Type(), c), tMem = scratch(opElt, c),
        tLo = lo(opElt, c), wSplit = scratch(opElt, ps.d),
        wSplitLo = lo(opElt, ps.d), khat = scratch(ty.elt, ps.d);
  Value wOut = f16 ? scratch(ty.transport, ps.d) : Value();
  Value u = scratch(ty.transport, ps.d), uLo = f16 ? Value() : lo(opElt, ps.d);
  Value kc = scratch(ty.transport, c), kcLo = f16 ? Value() : lo(opElt, c);
  Value out = allocResult(b, loc, op.getResult(), bDim, hq, tLen);
  Value lse =
      op.getLse() ? allocResult(b, loc, op.getLse(), bDim, hq, tLen) : Value();
  Value cIdx = arith::ConstantIndexOp::create(b, loc, c);
  Value chunks = arith::CeilDivUIOp::create(b, loc, sLen, cIdx);
  // The dense transports: a [D, D] matrix per chunk.
  Value nMem = ty.dense
                   ? scratch(opElt, ps.d,
                             arith::MulIOp::create(
                                 b, loc, chunks,
                                 arith::ConstantIndexOp::create(b, loc, ps.d)))
                   : Value();

  KernelArgs chunkArgs;
  chunkArgs.add("k", k);
  chunkArgs.add("w", w);
  chunkArgs.add("beta", beta);
  chunkArgs.add("a", aMem);
  chunkArgs.add("t", tMem);
  chunkArgs.add("tLo", tLo);
  chunkArgs.add("wSplit", wSplit);
  chunkArgs.add("wSplitLo", wSplitLo);
  chunkArgs.add("wOut", wOut);
  chunkArgs.add("u", u);
  chunkArgs.add("uLo", uLo);
  chunkArgs.add("kc", kc);
  chunkArgs.add("kcLo", kcLo);
  chunkArgs.add("khat", khat);
  chunkArgs.add("n", nMem);
  // The marks of non-finite w or beta (buildChunkKernel).
  auto counts = [&]() -> Value {
    return memref::AllocOp::create(
        b, loc,
        MemRefType::get(
            {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic},
            b.getF32Type()),
        ValueRange{bDim, hk, sLen});
  };
  Value bad = counts(), badUpTo = counts();
  chunkArgs.add("bad", bad);
  chunkArgs.add("badUpTo", badUpTo);
  KernelArgs mainArgs;
  mainArgs.add("q", q);
  mainArgs.add("k", k);
  mainArgs.add("v", v);
  mainArgs.add("gPrime", gPrime);
  // The attention kernel's W: the f16 tile, or the chunk kernel's split.
  mainArgs.add("w", f16 ? wOut : wSplit);
  mainArgs.add("wLo", f16 ? Value() : wSplitLo);
  mainArgs.add("u", u);
  mainArgs.add("uLo", uLo);
  mainArgs.add("kc", kc);
  mainArgs.add("kcLo", kcLo);
  mainArgs.add("n", nMem);
  mainArgs.add("khat", khat);
  mainArgs.add("bad", bad);
  mainArgs.add("badUpTo", badUpTo);
  mainArgs.add("out", out);
  mainArgs.add("lse", lse);
  mainArgs.add("cuSeqlens",
               op.getCuSeqlens() ? buffer(op.getCuSeqlens()) : Value());
  // On a GPU the attention kernel marks the rows that come out non-finite
  // and a redo kernel writes them again (FlashRows).
  mainArgs.add("rowsNonFinite",
               target.gpu ? allocResult(b, loc, op.getResult(), bDim, hq, tLen,
                                        b.getF32Type(), /*rank=*/3)
                          : Value());

  func::FuncOp chunkKernel =
      chunkArgs.createKernel(op, symbols, kPathChunkKernelSuffix);
  markGpuKernel(chunkKernel);
  buildChunkKernel(chunkKernel, chunkArgs, ps, ty,
                   target.wgmma && cfg.pathChunkWgmma, loc);
  func::FuncOp mainKernel =
      mainArgs.createKernel(op, symbols, kPathAttentionKernelSuffix);
  markGpuKernel(mainKernel);
  buildAttentionKernel(mainKernel, mainArgs, ps, ty,
                       target.wgmma && cfg.pathAttentionWgmma,
                       target.gpu ? FlashRows::marking : FlashRows::all, loc);
  func::FuncOp redoKernel;
  if (target.gpu) {
    redoKernel = mainArgs.createKernel(op, symbols, "path_nonfinite_rows");
    markGpuKernel(redoKernel);
    buildAttentionKernel(redoKernel, mainArgs, ps, ty, /*wgmma=*/false,
                         FlashRows::redo, loc);
  }

  Value firstChunk = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, sLen, tLen), cIdx);
  Value queryChunks = arith::SubIOp::create(b, loc, chunks, firstChunk);
  chunkArgs.launch(b, loc, chunkKernel, chunks,
                   arith::MulIOp::create(b, loc, bDim, hk));
  mainArgs.launch(b, loc, mainKernel, queryChunks,
                  arith::MulIOp::create(b, loc, bDim, hq));
  if (redoKernel)
    mainArgs.launch(
        b, loc, redoKernel,
        arith::CeilDivUIOp::create(
            b, loc, queryChunks,
            arith::ConstantIndexOp::create(b, loc, redoTilesPerProgram(ps.c))),
        arith::MulIOp::create(b, loc, bDim, hq));
  SmallVector<Value> results;
  for (auto [buf, result] :
       {std::pair{out, op.getResult()}, {lse, op.getLse()}})
    if (result)
      results.push_back(bufferization::ToTensorOp::create(
          b, loc, result.getType(), buf, /*restrict=*/true, /*writable=*/true));
  op->replaceAllUsesWith(results);
  op.erase();
}
