//===- MtaToBlockGpu.cpp - MTA's block kernels in the GPU form ------------===//
//
// Multi-Token Attention for a GPU target, op by op for attn-block-to-gpu
// (GpuTiles: 4 warps, #mma tiles). A program owns 64 query rows of every
// head of a head group; the key-query stencil is tensor-core dots of the
// scores' f16 pair with banded Toeplitz operands (or taps from a scratch
// where those exceed shared memory). One kernel without post-softmax pieces,
// else an LSE pass and an output pass, each split over kSplits parts of the
// key walk and merged. Design, masking order and precision:
// docs/block-program.md, "MTA's GPU form".
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "GpuTiles.h"
#include "MtaPieces.h"
#include "PackedSequences.h"

#include "attn/Codegen/GpuOccupancy.h"
#include "attn/Passes/GpuTarget.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"

#include <limits>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kInf = std::numeric_limits<double>::infinity();
/// Rows of a program's tiles, and keys of an output tile.
constexpr int64_t kTile = kGpuRows;
/// Key columns each score tile gains per side per conv: c_k <= 2 kHalo + 1.
constexpr int64_t kHalo = 8;
/// Row tiles of the score scratch: t = -2, -1, 0 at rows (t + 2) * 64.
constexpr int64_t kScoreTiles = 3;
/// A head mix (mixGroup): output heads per pass over the sources (when c_h
/// is a multiple of it, else 1), columns per chunk, and the source loop's
/// unrolling (loads in flight).
constexpr int64_t kMixHeads = 8;
constexpr int64_t kMixCols = 16;
constexpr uint64_t kMixUnroll = 4;

enum class Arg {
  Q,
  QLo,
  K,
  KLo,
  V,
  G,
  ThetaPre,
  WPre,
  ThetaPost,
  WPost,
  ToePre,
  ToePreLo,
  ToePost,
  ToePostLo,
  Gamma,
  GateW,
  GateB,
  Cu,
  Lse,
  PartM,
  PartL,
  PartO,
  SBuf,
  CBuf,
  XBuf,
  PsBuf,
  PBuf,
  YBuf,
  MBuf,
  LBuf,
  AccBuf,
  Out
};

/// The tile geometry of one kernel: which 64-row tiles of logits and of
/// scores it needs (the first query row of each, relative to the program's
/// row0, ascending; the last is the output tile, 0), and how wide they are.
struct Geometry {
  SmallVector<int64_t, 2> logitRows;
  SmallVector<int64_t, 3> scoreRows;
  int64_t hc = 0, hc2 = 0; // columns per side: pre, post conv
  /// The stencils as tensor-core dots (mmaStencil), else as scratch taps.
  bool mma = false;
  /// Query taps' Toeplitz rows in flight (mmaStencil): 2 copies the next
  /// tap while the dots of this one run, 1 copies and waits per tap.
  int64_t toeStages = 1;
  int64_t lWidth() const { return kTile + 2 * hc2; }
  int64_t sWidth() const { return lWidth() + 2 * hc; }
  /// Rows from the first tile's first row to the output tile's last: the
  /// tensor-core stencil's pair buffers hold them (tiles may overlap).
  static int64_t span(ArrayRef<int64_t> rows) { return kTile - rows.front(); }
};

/// Tiles covering `above` rows above the output tile and the output tile.
/// The tensor-core stencil (`compact`) takes the rows above in one tile
/// ending within 16 rows of the output tile (it overlaps the output tile,
/// whose stores come later), so that the released configuration's pass 2
/// computes 2 score tiles instead of 3 and its pair buffers hold 96 rows
/// instead of 192; the scratch taps take whole row tiles (a scratch row
/// tile per 64 rows).
SmallVector<int64_t, 3> coverRows(int64_t above, bool compact) {
  SmallVector<int64_t, 3> rows;
  int64_t first = -static_cast<int64_t>(
      llvm::alignTo(std::max<int64_t>(above, 0), compact ? 16 : kTile));
  for (int64_t r = first; r < 0; r += kTile)
    rows.push_back(r);
  rows.push_back(0);
  return rows;
}

/// Single: pre-only with V, one pass. Lse, Output: the two passes, each
/// over kSplits parts of every query tile's key range, with their merges
/// LseMerge (the parts' (m, l) into the LSE) and OutputMerge (the parts'
/// P V sums, then the norm, into the output).
enum class Kind { Single, Lse, Output, LseMerge, OutputMerge };

/// Parts of a query tile's key walk that the two passes give to programs
/// of their own (split-K): pass 2's P V is a plain sum of the parts and
/// pass 1's softmax state merges exactly. A program owning every head of
/// a mixed group is one 4-warp block per SM with T / 64 such programs at
/// B = 1 (32 at T = 2048), and causal walks are 1 to T / 64 tiles long:
/// the parts fill the SMs and even out the walks.
constexpr int64_t kSplits = 4;

/// Whether the tensor-core stencil splits theta into an f16 pair too (3
/// dots per query tap) or rounds it once (2 dots): MtaGpuFormOnCpu's
/// figures in docs/block-program.md decided it.
constexpr bool kThetaLo = false;

Geometry geometryOf(const MtaPieces &plan, Kind kind, bool mma = false,
                    int64_t toeStages = 1) {
  Geometry g;
  g.mma = mma && (plan.convPre || (kind == Kind::Output && plan.convPost));
  g.toeStages = g.mma ? toeStages : 1;
  g.logitRows = coverRows(kind == Kind::Output ? plan.p2() : 0, g.mma);
  g.hc = plan.convPre ? kHalo : 0;
  g.hc2 = kind == Kind::Output && plan.convPost ? kHalo : 0;
  g.scoreRows = coverRows(-g.logitRows.front() + plan.p(), g.mma);
  return g;
}

/// Heads per program: c_h of the one mixing weight, H with both (c_h of
/// each divides H; a launch plan states no select), 1 without mixing.
Value groupSize(OpBuilder &b, Location loc, Value c1, Value c2, Value heads) {
  if (c1 && c2)
    return heads;
  if (c1)
    return c1;
  if (c2)
    return c2;
  return arith::ConstantIndexOp::create(b, loc, 1);
}

/// Bytes of shared memory a kernel of `kind` allocates (build() and
/// allocStencilBuffers(): q, k (their lo halves with RoPE), v unless it is
/// the LSE pass and, for the tensor-core stencil, the score pair and
/// `toeStages` query taps' Toeplitz rows; the post stencil's are windows of
/// the pre one's when both exist).
int64_t sharedBytesOf(const MtaPieces &plan, Kind kind, bool mma,
                      int64_t toeStages = 1) {
  Geometry g = geometryOf(plan, kind, mma, toeStages);
  auto dense = [](int64_t r, int64_t c) { return r * c * 2; };
  auto padded = [](int64_t r, int64_t c) {
    return r * GpuTiles::paddedStride(c) * 2;
  };
  int64_t qk = dense(kTile, plan.d) + dense(g.sWidth(), plan.d);
  int64_t bytes = (plan.rope ? 2 : 1) * qk;
  if (kind != Kind::Lse)
    bytes += dense(kTile, plan.dv);
  if (!g.mma)
    return bytes;
  const int64_t toes = (kThetaLo ? 2 : 1) * g.toeStages;
  if (plan.convPre)
    return bytes + 2 * padded(Geometry::span(g.scoreRows), g.sWidth()) +
           toes * padded(g.sWidth(), g.lWidth());
  return bytes + 2 * padded(Geometry::span(g.logitRows), g.lWidth()) +
         toes * padded(g.lWidth(), kTile);
}

/// Builds one kernel body (Single: pre-only with V; Lse: pass 1; Output:
/// pass 2).
class MtaGpuKernel {
public:
  MtaGpuKernel(const MtaPieces &plan, Kind kind, bool mma, int64_t toeStages,
               func::FuncOp kernel, const std::map<Arg, unsigned> &argIndex,
               Type elt)
      : plan(plan), kind(kind), geo(geometryOf(plan, kind, mma, toeStages)),
        loc(plan.op.getLoc()),
        b(OpBuilder::atBlockBegin(&kernel.getBody().front())), elt(elt) {
    Block &body = kernel.getBody().front();
    for (auto [role, i] : argIndex)
      args[role] = body.getArgument(i);
  }

  void build();

private:
  Value arg(Arg a) const { return args.lookup(a); }
  Value addi(OpBuilder &ob, Value x, Value y) {
    return arith::AddIOp::create(ob, loc, x, y);
  }
  Value subi(OpBuilder &ob, Value x, Value y) {
    return arith::SubIOp::create(ob, loc, x, y);
  }
  Value muli(OpBuilder &ob, Value x, Value y) {
    return arith::MulIOp::create(ob, loc, x, y);
  }
  Value cst(OpBuilder &ob, int64_t v) {
    return arith::ConstantIndexOp::create(ob, loc, v);
  }
  Value headOf(OpBuilder &ob, Value hl) {
    return addi(ob, muli(ob, grp, groupSz), hl);
  }
  Value kvHeadOf(OpBuilder &ob, Value h) {
    return arith::DivUIOp::create(ob, loc, h,
                                  arith::DivUIOp::create(ob, loc, hq, hk));
  }
  /// The query row `rel` rows from row0 (a tile's Geometry row).
  Value rowAt(OpBuilder &ob, int64_t rel) {
    return addi(ob, row0, cst(ob, rel));
  }
  /// CBuf's row of logit tile i (its slot: CBuf holds 2 row tiles).
  int64_t cSlot(size_t i) const {
    return static_cast<int64_t>(i + 2 - geo.logitRows.size()) * kTile;
  }
  /// Scratch indices of this program (and local head `hl`), then zeros.
  SmallVector<Value> at(OpBuilder &ob, Value hl, ArrayRef<int64_t> rest) {
    SmallVector<Value> idx = {px, py};
    if (hl)
      idx.push_back(hl);
    for (int64_t r : rest)
      idx.push_back(cst(ob, r));
    return idx;
  }
  /// Without head mixing a program owns one head (G = 1): its softmax
  /// state is carried through the key loop in registers, not scratch.
  bool inRegisters() const { return !plan.mixPre && !plan.mixPost; }
  template <typename F> void forHeads(OpBuilder &ob, F body) {
    if (inRegisters()) {
      body(ob, cst(ob, 0));
      return;
    }
    scf::ForOp::create(ob, loc, cst(ob, 0), groupSz, cst(ob, 1), ValueRange{},
                       [&](OpBuilder &nb, Location, Value hl, ValueRange) {
                         body(nb, hl);
                         scf::YieldOp::create(nb, loc);
                       });
  }
  Value validMask(GpuTiles &t, Value rowStart, Value colStart, int64_t cols,
                  bool output);
  /// Packed sequences: the 64 rows from `rowStart` (an i64 row slice) and
  /// their sequences' starts (the same); null without cu_seqlens.
  std::pair<Value, Value> rowStarts(GpuTiles &t, Value rowStart) {
    Value cu = arg(Arg::Cu);
    if (!cu)
      return {};
    Value rows = t.iotaIn(t.row, rowStart, kTile);
    return {rows, sequenceBounds(t.b, loc, cu, rowStart, kTile, rows,
                                 /*withEnds=*/false)
                      .starts};
  }
  /// Query tap `a`'s part of a stencil with `cq` taps on the [64, cols]
  /// tile whose rows and starts are `rows` (rowStarts): rows whose source
  /// row r - (cq - 1) + a lies before r's sequence start read nothing, so
  /// that each sequence is convolved as if alone (attn.kq_conv).
  Value reachable(GpuTiles &t, std::pair<Value, Value> rows, Value a,
                  int64_t cq, Value part, int64_t cols) {
    Value src = arith::AddIOp::create(
        t.b, loc, rows.first,
        t.splatIdx(cast<RankedTensorType>(rows.first.getType()),
                   subi(t.b, a, cst(t.b, cq - 1))));
    Value ok = t.cmpi(CmpIPredicate::sge, t.spread(src, 1, kTile, cols),
                      t.spread(rows.second, 1, kTile, cols));
    return t.select(ok, part, t.zeros({kTile, cols}));
  }
  Value stencil(GpuTiles &t, Value theta, Value h, Value buf, int64_t rowBase,
                int64_t colBase, int64_t cq, int64_t ck, int64_t cols,
                Value outRow);
  /// The f16 stencil operands of each [64, cols] f32 tile of `tiles` (at
  /// Geometry rows `rows`) in the pair (hi, lo), whose row 0 is the first
  /// tile's first row; a tile overlapping the one before is stored after a
  /// barrier (the rows they share are the later tile's).
  void storePair(GpuTiles &t, ArrayRef<Value> tiles, ArrayRef<int64_t> rows,
                 Value hi, Value lo);
  SmallVector<Value, 2> mmaStencil(GpuTiles &t, Value h, Arg toe, Arg toeLo,
                                   Value hi, Value lo, Value sToe, Value sToeLo,
                                   ArrayRef<int64_t> rowBases, int64_t cq,
                                   int64_t colBase, int64_t ck, int64_t cols,
                                   ArrayRef<Value> outRows);
  void allocStencilBuffers(GpuTiles &t);
  SmallVector<Value, 2> preLogits(GpuTiles &t, Value hl, Value j0);
  SmallVector<Value, 2> logits(GpuTiles &t, Value hl, Value j0);
  void mixGroup(OpBuilder &ob, Value weight, Value src, Value dst,
                ArrayRef<int64_t> rows, int64_t cols);
  void mixChunk(OpBuilder &cb, Value weight, Value src, Value dst, Value hl0,
                Value g0, Value ch, int64_t r, Value c0, int64_t outs);
  /// The softmax state of local head `hl`: `cur` in registers, else the
  /// scratch buffer of `which` (MBuf, LBuf, AccBuf).
  Value readState(GpuTiles &t, Arg which, Value hl);
  void writeState(GpuTiles &t, Arg which, Value hl, Value v);
  void onlineStep(GpuTiles &t, Value hl, Value j0);
  void accumulate(GpuTiles &t, Value hl, Value j0, Value p, Value acc = {});
  /// Starts the copy of local head `hl`'s V tile at j0 into sV (after a
  /// barrier: every thread is done with the previous one).
  void issueV(GpuTiles &t, Value hl, Value j0);
  /// Whether the V tile of this step is copied with K's (preLogits), which
  /// it can be when the key loop runs one head whose logits come from
  /// preLogits directly (the one-pass kernel without a pre mix).
  bool vWithK() const { return kind == Kind::Single && !plan.mixPre; }
  void outputStep(OpBuilder &ob, Value j0);
  void epilogue(OpBuilder &ob);
  /// The merge kernels (Kind::LseMerge, Kind::OutputMerge).
  void buildMerge();
  Value headNorm(GpuTiles &t, Value o);

  const MtaPieces &plan;
  Kind kind;
  Geometry geo;
  Location loc;
  OpBuilder b;
  Type elt;
  llvm::SmallDenseMap<Arg, Value> args;
  Value px, py, bIdx, grp, groupSz, hq, hk, tLen, sLen, off, row0;
  /// The program's part of its query tile's key walk (kSplits parts in
  /// the two passes, else the whole walk: part 0).
  Value part;
  Value sQ, sK, sV, sQLo, sKLo;
  /// The tensor-core stencil's buffers: the f16 score pair and one query
  /// tap's Toeplitz rows (hi, lo) of the pre conv; the same of the post
  /// conv (windows of the pre ones when both convs exist).
  Value sHi, sLo, sToe, sToeLo, pHi, pLo, pToe, pToeLo;
  /// The state carried in registers (inRegisters()), by role.
  llvm::SmallDenseMap<Arg, Value> cur;
};

/// Whether element (i, j) of the [64, cols] tile at query row `rowStart`,
/// key `colStart` is a valid source (output = false: 0 <= i < T,
/// 0 <= j < S, j <= i + S - T) or a visible logit (output = true: the
/// bounds and the op's mask).
Value MtaGpuKernel::validMask(GpuTiles &t, Value rowStart, Value colStart,
                              int64_t cols, bool output) {
  auto i64 = t.b.getI64Type();
  Value r = t.spread(t.iotaIn(t.row, rowStart, kTile), 1, kTile, cols);
  Value c = t.spread(t.iotaIn(t.col, colStart, cols), 0, kTile, cols);
  auto full = t.acc({kTile, cols}, i64);
  Value zero = t.splatIdx(full, cst(t.b, 0));
  Value ok = t.andi(t.cmpi(CmpIPredicate::sge, r, zero),
                    t.cmpi(CmpIPredicate::slt, r, t.splatIdx(full, tLen)));
  ok = t.andi(ok, t.cmpi(CmpIPredicate::sge, c, zero));
  ok = t.andi(ok, t.cmpi(CmpIPredicate::slt, c, t.splatIdx(full, sLen)));
  Value pos = arith::AddIOp::create(t.b, loc, r, t.splatIdx(full, off));
  if (!output || plan.mask != MaskKind::none)
    ok = t.andi(ok, t.cmpi(CmpIPredicate::sle, c, pos));
  if (output && plan.mask == MaskKind::sliding_window) {
    Value lo = arith::SubIOp::create(
        t.b, loc, pos,
        t.splatIdx(full, cst(t.b, plan.op.getWindow().value_or(0))));
    ok = t.andi(ok, t.cmpi(CmpIPredicate::sgt, c, lo));
  }
  // Packed sequences: keys of an earlier sequence are outside as those
  // right of the diagonal (halo rows of one: reachable()).
  if (Value starts = rowStarts(t, rowStart).second)
    ok = t.andi(
        ok, t.cmpi(CmpIPredicate::sge, c, t.spread(starts, 1, kTile, cols)));
  return ok;
}

/// sum over taps (a, b) of theta[h, a, b] * buf[rowBase + a, colBase + b]
/// as a [64, cols] tile (buf: this program's [rows, width] f32 scratch,
/// which holds every tap's window: in_bounds reads). The query taps are a
/// loop, the key taps of one query tap unrolled (c_k <= 17), so a tap's
/// registers are a constant offset from the previous one's.
Value MtaGpuKernel::stencil(GpuTiles &t, Value theta, Value h, Value buf,
                            int64_t rowBase, int64_t colBase, int64_t cq,
                            int64_t ck, int64_t cols, Value outRow) {
  std::pair<Value, Value> packed = rowStarts(t, outRow);
  auto rows = scf::ForOp::create(
      t.b, loc, cst(t.b, 0), cst(t.b, cq), cst(t.b, 1),
      ValueRange{t.zeros({kTile, cols})},
      [&](OpBuilder &nb, Location, Value a, ValueRange accA) {
        GpuTiles x(nb, t);
        Value r = addi(nb, a, cst(nb, rowBase));
        Value acc = packed.first ? x.zeros({kTile, cols}) : accA[0];
        for (int64_t bb = 0; bb < ck; ++bb) {
          Value w = memref::LoadOp::create(nb, loc, theta,
                                           ValueRange{h, a, cst(nb, bb)});
          Value tap = x.loadAcc(buf, {px, py, r, cst(nb, colBase + bb)},
                                {kTile, cols}, {2, 3}, /*inBounds=*/true);
          acc = x.add(acc, x.mul(tensor::SplatOp::create(
                                     nb, loc, x.acc({kTile, cols}), w),
                                 tap));
        }
        if (packed.first)
          acc = x.add(accA[0], reachable(x, packed, a, cq, acc, cols));
        scf::YieldOp::create(nb, loc, acc);
      });
  return rows.getResult(0);
}

void MtaGpuKernel::storePair(GpuTiles &t, ArrayRef<Value> tiles,
                             ArrayRef<int64_t> rows, Value hi, Value lo) {
  Type f16 = t.b.getF16Type();
  for (auto [i, x] : llvm::enumerate(tiles)) {
    if (i > 0 && rows[i] - rows[i - 1] < kTile)
      t.barrier();
    auto type = cast<RankedTensorType>(x.getType());
    Value h16 = arith::TruncFOp::create(t.b, loc, type.clone(f16), x);
    Value rest = t.sub(x, arith::ExtFOp::create(t.b, loc, type, h16));
    Value l16 = arith::TruncFOp::create(t.b, loc, type.clone(f16), rest);
    for (auto [v, buf] : {std::pair(h16, hi), std::pair(l16, lo)})
      t.localStore(v, t.window(buf, cst(t.b, rows[i] - rows.front()), 0, kTile,
                               type.getDimSize(1)));
  }
}

/// The key-query stencil as tensor-core dots (spec/mta.md §6.5):
///   C[r, n] = sum_a sum_k S[rowBase + a + r, k] Toe_a[k, n],
///   Toe_a[k, n] = theta[h, a, k - n - colBase] (0 inside the band),
/// with S = hi + lo (the f16 pair in shared memory, K columns) and Toe_a
/// (f16, [K, cols], from the Toeplitz kernel's `toe` [H, c_q, K', N'], its
/// top-left corner) copied per query tap into `sToe`: for each tap, dots of
/// the [64, K] windows at rows rowBase + a (one per output tile) with it,
/// f32 accumulation. Each dot states Toe_a's band (b_band: k - n in
/// [colBase, colBase + c_k - 1]), so that mma.sync leaves out the products
/// of its zero pieces: about half of a [K, cols] Toeplitz operand at
/// c_k = 11. `sToe` holds geo.toeStages taps at rows s K: with 2, tap a + 1
/// is copied while tap a's dots run (one wait and one barrier per tap, the
/// copy's latency hidden; the released configuration's programs walk 16
/// heads with 6 taps per conv each), with 1 each tap is copied and waited
/// for. The caller published the pair (a barrier).
SmallVector<Value, 2> MtaGpuKernel::mmaStencil(
    GpuTiles &t, Value h, Arg toe, Arg toeLo, Value hi, Value lo, Value sToe,
    Value sToeLo, ArrayRef<int64_t> rowBases, int64_t cq, int64_t colBase,
    int64_t ck, int64_t cols, ArrayRef<Value> outRows) {
  int64_t k = cast<blk::SharedBufferType>(hi.getType()).getShape()[1];
  // Packed sequences: each output tile's rows and their sequence starts.
  SmallVector<std::pair<Value, Value>, 2> packed;
  if (arg(Arg::Cu))
    for (Value row : outRows)
      packed.push_back(rowStarts(t, row));
  auto band = t.b.getDenseI64ArrayAttr({colBase, colBase + ck - 1});
  const bool staged = geo.toeStages == 2;
  // Stage `s` of the Toeplitz buffers, and the copies of tap `a` into it.
  auto stage = [&](GpuTiles &x, Value buf, Value s) {
    if (!staged)
      return buf;
    return x.window(buf, muli(x.b, s, cst(x.b, k)), 0, k, cols);
  };
  auto copyTap = [&](GpuTiles &x, Value a, Value s) {
    SmallVector<Value> at = {h, a, cst(x.b, 0), cst(x.b, 0)};
    SmallVector<Value> copies = {x.copy(arg(toe), at, stage(x, sToe, s))};
    if (sToeLo)
      copies.push_back(x.copy(arg(toeLo), at, stage(x, sToeLo, s)));
    return copies;
  };
  if (staged)
    blk::AsyncCommitGroupOp::create(t.b, loc,
                                    copyTap(t, cst(t.b, 0), cst(t.b, 0)));
  SmallVector<Value> init(rowBases.size(), t.zeros({kTile, cols}));
  auto taps = scf::ForOp::create(
      t.b, loc, cst(t.b, 0), cst(t.b, cq), cst(t.b, 1), init,
      [&](OpBuilder &nb, Location, Value a, ValueRange accs) {
        GpuTiles x(nb, t);
        Value s = cst(nb, 0);
        if (staged) {
          // Tap a has landed, and every thread is done with the other
          // stage (tap a - 1) before tap a + 1 is copied there.
          s = arith::RemUIOp::create(nb, loc, a, cst(nb, 2));
          blk::AsyncWaitOp::create(nb, loc, ValueRange{}, 0);
          x.barrier();
          Value next = addi(nb, a, cst(nb, 1));
          Value more = arith::CmpIOp::create(nb, loc, CmpIPredicate::ult, next,
                                             cst(nb, cq));
          scf::IfOp::create(nb, loc, more, [&](OpBuilder &ib, Location) {
            GpuTiles y(ib, t);
            blk::AsyncCommitGroupOp::create(
                ib, loc, copyTap(y, next, subi(ib, cst(ib, 1), s)));
            scf::YieldOp::create(ib, loc);
          });
        } else {
          // The previous tap's reads of sToe are done.
          x.barrier();
          x.landCopies(copyTap(x, a, s));
        }
        Value toeHi = stage(x, sToe, s);
        Value toeLo = sToeLo ? stage(x, sToeLo, s) : Value();
        // Each dot loads its own operands: the lowering sinks every
        // ldmatrix to its mma, so a [K, cols] B is never live whole (96 x
        // 80 would take 120 registers).
        auto dot = [&](Value sa, Value sb, Value acc) {
          return x.dot(x.operand(sa, 0), x.operand(sb, 1), acc,
                       /*transposeB=*/false, band);
        };
        SmallVector<Value> next;
        for (auto [i, acc, rowBase] :
             llvm::enumerate(accs, ArrayRef<int64_t>(rowBases))) {
          Value r = addi(nb, a, cst(nb, rowBase));
          Value wHi = x.window(hi, r, 0, kTile, k);
          // Packed sequences: the tap's part on its own, rows selected.
          Value c =
              dot(wHi, toeHi, packed.empty() ? acc : x.zeros({kTile, cols}));
          c = dot(x.window(lo, r, 0, kTile, k), toeHi, c);
          if (toeLo)
            c = dot(wHi, toeLo, c);
          if (!packed.empty())
            c = x.add(acc, reachable(x, packed[i], a, cq, c, cols));
          next.push_back(c);
        }
        scf::YieldOp::create(nb, loc, next);
      });
  // Every thread is done with the pair and sToe before they are rewritten.
  t.barrier();
  return llvm::to_vector_of<Value, 2>(taps.getResults());
}

/// The pre-conv outputs C (or, without a pre conv, the source-masked
/// scores) of local head `hl` on the logit tiles, [64, lWidth] each, the
/// keys from j0 - hc2.
SmallVector<Value, 2> MtaGpuKernel::preLogits(GpuTiles &t, Value hl, Value j0) {
  OpBuilder &ob = t.b;
  Value h = headOf(ob, hl);
  int64_t ws = geo.sWidth();
  Value sCol = subi(ob, j0, cst(ob, geo.hc + geo.hc2));
  double qk = plan.op.getScaleOrDefault() * kLog2e;
  Value gk = plan.fox ? t.loadSlice(arg(Arg::G), {bIdx, h, sCol}, 2, ws, t.col)
                      : Value();
  // The keys once for every row tile.
  t.barrier();
  const bool split = static_cast<bool>(arg(Arg::KLo));
  SmallVector<Value> kAt = {bIdx, kvHeadOf(ob, h), sCol, cst(ob, 0)};
  SmallVector<Value> kCopies = {t.copy(arg(Arg::K), kAt, sK)};
  if (split)
    kCopies.push_back(t.copy(arg(Arg::KLo), kAt, sKLo));
  if (vWithK())
    kCopies.push_back(
        t.copy(arg(Arg::V), {bIdx, kvHeadOf(ob, h), j0, cst(ob, 0)}, sV));
  t.landCopies(kCopies);
  SmallVector<Value, 3> scores;
  for (int64_t s : geo.scoreRows) {
    Value qRow = rowAt(ob, s);
    if (s != geo.scoreRows.front())
      t.barrier();
    SmallVector<Value> qAt = {bIdx, h, qRow, cst(ob, 0)};
    SmallVector<Value> qCopies = {t.copy(arg(Arg::Q), qAt, sQ)};
    if (split)
      qCopies.push_back(t.copy(arg(Arg::QLo), qAt, sQLo));
    t.landCopies(qCopies);
    Value sc = t.dot(t.operand(sQ, 0), t.operand(sK, 1), t.zeros({kTile, ws}),
                     /*transposeB=*/true);
    // hi hi + lo hi + hi lo (lo lo is below f32's last digits).
    if (split) {
      sc = t.dot(t.operand(sQLo, 0), t.operand(sK, 1), sc,
                 /*transposeB=*/true);
      sc = t.dot(t.operand(sQ, 0), t.operand(sKLo, 1), sc,
                 /*transposeB=*/true);
    }
    sc = t.mul(sc, t.splatF(t.acc({kTile, ws}), qk));
    if (plan.fox) {
      Value gi = t.loadSlice(arg(Arg::G), {bIdx, h, addi(ob, qRow, off)}, 2,
                             kTile, t.row);
      sc = t.addFoxBias(sc, gi, gk, -1.0);
    }
    if (plan.sourceMask())
      sc = t.select(validMask(t, qRow, sCol, ws, /*output=*/false), sc,
                    t.zeros({kTile, ws}));
    scores.push_back(sc);
  }
  SmallVector<Value, 2> out;
  if (!plan.convPre) {
    // Without a pre conv the score tiles are the logit tiles.
    assert(geo.scoreRows == ArrayRef<int64_t>(geo.logitRows));
    out.append(scores.begin(), scores.end());
    return out;
  }
  if (geo.mma) {
    storePair(t, scores, geo.scoreRows, sHi, sLo);
    t.barrier();
    // Logit row r of a tile takes score rows r - p .. r - p + c_q - 1.
    SmallVector<int64_t, 2> rowBases;
    SmallVector<Value, 2> outRows;
    for (int64_t l : geo.logitRows) {
      rowBases.push_back(l - plan.p() - geo.scoreRows.front());
      outRows.push_back(rowAt(ob, l));
    }
    return mmaStencil(t, h, Arg::ToePre, Arg::ToePreLo, sHi, sLo, sToe, sToeLo,
                      rowBases, plan.cqPre, geo.hc - plan.c(), plan.ckPre,
                      geo.lWidth(), outRows);
  }
  // Publish the score tiles, then read each tap shifted (the form where
  // the tensor-core one does not fit the chip's shared memory).
  Value sBuf = arg(Arg::SBuf);
  // Its row tiles are whole (coverRows), at rows 2 * 64 + their row.
  for (auto [s, sc] : llvm::zip(geo.scoreRows, scores))
    t.store(sc, sBuf, at(ob, Value(), {s + 2 * kTile, 0}), {2, 3},
            /*inBounds=*/true);
  t.barrier();
  for (int64_t l : geo.logitRows)
    out.push_back(stencil(t, arg(Arg::ThetaPre), h, sBuf,
                          l + 2 * kTile - plan.p(), geo.hc - plan.c(),
                          plan.cqPre, plan.ckPre, geo.lWidth(), rowAt(ob, l)));
  // Every thread is done with the scratch before the next head rewrites it.
  t.barrier();
  return out;
}

/// One [64, 16] column chunk at (row r, column c0) of mixGroup's outputs
/// hl0 .. hl0 + outs - 1, whose sources are the local heads g0 .. g0 + c_h.
void MtaGpuKernel::mixChunk(OpBuilder &cb, Value weight, Value src, Value dst,
                            Value hl0, Value g0, Value ch, int64_t r, Value c0,
                            int64_t outs) {
  GpuTiles x(cb, loc, elt);
  SmallVector<Value> init(outs, x.zeros({kTile, kMixCols}));
  auto loop = scf::ForOp::create(
      cb, loc, cst(cb, 0), ch, cst(cb, 1), init,
      [&](OpBuilder &lb, Location, Value m, ValueRange accs) {
        GpuTiles y(lb, loc, elt);
        Value s = y.loadAcc(src, {px, py, addi(lb, g0, m), cst(lb, r), c0},
                            {kTile, kMixCols}, {3, 4}, /*inBounds=*/true);
        SmallVector<Value> next;
        for (auto [o, acc] : llvm::enumerate(accs)) {
          Value h = headOf(lb, addi(lb, hl0, cst(lb, o)));
          Value w = memref::LoadOp::create(lb, loc, weight, ValueRange{h, m});
          next.push_back(
              y.add(acc, y.mul(tensor::SplatOp::create(
                                   lb, loc, y.acc({kTile, kMixCols}), w),
                               s)));
        }
        scf::YieldOp::create(lb, loc, next);
      });
  // Several sources' loads in flight at once; the remainder loop takes
  // c_h mod kMixUnroll.
  ValueRange results = loop.getResults();
  FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(loop, kMixUnroll);
  if (succeeded(unrolled) && unrolled->epilogueLoopOp)
    results = unrolled->epilogueLoopOp->getResults();
  for (auto [o, v] : llvm::enumerate(results))
    x.store(v, dst, {px, py, addi(cb, hl0, cst(cb, o)), cst(cb, r), c0}, {3, 4},
            /*inBounds=*/true);
}

/// dst[hl] = sum_{m < c_h} weight[h, m] * src[g0 + m] for every local
/// head hl of the group (h its head, g0 the first local head of its mixing
/// group), on the [64, cols] tiles at `rows` of the per-program scratches.
/// Each source is read once per kMixHeads outputs (all in one mixing group:
/// c_h is a multiple of kMixHeads; else once per output), in [64, 16]
/// column chunks so that the outputs' accumulators stay few registers: the
/// released configuration's all-head mix read each of its 16 source tiles
/// 16 times per tile, 6 GB of L1 traffic in its LSE pass at T = 2048. A
/// chunk of a tile in the accumulator layout has the same thread for each
/// element as the whole tile, so each thread reads what it wrote (no
/// barrier).
void MtaGpuKernel::mixGroup(OpBuilder &ob, Value weight, Value src, Value dst,
                            ArrayRef<int64_t> rows, int64_t cols) {
  assert(cols % kMixCols == 0 && "mix chunks divide the tile");
  Value ch = memref::DimOp::create(ob, loc, weight, 1);
  Value blocked = arith::CmpIOp::create(
      ob, loc, CmpIPredicate::eq,
      arith::RemUIOp::create(ob, loc, ch, cst(ob, kMixHeads)), cst(ob, 0));
  auto mixBy = [&](OpBuilder &bb, int64_t outs) {
    scf::ForOp::create(
        bb, loc, cst(bb, 0), groupSz, cst(bb, outs), ValueRange{},
        [&](OpBuilder &nb, Location, Value hl0, ValueRange) {
          Value g0 = muli(nb, arith::DivUIOp::create(nb, loc, hl0, ch), ch);
          for (int64_t r : rows)
            // The chunks in a loop, not unrolled: the kernels' size (and
            // the CPU form's compile time) stays that of one chunk.
            scf::ForOp::create(
                nb, loc, cst(nb, 0), cst(nb, cols), cst(nb, kMixCols),
                ValueRange{},
                [&](OpBuilder &cb, Location, Value c0, ValueRange) {
                  mixChunk(cb, weight, src, dst, hl0, g0, ch, r, c0, outs);
                  scf::YieldOp::create(cb, loc);
                });
          scf::YieldOp::create(nb, loc);
        });
  };
  scf::IfOp::create(
      ob, loc, blocked,
      [&](OpBuilder &bb, Location) {
        mixBy(bb, kMixHeads);
        scf::YieldOp::create(bb, loc);
      },
      [&](OpBuilder &bb, Location) {
        mixBy(bb, 1);
        scf::YieldOp::create(bb, loc);
      });
}

/// The final pre-softmax logits L of local head `hl` on the logit tiles
/// (-inf where not visible). With a pre mix, the group's mixed C tiles
/// must already be in XBuf (mixGroup).
SmallVector<Value, 2> MtaGpuKernel::logits(GpuTiles &t, Value hl, Value j0) {
  OpBuilder &ob = t.b;
  SmallVector<Value, 2> tiles;
  int64_t wl = geo.lWidth();
  if (plan.mixPre) {
    for (size_t i = 0; i < geo.logitRows.size(); ++i)
      tiles.push_back(t.loadAcc(arg(Arg::XBuf), at(ob, hl, {cSlot(i), 0}),
                                {kTile, wl}, {3, 4}, /*inBounds=*/true));
  } else {
    tiles = preLogits(t, hl, j0);
  }
  Value lCol = subi(ob, j0, cst(ob, geo.hc2));
  for (auto [i, l] : llvm::enumerate(geo.logitRows))
    tiles[i] = t.select(validMask(t, rowAt(ob, l), lCol, wl, /*output=*/true),
                        tiles[i], t.splatF(t.acc({kTile, wl}), -kInf));
  return tiles;
}

Value MtaGpuKernel::readState(GpuTiles &t, Arg which, Value hl) {
  if (inRegisters())
    return cur.lookup(which);
  if (which == Arg::AccBuf)
    return t.loadAcc(arg(which), at(t.b, hl, {0, 0}), {kTile, plan.dv}, {3, 4},
                     /*inBounds=*/true);
  return t.loadSlice(arg(which), at(t.b, hl, {0}), 3, kTile, t.row);
}

void MtaGpuKernel::writeState(GpuTiles &t, Arg which, Value hl, Value v) {
  if (inRegisters()) {
    cur[which] = v;
    return;
  }
  if (which == Arg::AccBuf)
    t.store(v, arg(which), at(t.b, hl, {0, 0}), {3, 4}, /*inBounds=*/true);
  else
    t.store(v, arg(which), at(t.b, hl, {0}), {3});
}

void MtaGpuKernel::issueV(GpuTiles &t, Value hl, Value j0) {
  OpBuilder &ob = t.b;
  t.barrier();
  blk::AsyncCommitGroupOp::create(
      ob, loc,
      ValueRange{t.copy(arg(Arg::V),
                        {bIdx, kvHeadOf(ob, headOf(ob, hl)), j0, cst(ob, 0)},
                        sV)});
}

/// acc[hl] = acc + p V (keys j0..j0+64), p rounded to 16 bits (a hi/lo
/// pair under the norm's gate); acc is read from the state unless given.
/// V's copy was issued before (issueV, or with K: vWithK): its wait is
/// here, after the work that hid it.
void MtaGpuKernel::accumulate(GpuTiles &t, Value hl, Value j0, Value p,
                              Value acc) {
  blk::AsyncWaitOp::create(t.b, loc, ValueRange{}, 0);
  t.barrier();
  if (!acc)
    acc = readState(t, Arg::AccBuf, hl);
  Value hi = t.round(p);
  acc = t.probabilityProduct(t.dot(t.asA(hi), t.operand(sV, 1), acc));
  // Under the norm's gate sigmoid(w . y + b) an error in o moves z by
  // w . dy, about |w| sqrt(Dv) times the error of y: with P rounded once
  // the released configuration's worst row was 2.1e-2 against the fp64
  // oracle at Dv = 128 (f16: 8x less); P's 16-bit rest takes it to the
  // output's own rounding.
  if (plan.gate) {
    Value lo =
        t.round(t.sub(p, arith::ExtFOp::create(t.b, loc, p.getType(), hi)));
    acc = t.probabilityProduct(t.dot(t.asA(lo), t.operand(sV, 1), acc));
  }
  writeState(t, Arg::AccBuf, hl, acc);
}

/// One online-softmax step of local head `hl` on keys [j0, j0 + 64): the
/// Single kernel (with V) and the Lse kernel (without).
void MtaGpuKernel::onlineStep(GpuTiles &t, Value hl, Value j0) {
  int64_t dv = plan.dv;
  if (kind == Kind::Single && !vWithK())
    issueV(t, hl, j0);
  Value s = logits(t, hl, j0).front();
  Value m = readState(t, Arg::MBuf, hl), l = readState(t, Arg::LBuf, hl);
  Value mNew = t.maxf(m, t.rowReduce(blk::ReduceKind::max, s));
  Value mSafe = t.safeMax(mNew);
  Value alpha = t.exp2(t.sub(m, mSafe));
  Value p = t.exp2(t.sub(s, t.spread(mSafe, 1, kTile, kTile)));
  Value lNew = t.add(t.mul(l, alpha), t.rowReduce(blk::ReduceKind::sum, p));
  writeState(t, Arg::MBuf, hl, mNew);
  writeState(t, Arg::LBuf, hl, lNew);
  if (kind != Kind::Single)
    return;
  Value acc = readState(t, Arg::AccBuf, hl);
  accumulate(t, hl, j0, p, t.mul(acc, t.spread(alpha, 1, kTile, dv)));
}

/// Pass 2 on output keys [j0, j0 + 64) for every head of the group.
void MtaGpuKernel::outputStep(OpBuilder &ob, Value j0) {
  int64_t wl = geo.lWidth();
  if (plan.mixPre)
    forHeads(ob, [&](OpBuilder &nb, Value hl) {
      GpuTiles t(nb, loc, elt);
      SmallVector<Value, 2> c = preLogits(t, hl, j0);
      for (size_t i = 0; i < c.size(); ++i)
        t.store(c[i], arg(Arg::CBuf), at(nb, hl, {cSlot(i), 0}), {3, 4},
                /*inBounds=*/true);
    });
  if (plan.mixPre) {
    SmallVector<int64_t, 2> slots;
    for (size_t i = 0; i < geo.logitRows.size(); ++i)
      slots.push_back(cSlot(i));
    mixGroup(ob, arg(Arg::WPre), arg(Arg::CBuf), arg(Arg::XBuf), slots, wl);
  }
  forHeads(ob, [&](OpBuilder &nb, Value hl) {
    GpuTiles t(nb, loc, elt);
    Value h = headOf(nb, hl);
    if (!plan.mixPost)
      issueV(t, hl, j0);
    SmallVector<Value, 2> ls = logits(t, hl, j0);
    // Exact probabilities; rows above the sequence read LSE 0 and have
    // L = -inf, so they are the post conv's zero padding.
    SmallVector<Value, 2> ps;
    for (auto [i, l] : llvm::enumerate(geo.logitRows)) {
      Value lse =
          t.loadSlice(arg(Arg::Lse), {bIdx, h, rowAt(nb, l)}, 2, kTile, t.row);
      ps.push_back(t.exp2(t.sub(ls[i], t.spread(lse, 1, kTile, wl))));
    }
    Value p = ps.back();
    if (plan.convPost && geo.mma) {
      t.barrier();
      storePair(t, ps, geo.logitRows, pHi, pLo);
      t.barrier();
      p = mmaStencil(t, h, Arg::ToePost, Arg::ToePostLo, pHi, pLo, pToe, pToeLo,
                     {-geo.logitRows.front() - plan.p2()}, plan.cqPost,
                     geo.hc2 - plan.c2(), plan.ckPost, kTile, {row0})
              .front();
    } else if (plan.convPost) {
      Value psBuf = arg(Arg::PsBuf);
      t.barrier();
      for (auto [i, l] : llvm::enumerate(geo.logitRows))
        t.store(ps[i], psBuf, at(nb, Value(), {l + kTile, 0}), {2, 3},
                /*inBounds=*/true);
      t.barrier();
      p = stencil(t, arg(Arg::ThetaPost), h, psBuf, kTile - plan.p2(),
                  geo.hc2 - plan.c2(), plan.cqPost, plan.ckPost, kTile, row0);
    }
    // The post conv spills right of the diagonal: Mask_0 on the output.
    p = t.select(validMask(t, row0, j0, kTile, /*output=*/true), p,
                 t.zeros({kTile, kTile}));
    if (plan.mixPost)
      t.store(p, arg(Arg::PBuf), at(nb, hl, {0, 0}), {3, 4}, true);
    else
      accumulate(t, hl, j0, p);
  });
  if (plan.mixPost) {
    mixGroup(ob, arg(Arg::WPost), arg(Arg::PBuf), arg(Arg::YBuf), {0}, kTile);
    forHeads(ob, [&](OpBuilder &nb, Value hl) {
      GpuTiles t(nb, loc, elt);
      issueV(t, hl, j0);
      Value p3 = t.loadAcc(arg(Arg::YBuf), at(nb, hl, {0, 0}), {kTile, kTile},
                           {3, 4}, /*inBounds=*/true);
      accumulate(t, hl, j0, p3);
    });
  }
}

/// RMSNorm over Dv (gamma shared by heads), then the scalar gate
/// sigmoid(w . y + b), in f32 (spec/mta.md §3).
Value MtaGpuKernel::headNorm(GpuTiles &t, Value o) {
  OpBuilder &ob = t.b;
  int64_t dv = plan.dv;
  auto rowT = t.slice(kTile, t.row);
  Value c0 = cst(ob, 0);
  Value ms = t.mul(t.rowReduce(blk::ReduceKind::sum, t.mul(o, o)),
                   t.splatF(rowT, 1.0 / static_cast<double>(dv)));
  double eps = plan.op.getNormEps().convertToDouble();
  Value rms = math::SqrtOp::create(ob, loc, t.add(ms, t.splatF(rowT, eps)));
  Value gamma = t.loadSlice(arg(Arg::Gamma), {c0}, 0, dv, t.col);
  Value y = t.mul(t.div(o, t.spread(rms, 1, kTile, dv)),
                  t.spread(gamma, 0, kTile, dv));
  if (!plan.gate)
    return y;
  Value w = t.loadSlice(arg(Arg::GateW), {c0}, 0, dv, t.col);
  Value bias = memref::LoadOp::create(ob, loc, arg(Arg::GateB), ValueRange{c0});
  Value z = t.add(
      t.rowReduce(blk::ReduceKind::sum, t.mul(y, t.spread(w, 0, kTile, dv))),
      tensor::SplatOp::create(ob, loc, rowT, bias));
  Value one = t.splatF(rowT, 1.0);
  Value sig =
      t.div(one, t.add(one, math::ExpOp::create(
                                ob, loc, arith::NegFOp::create(ob, loc, z))));
  return t.mul(y, t.spread(sig, 1, kTile, dv));
}

/// Per head: the LSE (pass 1) or the normalised, normed output.
void MtaGpuKernel::epilogue(OpBuilder &ob) {
  int64_t dv = plan.dv;
  forHeads(ob, [&](OpBuilder &nb, Value hl) {
    GpuTiles t(nb, loc, elt);
    Value h = headOf(nb, hl);
    auto rowT = t.slice(kTile, t.row);
    if (kind == Kind::Lse) {
      // The part's state; LseMerge makes the LSE of the parts.
      t.store(readState(t, Arg::MBuf, hl), arg(Arg::PartM),
              {part, bIdx, h, row0}, {3});
      t.store(readState(t, Arg::LBuf, hl), arg(Arg::PartL),
              {part, bIdx, h, row0}, {3});
      return;
    }
    Value o = readState(t, Arg::AccBuf, hl);
    if (kind == Kind::Output) {
      // The part's P V sum; OutputMerge adds the parts and norms.
      t.store(o, arg(Arg::PartO), {part, bIdx, h, row0, cst(nb, 0)}, {3, 4});
      return;
    }
    if (kind == Kind::Single) {
      Value l = readState(t, Arg::LBuf, hl);
      Value empty = t.cmpf(CmpFPredicate::OEQ, l, t.splatF(rowT, 0.0));
      Value inv =
          t.select(empty, t.splatF(rowT, 0.0), t.div(t.splatF(rowT, 1.0), l));
      o = t.mul(o, t.spread(inv, 1, kTile, dv));
    }
    if (plan.norm)
      o = headNorm(t, o);
    Value out = arg(Arg::Out);
    o = t.convert(o, cast<MemRefType>(out.getType()).getElementType());
    t.store(o, out, {bIdx, h, row0, cst(nb, 0)}, {2, 3});
  });
}

/// The merges over the kSplits parts, one program per (64-row tile, batch x
/// head): LseMerge takes the parts' (m, l) to LSE = M + log2(sum_s
/// 2^(m_s - M) l_s), M the largest m_s (0 for a row without a visible key:
/// its P stays 0); OutputMerge adds the parts' P V and applies the norm
/// and its gate.
void MtaGpuKernel::buildMerge() {
  GpuTiles t(b, loc, elt);
  px = blk::ProgramIdOp::create(b, loc, 0);
  py = blk::ProgramIdOp::create(b, loc, 1);
  Value heads = memref::DimOp::create(
      b, loc, arg(kind == Kind::LseMerge ? Arg::PartM : Arg::PartO), 2);
  Value bi = arith::DivUIOp::create(b, loc, py, heads);
  Value h = arith::RemUIOp::create(b, loc, py, heads);
  row0 = muli(b, px, cst(b, kTile));
  auto rowT = t.slice(kTile, t.row);
  if (kind == Kind::LseMerge) {
    // Merged part by part, as the online softmax merges key tiles (a loop:
    // the CPU form's elementwise fusion took 20 s on the unrolled chain).
    auto loop = scf::ForOp::create(
        b, loc, cst(b, 0), cst(b, kSplits), cst(b, 1),
        ValueRange{t.splatF(rowT, -kInf), t.splatF(rowT, 0.0)},
        [&](OpBuilder &nb, Location, Value sIdx, ValueRange ml) {
          GpuTiles x(nb, loc, elt);
          SmallVector<Value> at = {sIdx, bi, h, row0};
          Value m = x.loadSlice(arg(Arg::PartM), at, 3, kTile, x.row);
          Value l = x.loadSlice(arg(Arg::PartL), at, 3, kTile, x.row);
          Value mNew = x.maxf(ml[0], m);
          Value mSafe = x.safeMax(mNew);
          Value lNew = x.add(x.mul(ml[1], x.exp2(x.sub(ml[0], mSafe))),
                             x.mul(l, x.exp2(x.sub(m, mSafe))));
          scf::YieldOp::create(nb, loc, ValueRange{mNew, lNew});
        });
    Value mSafe = t.safeMax(loop.getResult(0)), l = loop.getResult(1);
    Value empty = t.cmpf(CmpFPredicate::OEQ, l, t.splatF(rowT, 0.0));
    Value lse = t.add(mSafe, math::Log2Op::create(b, loc, l));
    lse = t.select(empty, t.splatF(rowT, 0.0), lse);
    t.store(lse, arg(Arg::Lse), {bi, h, row0}, {2});
  } else {
    int64_t dv = plan.dv;
    Value o = t.zeros({kTile, dv});
    for (int64_t sIdx = 0; sIdx < kSplits; ++sIdx)
      o = t.add(o, t.loadAcc(arg(Arg::PartO),
                             {cst(b, sIdx), bi, h, row0, cst(b, 0)},
                             {kTile, dv}, {3, 4}));
    if (plan.norm)
      o = headNorm(t, o);
    Value out = arg(Arg::Out);
    o = t.convert(o, cast<MemRefType>(out.getType()).getElementType());
    t.store(o, out, {bi, h, row0, cst(b, 0)}, {2, 3});
  }
  func::ReturnOp::create(b, loc);
}

/// The buffers of sharedBytesOf(): the post stencil's probabilities and
/// Toeplitz rows take the pre stencil's buffers (its pass is over by then:
/// preLogits ends on a barrier), as windows of the same row stride.
void MtaGpuKernel::allocStencilBuffers(GpuTiles &t) {
  Type f16 = t.b.getF16Type();
  int64_t ws = geo.sWidth(), wl = geo.lWidth();
  int64_t logitRows = Geometry::span(geo.logitRows);
  if (plan.convPre) {
    int64_t rows = Geometry::span(geo.scoreRows);
    sHi = t.allocPadded(rows, ws, f16);
    sLo = t.allocPadded(rows, ws, f16);
    sToe = t.allocPadded(geo.toeStages * ws, wl, f16);
    if (kThetaLo)
      sToeLo = t.allocPadded(geo.toeStages * ws, wl, f16);
  }
  if (kind != Kind::Output || !plan.convPost)
    return;
  Value c0 = cst(t.b, 0);
  if (plan.convPre) {
    pHi = t.window(sHi, c0, 0, logitRows, wl);
    pLo = t.window(sLo, c0, 0, logitRows, wl);
    pToe = t.window(sToe, c0, 0, geo.toeStages * wl, kTile);
    if (kThetaLo)
      pToeLo = t.window(sToeLo, c0, 0, geo.toeStages * wl, kTile);
    return;
  }
  pHi = t.allocPadded(logitRows, wl, f16);
  pLo = t.allocPadded(logitRows, wl, f16);
  pToe = t.allocPadded(geo.toeStages * wl, kTile, f16);
  if (kThetaLo)
    pToeLo = t.allocPadded(geo.toeStages * wl, kTile, f16);
}

void MtaGpuKernel::build() {
  if (kind == Kind::LseMerge || kind == Kind::OutputMerge)
    return buildMerge();
  GpuTiles t(b, loc, elt);
  AttentionOp op = plan.op;
  int64_t dv = plan.dv;
  Value q = arg(Arg::Q);
  px = blk::ProgramIdOp::create(b, loc, 0);
  py = blk::ProgramIdOp::create(b, loc, 1);
  hq = memref::DimOp::create(b, loc, q, 1);
  hk = memref::DimOp::create(b, loc, arg(Arg::K), 1);
  tLen = memref::DimOp::create(b, loc, q, 2);
  sLen = memref::DimOp::create(b, loc, arg(Arg::K), 2);
  auto weightHeads = [&](bool has, Arg a) -> Value {
    return has ? memref::DimOp::create(b, loc, arg(a), 1) : Value();
  };
  groupSz = groupSize(b, loc, weightHeads(plan.mixPre, Arg::WPre),
                      weightHeads(plan.mixPost, Arg::WPost), hq);
  Value groups = arith::DivUIOp::create(b, loc, hq, groupSz);
  bIdx = arith::DivUIOp::create(b, loc, py, groups);
  grp = arith::RemUIOp::create(b, loc, py, groups);
  off = subi(b, sLen, tLen);
  // Row tiles heaviest first, each one's parts next to each other (px
  // stays the program's scratch slot).
  const int64_t parts = kind == Kind::Single ? 1 : kSplits;
  part = arith::RemUIOp::create(b, loc, px, cst(b, parts));
  row0 = muli(
      b,
      t.heaviestFirst(arith::DivUIOp::create(b, loc, px, cst(b, parts)),
                      arith::CeilDivUIOp::create(b, loc, tLen, cst(b, kTile))),
      cst(b, kTile));
  Value qPos0 = addi(b, off, row0);
  sQ = t.alloc({kTile, plan.d});
  sK = t.alloc({geo.sWidth(), plan.d});
  if (kind != Kind::Lse)
    sV = t.alloc({kTile, dv});
  if (arg(Arg::KLo)) {
    sQLo = t.alloc({kTile, plan.d});
    sKLo = t.alloc({geo.sWidth(), plan.d});
  }
  if (geo.mma)
    allocStencilBuffers(t);

  // Fresh state for every head of the group.
  SmallVector<Arg, 3> carried;
  if (kind != Kind::Output)
    carried.append({Arg::MBuf, Arg::LBuf});
  if (kind != Kind::Lse)
    carried.push_back(Arg::AccBuf);
  forHeads(b, [&](OpBuilder &nb, Value hl) {
    GpuTiles n(nb, loc, elt);
    auto rowT = n.slice(kTile, n.row);
    for (Arg a : carried)
      writeState(n, a, hl,
                 a == Arg::AccBuf
                     ? n.zeros({kTile, dv})
                     : n.splatF(rowT, a == Arg::MBuf ? -kInf : 0.0));
  });

  // Causal tile skipping stops the walk after the diagonal (pass 2's rows
  // above lie before it, so the same bound holds).
  Value kvEnd = sLen, kvStart = cst(b, 0);
  if (plan.mask != MaskKind::none)
    kvEnd = arith::MinSIOp::create(b, loc, sLen, addi(b, qPos0, cst(b, kTile)));
  if (plan.mask == MaskKind::sliding_window)
    kvStart = arith::MaxSIOp::create(
        b, loc, cst(b, 0),
        subi(b, qPos0, cst(b, op.getWindow().value_or(0) - 1)));
  // Packed sequences: no output row sees a key before the first row's
  // sequence (the halo rows of an earlier one read none either).
  if (Value cu = arg(Arg::Cu)) {
    Value first = offsetAt(b, loc, cu, sequenceOf(b, loc, cu, row0));
    kvStart = arith::MaxSIOp::create(
        b, loc, kvStart,
        muli(b, arith::DivUIOp::create(b, loc, first, cst(b, kTile)),
             cst(b, kTile)));
  }
  if (parts > 1) {
    // Part s of the walk's n tiles: [n s / parts, n (s + 1) / parts).
    Value n = arith::CeilDivSIOp::create(
        b, loc,
        arith::MaxSIOp::create(b, loc, subi(b, kvEnd, kvStart), cst(b, 0)),
        cst(b, kTile));
    auto bound = [&](Value sIdx) {
      return addi(
          b, kvStart,
          muli(b,
               arith::DivUIOp::create(b, loc, muli(b, n, sIdx), cst(b, parts)),
               cst(b, kTile)));
    };
    Value lo = bound(part);
    kvEnd =
        arith::MinSIOp::create(b, loc, kvEnd, bound(addi(b, part, cst(b, 1))));
    kvStart = lo;
  }
  // The state in registers is the key loop's carried values.
  SmallVector<Value> init;
  if (inRegisters())
    for (Arg a : carried)
      init.push_back(cur.lookup(a));
  auto keyLoop = scf::ForOp::create(
      b, loc, kvStart, kvEnd, cst(b, kTile), init,
      [&](OpBuilder &nb, Location, Value j0, ValueRange state) {
        for (auto [a, v] : llvm::zip(carried, state))
          cur[a] = v;
        if (kind == Kind::Output) {
          outputStep(nb, j0);
        } else {
          if (plan.mixPre)
            forHeads(nb, [&](OpBuilder &hb, Value hl) {
              GpuTiles x(hb, loc, elt);
              Value c = preLogits(x, hl, j0).front();
              x.store(c, arg(Arg::CBuf), at(hb, hl, {kTile, 0}), {3, 4},
                      /*inBounds=*/true);
            });
          if (plan.mixPre)
            mixGroup(nb, arg(Arg::WPre), arg(Arg::CBuf), arg(Arg::XBuf),
                     {kTile}, geo.lWidth());
          forHeads(nb, [&](OpBuilder &hb, Value hl) {
            GpuTiles x(hb, loc, elt);
            onlineStep(x, hl, j0);
          });
        }
        SmallVector<Value> next;
        if (inRegisters())
          for (Arg a : carried)
            next.push_back(cur.lookup(a));
        scf::YieldOp::create(nb, loc, next);
      });
  for (auto [a, v] : llvm::zip(carried, keyLoop.getResults()))
    cur[a] = v;
  epilogue(b);
  func::ReturnOp::create(b, loc);
}

/// Host side: buffers, kernels and launches replacing `op`.
class MtaGpuHost {
public:
  MtaGpuHost(const MtaPieces &plan, SymbolTable &symbols, int64_t sharedBytes)
      : plan(plan), symbols(symbols), loc(plan.op.getLoc()), b(plan.op),
        sharedBytes(sharedBytes) {}

  void lower();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value tdim(Value t, int64_t i) { return tensor::DimOp::create(b, loc, t, i); }
  Value toBuffer(Value t) {
    return bufferization::ToBufferOp::create(b, loc, bufferTypeOf(t), t,
                                             /*read_only=*/true);
  }
  /// An f32 scratch [gx, gy, (G,) shape...].
  Value scratch(ArrayRef<int64_t> shape, bool perHead = true) {
    SmallVector<int64_t> dims = {ShapedType::kDynamic, ShapedType::kDynamic};
    SmallVector<Value> sizes = {gridX, gridY};
    if (perHead) {
      dims.push_back(ShapedType::kDynamic);
      sizes.push_back(groupSz);
    }
    dims.append(shape.begin(), shape.end());
    return memref::AllocOp::create(
        b, loc, MemRefType::get(dims, b.getF32Type()), sizes);
  }
  void launch(Kind kind, StringRef suffix,
              ArrayRef<std::pair<Arg, Value>> extra, Value gx, Value gy);
  /// The scratch every kernel of `kind` needs besides its own.
  void addTileScratch(Kind kind, SmallVectorImpl<std::pair<Arg, Value>> &to);
  /// Whether a kernel of `kind` takes the tensor-core stencil: it has a
  /// stencil and its buffers fit the chip's shared memory (pass 2 of 65 x
  /// 17 kernels at D = 128 with RoPE takes 192 KB: sm_80's 163 KB keeps
  /// the scratch taps; the released configuration's takes 150 KB).
  bool mmaStencil(Kind kind) const {
    return geometryOf(plan, kind, true).mma &&
           sharedBytesOf(plan, kind, true) <= sharedBytes;
  }
  /// The tensor-core stencil's Toeplitz stages (Geometry::toeStages): 2
  /// where the second fits the chip and, for a program of one head, costs
  /// no block per SM that shared memory allowed (such grids have B H T /
  /// 64 programs, several per SM). A program walking a mixed head group
  /// takes 2 wherever they fit: the rule was set when its grid was T / 64
  /// programs (the released configuration at B = 1: fewer than the H200's
  /// 132 SMs at T = 8192), where a second block per SM would have found no
  /// program to run. Since the split-K passes (kSplits programs per query
  /// tile: 512 at T = 8192) one stage would let the LSE pass run 2 blocks
  /// per SM (111 KB instead of 122); which is faster is not measured yet.
  int64_t toeStages(Kind kind) const {
    if (!mmaStencil(kind))
      return 1;
    int64_t one = sharedBytesOf(plan, kind, true, 1);
    int64_t two = sharedBytesOf(plan, kind, true, 2);
    if (two > sharedBytes)
      return 1;
    if (plan.mixPre || plan.mixPost)
      return 2;
    return gpu_occupancy::blocksBySharedMemory(two) ==
                   gpu_occupancy::blocksBySharedMemory(one)
               ? 2
               : 1;
  }
  /// The Toeplitz kernel's operands of one conv: theta [H, c_q, c_k] as
  /// f16 (hi, and lo with kThetaLo) [H, c_q, k, n], band offset `c0`.
  std::pair<Value, Value> launchToeplitz(Value theta, StringRef suffix,
                                         int64_t c0, int64_t k, int64_t n);

  const MtaPieces &plan;
  SymbolTable &symbols;
  Location loc;
  OpBuilder b;
  SmallVector<std::pair<Arg, Value>> common;
  Value gridX, gridY, groupSz;
  int64_t sharedBytes;
  /// The Toeplitz operands of the pre and post convs (hi, lo), where a
  /// kernel takes the tensor-core stencil.
  std::pair<Value, Value> toePre, toePost;
};

std::pair<Value, Value> MtaGpuHost::launchToeplitz(Value theta,
                                                   StringRef suffix, int64_t c0,
                                                   int64_t k, int64_t n) {
  auto thetaType = cast<RankedTensorType>(theta.getType());
  const int64_t cq = thetaType.getDimSize(1), ck = thetaType.getDimSize(2);
  auto toeType =
      MemRefType::get({ShapedType::kDynamic, cq, k, n}, b.getF16Type());
  SmallVector<Type> types = {bufferTypeOf(theta), toeType};
  if (kThetaLo)
    types.push_back(toeType);
  func::FuncOp kernel = createBlockKernel(plan.op, symbols, suffix, types);
  // Scalar code in the GPU form (one warp per program, its lanes alike,
  // as the gate prefix): program (h c_q + a, row) writes row `row` of
  // Toe_a of head h, n elements.
  kernel->setAttr("attn_block.num_warps", b.getI64IntegerAttr(1));
  {
    OpBuilder kb = OpBuilder::atBlockBegin(&kernel.getBody().front());
    TileBuilder t(kb, loc);
    Block &body = kernel.getBody().front();
    Value th = body.getArgument(0), hi = body.getArgument(1);
    Value lo = kThetaLo ? body.getArgument(2) : Value();
    Value x = blk::ProgramIdOp::create(kb, loc, 0);
    Value row = blk::ProgramIdOp::create(kb, loc, 1);
    Value h = arith::DivUIOp::create(kb, loc, x, t.idx(cq));
    Value a = arith::RemUIOp::create(kb, loc, x, t.idx(cq));
    Type f16 = kb.getF16Type(), f32 = kb.getF32Type();
    Value zero = arith::ConstantOp::create(kb, loc, kb.getF32FloatAttr(0));
    scf::ForOp::create(
        kb, loc, t.idx(0), t.idx(n), t.idx(1), ValueRange{},
        [&](OpBuilder &nb, Location, Value col, ValueRange) {
          // b = row - col - c0, in the band iff 0 <= b < c_k.
          Value bi = arith::SubIOp::create(
              nb, loc, arith::SubIOp::create(nb, loc, row, col), t.idx(c0));
          Value in = arith::AndIOp::create(
              nb, loc,
              arith::CmpIOp::create(nb, loc, CmpIPredicate::sge, bi, t.idx(0)),
              arith::CmpIOp::create(nb, loc, CmpIPredicate::slt, bi,
                                    t.idx(ck)));
          Value safe = arith::SelectOp::create(nb, loc, in, bi, t.idx(0));
          Value w = memref::LoadOp::create(nb, loc, th, ValueRange{h, a, safe});
          if (w.getType() != f32)
            w = arith::ExtFOp::create(nb, loc, f32, w);
          w = arith::SelectOp::create(nb, loc, in, w, zero);
          Value w16 = arith::TruncFOp::create(nb, loc, f16, w);
          memref::StoreOp::create(nb, loc, w16, hi, ValueRange{h, a, row, col});
          if (lo) {
            Value rest = arith::SubFOp::create(
                nb, loc, w, arith::ExtFOp::create(nb, loc, f32, w16));
            memref::StoreOp::create(nb, loc,
                                    arith::TruncFOp::create(nb, loc, f16, rest),
                                    lo, ValueRange{h, a, row, col});
          }
          scf::YieldOp::create(nb, loc);
        });
    func::ReturnOp::create(kb, loc);
  }
  Value heads = tdim(theta, 0);
  Value outHi = memref::AllocOp::create(b, loc, toeType, ValueRange{heads});
  Value outLo =
      kThetaLo ? memref::AllocOp::create(b, loc, toeType, ValueRange{heads})
                     .getResult()
               : Value();
  SmallVector<Value> args = {toBuffer(theta), outHi};
  if (outLo)
    args.push_back(outLo);
  blk::LaunchOp::create(b, loc, kernel.getName(),
                        arith::MulIOp::create(b, loc, heads, cst(cq)), cst(k),
                        args);
  return {outHi, outLo};
}

void MtaGpuHost::launch(Kind kind, StringRef suffix,
                        ArrayRef<std::pair<Arg, Value>> extra, Value gx,
                        Value gy) {
  SmallVector<std::pair<Arg, Value>> all(common);
  all.append(extra.begin(), extra.end());
  SmallVector<Type> types;
  SmallVector<Value> values;
  std::map<Arg, unsigned> index;
  for (auto [role, v] : all) {
    index[role] = values.size();
    values.push_back(v);
    types.push_back(v.getType());
  }
  func::FuncOp kernel = createBlockKernel(plan.op, symbols, suffix, types);
  kernel->setAttr("attn_block.num_warps", b.getI64IntegerAttr(kGpuWarps));
  Type elt = cast<ShapedType>(plan.op.getQ().getType()).getElementType();
  // The merges allocate no buffers: no stencil form to choose.
  const bool merge = kind == Kind::LseMerge || kind == Kind::OutputMerge;
  MtaGpuKernel(plan, kind, !merge && mmaStencil(kind),
               merge ? 1 : toeStages(kind), kernel, index, elt)
      .build();
  blk::LaunchOp::create(b, loc, kernel.getName(), gx, gy, values);
}

void MtaGpuHost::addTileScratch(Kind kind,
                                SmallVectorImpl<std::pair<Arg, Value>> &to) {
  Geometry g = geometryOf(plan, kind);
  const bool mma = mmaStencil(kind);
  auto addToe = [&](Arg hi, Arg lo, std::pair<Value, Value> toe) {
    to.push_back({hi, toe.first});
    if (toe.second)
      to.push_back({lo, toe.second});
  };
  if (mma && plan.convPre)
    addToe(Arg::ToePre, Arg::ToePreLo, toePre);
  if (mma && kind == Kind::Output && plan.convPost)
    addToe(Arg::ToePost, Arg::ToePostLo, toePost);
  if (plan.convPre && !mma)
    to.push_back(
        {Arg::SBuf, scratch({kScoreTiles * kTile, g.sWidth()}, false)});
  if (plan.mixPre) {
    to.push_back({Arg::CBuf, scratch({2 * kTile, g.lWidth()})});
    to.push_back({Arg::XBuf, scratch({2 * kTile, g.lWidth()})});
  }
}

void MtaGpuHost::lower() {
  AttentionOp op = plan.op;
  int64_t dv = plan.dv;
  Value bDim = tdim(op.getQ(), 0), hDim = tdim(op.getQ(), 1),
        tLen = tdim(op.getQ(), 2);
  // With RoPE the kernels read q and k rotated by launchRopeGpuSplit's
  // kernels, each as a 16-bit pair hi + lo of the f32 rotation.
  if (op.getRopeTheta()) {
    RopeSplit r = launchRopeGpuSplit(op, symbols, b);
    common = {
        {Arg::Q, r.qHi}, {Arg::QLo, r.qLo}, {Arg::K, r.kHi}, {Arg::KLo, r.kLo}};
  } else {
    common = {{Arg::Q, toBuffer(op.getQ())}, {Arg::K, toBuffer(op.getK())}};
  }
  common.push_back({Arg::V, toBuffer(op.getV())});
  if (plan.fox)
    common.push_back({Arg::G, launchGatePrefix(op, symbols, b)});
  if (Value cu = op.getCuSeqlens())
    common.push_back({Arg::Cu, toBuffer(cu)});
  if (plan.convPre)
    common.push_back({Arg::ThetaPre, toBuffer(op.getKqConvPre())});
  if (plan.mixPre)
    common.push_back({Arg::WPre, toBuffer(op.getHeadMixPre())});
  if (plan.convPost)
    common.push_back({Arg::ThetaPost, toBuffer(op.getKqConvPost())});
  if (plan.mixPost)
    common.push_back({Arg::WPost, toBuffer(op.getHeadMixPost())});
  if (plan.norm)
    common.push_back({Arg::Gamma, toBuffer(op.getNorm())});
  if (plan.gate) {
    common.push_back({Arg::GateW, toBuffer(op.getNormGateW())});
    common.push_back({Arg::GateB, toBuffer(op.getNormGateB())});
  }

  // The Toeplitz operands, as wide as the widest kernel reading them
  // (pass 2's pre conv: 96 x 80; the LSE pass takes the top-left corner).
  Kind widest = !plan.twoPass()            ? Kind::Single
                : mmaStencil(Kind::Output) ? Kind::Output
                                           : Kind::Lse;
  if (plan.convPre && mmaStencil(widest)) {
    Geometry g = geometryOf(plan, widest, true);
    toePre = launchToeplitz(op.getKqConvPre(), "mta_toeplitz_pre",
                            g.hc - plan.c(), g.sWidth(), g.lWidth());
  }
  if (plan.convPost && mmaStencil(Kind::Output)) {
    Geometry g = geometryOf(plan, Kind::Output, true);
    toePost = launchToeplitz(op.getKqConvPost(), "mta_toeplitz_post",
                             g.hc2 - plan.c2(), g.lWidth(), kTile);
  }
  groupSz =
      groupSize(b, loc, plan.mixPre ? tdim(op.getHeadMixPre(), 1) : Value(),
                plan.mixPost ? tdim(op.getHeadMixPost(), 1) : Value(), hDim);
  // The two passes: kSplits programs per query tile (each with its own
  // scratch slot).
  Value tiles = arith::CeilDivUIOp::create(b, loc, tLen, cst(kTile));
  gridX = plan.twoPass() ? arith::MulIOp::create(b, loc, tiles, cst(kSplits))
                         : tiles;
  gridY = arith::MulIOp::create(b, loc, bDim,
                                arith::DivUIOp::create(b, loc, hDim, groupSz));

  Value out = allocResult(b, loc, op, bDim, hDim, tLen);
  // The heads' softmax state: in scratch when a program owns a group of
  // heads, in registers when it owns one (no mixing).
  const bool stateInScratch = plan.mixPre || plan.mixPost;
  SmallVector<std::pair<Arg, Value>> stats, accState;
  if (stateInScratch) {
    stats = {{Arg::MBuf, scratch({kTile})}, {Arg::LBuf, scratch({kTile})}};
    accState = {{Arg::AccBuf, scratch({kTile, dv})}};
  }
  if (!plan.twoPass()) {
    SmallVector<std::pair<Arg, Value>> extra;
    addTileScratch(Kind::Single, extra);
    extra.append(stats.begin(), stats.end());
    extra.append(accState.begin(), accState.end());
    extra.push_back({Arg::Out, out});
    launch(Kind::Single, "mta_kernel", extra, gridX, gridY);
  } else {
    auto lseType = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic},
        b.getF32Type());
    Value lse =
        memref::AllocOp::create(b, loc, lseType, ValueRange{bDim, hDim, tLen});
    // The parts' softmax states [parts, B, H, T] and P V sums [parts, B,
    // H, T, Dv].
    // (Dv static: a register tile's stores and loads take whole rows.)
    SmallVector<int64_t> dyn(4, ShapedType::kDynamic);
    SmallVector<Value> partDims = {cst(kSplits), bDim, hDim, tLen};
    auto statType = MemRefType::get(dyn, b.getF32Type());
    Value partM = memref::AllocOp::create(b, loc, statType, partDims);
    Value partL = memref::AllocOp::create(b, loc, statType, partDims);
    dyn.push_back(dv);
    Value partO = memref::AllocOp::create(
        b, loc, MemRefType::get(dyn, b.getF32Type()), partDims);
    Value mergeY = arith::MulIOp::create(b, loc, bDim, hDim);
    SmallVector<std::pair<Arg, Value>> pass1;
    addTileScratch(Kind::Lse, pass1);
    pass1.append(stats.begin(), stats.end());
    pass1.push_back({Arg::PartM, partM});
    pass1.push_back({Arg::PartL, partL});
    launch(Kind::Lse, "mta_lse_kernel", pass1, gridX, gridY);
    launch(Kind::LseMerge, "mta_lse_merge",
           {{Arg::PartM, partM}, {Arg::PartL, partL}, {Arg::Lse, lse}}, tiles,
           mergeY);
    SmallVector<std::pair<Arg, Value>> pass2 = {{Arg::Lse, lse}};
    addTileScratch(Kind::Output, pass2);
    if (plan.convPost && !mmaStencil(Kind::Output))
      pass2.push_back(
          {Arg::PsBuf,
           scratch({2 * kTile, geometryOf(plan, Kind::Output).lWidth()},
                   false)});
    if (plan.mixPost) {
      pass2.push_back({Arg::PBuf, scratch({kTile, kTile})});
      pass2.push_back({Arg::YBuf, scratch({kTile, kTile})});
    }
    pass2.append(accState.begin(), accState.end());
    pass2.push_back({Arg::PartO, partO});
    launch(Kind::Output, "mta_output_kernel", pass2, gridX, gridY);
    launch(Kind::OutputMerge, "mta_output_merge",
           {{Arg::PartO, partO}, {Arg::Out, out}}, tiles, mergeY);
  }
  Value result = bufferization::ToTensorOp::create(
      b, loc, op.getResult().getType(), out, /*restrict=*/true,
      /*writable=*/true);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
}

} // namespace

std::string mlir::attn::checkMtaGpuSupport(AttentionOp op,
                                           const BlockTarget &) {
  Type e = cast<ShapedType>(op.getQ().getType()).getElementType();
  if (!e.isBF16() && !e.isF16())
    return "the MTA GPU form takes bf16 or f16 q, k, v (the m16n8k16 "
           "mma.sync operands)";
  for (Value x : {op.getK(), op.getV()})
    if (cast<ShapedType>(x.getType()).getElementType() != e)
      return "the MTA GPU form needs q, k and v of one element type";
  for (Value x : {op.getQ(), op.getV()}) {
    int64_t d = cast<ShapedType>(x.getType()).getDimSize(3);
    if (d != 64 && d != 128)
      return "the MTA GPU form needs head dims 64 or 128, got " +
             (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  }
  for (Value k : {op.getKqConvPre(), op.getKqConvPost()}) {
    if (!k)
      continue;
    auto t = cast<ShapedType>(k.getType());
    if (t.getDimSize(1) > kTile + 1 || t.getDimSize(2) > 2 * kHalo + 1)
      return "the MTA GPU form takes key-query kernels of up to " +
             std::to_string(kTile + 1) + " x " + std::to_string(2 * kHalo + 1) +
             " taps (a row tile above, " + std::to_string(kHalo) +
             " keys each side), got " + std::to_string(t.getDimSize(1)) +
             " x " + std::to_string(t.getDimSize(2));
  }
  return "";
}

void mlir::attn::lowerMtaAttentionGpu(AttentionOp op, SymbolTable &symbols,
                                      const BlockLoweringConfig &cfg) {
  MtaPieces plan(op);
  auto chip = getTargetDesc(cfg.target.name);
  int64_t sharedBytes = 0; // no chip description: the scratch taps
  if (chip)
    sharedBytes = chip->sharedBytes;
  else
    llvm::consumeError(chip.takeError());
  MtaGpuHost(plan, symbols, sharedBytes).lower();
}
