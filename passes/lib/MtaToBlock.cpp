//===- MtaToBlock.cpp - attn.attention with MTA -> block kernels ----------===//
//
// Lowers Multi-Token Attention (spec/mta.md §6) and the MTA output norm to
// block kernels plus their launches. A program owns a query tile of every
// head of one head group (grid: tiles x (batch, group)), so head mixing
// sees all the heads it mixes; the group size is a runtime value, so the
// heads exchange tiles through per-program scratch buffers. Score tiles
// carry the key-query convolution's halo, in the masking order of
// spec/mta.md §1.2 / §6.4. Pre-softmax pieces only: one kernel with online
// softmax; any post-softmax piece: an LSE pass and an output pass. The head
// norm is the epilogue. Memory stays O(B H T (D + BN)).
// Design: docs/block-program.md, "The MTA kernels".
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "MtaPieces.h"
#include "PackedSequences.h"
#include "TileBuilder.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::attn;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

const double kLog2e = 1.4426950408889634;
const double kInf = std::numeric_limits<double>::infinity();

/// The kernels' memref arguments, by role.
enum class Arg {
  Q,
  K,
  V,
  G,
  Cos,
  Sin,
  ThetaPre,
  WPre,
  ThetaPost,
  WPost,
  Gamma,
  GateW,
  GateB,
  Cu,
  Lse,
  QBuf,
  CBuf,
  PBuf,
  MBuf,
  LBuf,
  AccBuf,
  Out
};

/// What the lowering of one op fuses (MtaPieces) and its tile shape.
struct MtaPlan : MtaPieces {
  int64_t bm, bn;
  /// Whether the kernels rotate q and k by the host's position tables;
  /// packed sequences restart positions at each sequence, so there the rope
  /// kernels rotate them first (launchRopeGpu).
  bool ropeInKernel;
  MtaPlan(AttentionOp op, const BlockLoweringConfig &cfg)
      : MtaPieces(op), bm(cfg.blockM), bn(cfg.blockN),
        ropeInKernel(rope && !op.getCuSeqlens()) {}
};

/// Heads per program: c_h of the mixing weights (H when the pre and post
/// mixes disagree, since both divide H), 1 without mixing. `c1`/`c2` are the
/// weights' c_h (null when absent).
Value groupSize(OpBuilder &b, Location loc, Value c1, Value c2, Value heads) {
  if (c1 && c2) {
    Value same = arith::CmpIOp::create(b, loc, CmpIPredicate::eq, c1, c2);
    return arith::SelectOp::create(b, loc, same, c1, heads);
  }
  if (c1)
    return c1;
  if (c2)
    return c2;
  return arith::ConstantIndexOp::create(b, loc, 1);
}

/// Builds one kernel body. Which of the three kernels it is decides the key
/// walk's work: Single (pre-only, online softmax with V), Lse (pass 1) or
/// Output (pass 2).
class MtaKernel {
public:
  enum Kind { Single, Lse, Output };

  MtaKernel(const MtaPlan &plan, Kind kind, func::FuncOp kernel,
            const std::map<Arg, unsigned> &argIndex)
      : plan(plan), kind(kind), loc(plan.op.getLoc()),
        b(OpBuilder::atBlockBegin(&kernel.getBody().front())) {
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
  Value dim(OpBuilder &ob, Value m, int64_t i) {
    return memref::DimOp::create(ob, loc, m, i);
  }
  /// Mask coordinates in i32 (positions and lengths stay far below 2^31:
  /// a [T, D] f32 input that long would not fit in memory): the masks'
  /// compares then vectorise 8 wide on AVX2 instead of 4 for i64.
  Value iota32(OpBuilder &ob, Value start, int64_t n) {
    Value i64 = TileBuilder(ob, loc).iota(start, n);
    return arith::TruncIOp::create(
        ob, loc, RankedTensorType::get({n}, ob.getI32Type()), i64);
  }
  Value splat32(OpBuilder &ob, ArrayRef<int64_t> shape, Value index) {
    return TileBuilder(ob, loc).fill(
        shape, arith::IndexCastOp::create(ob, loc, ob.getI32Type(), index));
  }
  /// Scratch tile of program (px, py), local head `hl`.
  Value loadScratch(OpBuilder &ob, Value buf, Value hl,
                    ArrayRef<int64_t> shape);
  void storeScratch(OpBuilder &ob, Value tile, Value buf, Value hl);
  /// Head index and its KV head for local head `hl`.
  Value headOf(OpBuilder &ob, Value hl) {
    return addi(ob, muli(ob, grp, groupSz), hl);
  }
  Value kvHeadOf(OpBuilder &ob, Value h) {
    return arith::DivUIOp::create(ob, loc, h,
                                  arith::DivUIOp::create(ob, loc, hq, hk));
  }
  /// Packed sequences: the sequences of rows [rowStart, +n) (their starts
  /// as an i64 tile); null starts without cu_seqlens.
  SequenceBounds rowSequences(OpBuilder &ob, Value rowStart, int64_t n) {
    Value cu = arg(Arg::Cu);
    if (!cu)
      return {};
    TileBuilder t(ob, loc);
    return sequenceBounds(ob, loc, cu, rowStart, n, t.iota(rowStart, n),
                          /*withEnds=*/false);
  }
  /// The [rows, cols] tile of `keys` (i32 mask coordinates) at or after
  /// the start of rows [rowStart, +rows)' sequences; null without packed
  /// sequences.
  Value inRowSequence(OpBuilder &ob, Value keys, Value rowStart, int64_t rows,
                      int64_t cols) {
    SequenceBounds seqs = rowSequences(ob, rowStart, rows);
    if (!seqs.starts)
      return Value();
    TileBuilder t(ob, loc);
    Value starts = arith::TruncIOp::create(
        ob, loc, RankedTensorType::get({rows}, ob.getI32Type()), seqs.starts);
    return t.cmpi(CmpIPredicate::sge, keys, t.bcast(starts, 1, rows, cols));
  }
  Value stencil(OpBuilder &ob, Value src, Value theta, Value rowStart,
                int64_t rows, int64_t cols);
  Value rope(OpBuilder &ob, Value tile, Value start);
  Value queryTile(OpBuilder &ob, Value h, Value sRow, int64_t rs);
  Value sourceMask(OpBuilder &ob, Value rowStart, int64_t rows, Value colStart,
                   int64_t cols);
  Value convTile(OpBuilder &ob, Value hl, Value rowStart, int64_t rows,
                 Value colStart, int64_t cols, Value srcMask);
  Value mixTile(OpBuilder &ob, Value weight, Value h, Value hl, Value buf,
                ArrayRef<int64_t> shape);
  Value logits(OpBuilder &ob, Value hl, Value rowStart, int64_t rows,
               Value colStart, int64_t cols, Value srcMask, Value outMask);
  Value visible(OpBuilder &ob, Value rowStart, int64_t rows, Value colStart,
                int64_t cols);
  void onlineStep(OpBuilder &ob, Value hl, Value j0, Value srcMask,
                  Value outMask);
  void outputStep(OpBuilder &ob, Value j0);
  void epilogue(OpBuilder &ob);
  Value headNorm(OpBuilder &ob, Value o);
  /// for hl in [0, G): body(builder, hl).
  template <typename F> void forHeads(OpBuilder &ob, F body) {
    scf::ForOp::create(ob, loc, cst(ob, 0), groupSz, cst(ob, 1), ValueRange{},
                       [&](OpBuilder &nb, Location, Value hl, ValueRange) {
                         body(nb, hl);
                         scf::YieldOp::create(nb, loc);
                       });
  }

  const MtaPlan &plan;
  Kind kind;
  Location loc;
  OpBuilder b;
  llvm::SmallDenseMap<Arg, Value> args;
  Value px, py, bIdx, grp, groupSz, hq, hk, tLen, sLen, off, row0, qPos0;
  Value tableStart;
};

Value MtaKernel::loadScratch(OpBuilder &ob, Value buf, Value hl,
                             ArrayRef<int64_t> shape) {
  SmallVector<Value> idx = {px, py, hl};
  SmallVector<int64_t> dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    idx.push_back(cst(ob, 0));
    dims.push_back(3 + i);
  }
  auto load = blk::LoadOp::create(
      ob, loc, RankedTensorType::get(shape, ob.getF32Type()), buf, idx,
      ob.getDenseI64ArrayAttr(dims), ob.getF64FloatAttr(0.0));
  load.setInBoundsAttr(ob.getUnitAttr());
  return load;
}

void MtaKernel::storeScratch(OpBuilder &ob, Value tile, Value buf, Value hl) {
  int64_t rank = cast<RankedTensorType>(tile.getType()).getRank();
  SmallVector<Value> idx = {px, py, hl};
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    idx.push_back(cst(ob, 0));
    dims.push_back(3 + i);
  }
  auto store = blk::StoreOp::create(ob, loc, tile, buf, idx,
                                    ob.getDenseI64ArrayAttr(dims));
  store.setInBoundsAttr(ob.getUnitAttr());
}

/// Rotates a [rows, D] tile whose row r is query/key position `start` + r
/// (in the key numbering: rope_offset is added here).
Value MtaKernel::rope(OpBuilder &ob, Value tile, Value start) {
  if (!plan.ropeInKernel)
    return tile;
  TileBuilder n(ob, loc);
  Value cosTable = arg(Arg::Cos), sinTable = arg(Arg::Sin);
  int64_t rows = cast<RankedTensorType>(tile.getType()).getDimSize(0);
  int64_t half = cast<MemRefType>(cosTable.getType()).getDimSize(1);
  Value pos =
      subi(ob, addi(ob, start, cst(ob, plan.op.getRopeOffset())), tableStart);
  Value cs = n.load(cosTable, {pos, cst(ob, 0)}, {0, 1}, {rows, half});
  Value sn = n.load(sinTable, {pos, cst(ob, 0)}, {0, 1}, {rows, half});
  return blk::RopeOp::create(ob, loc, tile.getType(), tile, cs, sn,
                             plan.op.getRopeStyleAttr());
}

/// The pre-conv output C of head `h` on query rows [rowStart, +rows) and
/// keys [colStart, +cols), base-2 logit units; without a pre conv the
/// (source-masked, if a mix follows) scores themselves.
/// The [rs, D] query tile of head `h` from row `sRow`, in f32, rotated,
/// with scale * log2(e) folded in.
Value MtaKernel::queryTile(OpBuilder &ob, Value h, Value sRow, int64_t rs) {
  TileBuilder n(ob, loc);
  AttentionOp op = plan.op;
  Value qt = n.toF32(
      n.load(arg(Arg::Q), {bIdx, h, sRow, cst(ob, 0)}, {2, 3}, {rs, plan.d}));
  // Query rows rotate at rope_offset + S - T + i, or rope_q_offset + i.
  if (auto qOffset = op.getRopeQOffset())
    qt = rope(ob, qt, addi(ob, sRow, cst(ob, *qOffset - op.getRopeOffset())));
  else
    qt = rope(ob, qt, addi(ob, sRow, off));
  return n.mul(qt, n.splat({rs, plan.d}, ob.getF32Type(),
                           op.getScaleOrDefault() * kLog2e));
}

/// Mask_0 on the source coordinates of the [rows + p, cols + 2c] score tile
/// under output rows [rowStart, +rows), keys [colStart, +cols): 0 <= i' < T,
/// 0 <= j' < S, j' <= i' + S - T. The same for every head, so it is built
/// once per key tile; null when no linear map follows the scores.
Value MtaKernel::sourceMask(OpBuilder &ob, Value rowStart, int64_t rows,
                            Value colStart, int64_t cols) {
  if (!plan.sourceMask())
    return Value();
  TileBuilder n(ob, loc);
  int64_t rs = rows + plan.p(), ns = cols + 2 * plan.c();
  Value sRow = subi(ob, rowStart, cst(ob, plan.p()));
  Value sCol = subi(ob, colStart, cst(ob, plan.c()));
  Value rowsT = n.bcast(iota32(ob, sRow, rs), 1, rs, ns);
  Value colsT = n.bcast(iota32(ob, sCol, ns), 0, rs, ns);
  Value zeroI = splat32(ob, {rs, ns}, cst(ob, 0));
  Value ok = n.cmpi(CmpIPredicate::sge, rowsT, zeroI);
  ok = n.andi(ok,
              n.cmpi(CmpIPredicate::slt, rowsT, splat32(ob, {rs, ns}, tLen)));
  ok = n.andi(ok, n.cmpi(CmpIPredicate::sge, colsT, zeroI));
  ok = n.andi(ok,
              n.cmpi(CmpIPredicate::slt, colsT, splat32(ob, {rs, ns}, sLen)));
  Value diag =
      arith::AddIOp::create(ob, loc, rowsT, splat32(ob, {rs, ns}, off));
  ok = n.andi(ok, n.cmpi(CmpIPredicate::sle, colsT, diag));
  // Packed sequences: a key of an earlier sequence is masked as one right of
  // the diagonal (the halo rows of an earlier sequence: stencil()).
  if (Value own = inRowSequence(ob, colsT, sRow, rs, ns))
    ok = n.andi(ok, own);
  return ok;
}

/// The stencil of `src` ([rows + c_q - 1, cols + c_k - 1], the halo of
/// output rows [rowStart, +rows)) with `theta` [c_q, c_k]. With packed
/// sequences a query tap of output row r reads nothing where its source
/// row lies before r's sequence start: each sequence is convolved as if
/// alone (attn.kq_conv). A tile whose rows and halo rows lie in one
/// sequence takes one stencil; the others one stencil per query tap, each
/// with the rows its tap may not reach selected away.
Value MtaKernel::stencil(OpBuilder &ob, Value src, Value theta, Value rowStart,
                         int64_t rows, int64_t cols) {
  auto type = RankedTensorType::get({rows, cols}, ob.getF32Type());
  SequenceBounds seqs = rowSequences(ob, rowStart, rows);
  if (!seqs.starts)
    return blk::StencilOp::create(ob, loc, type, src, theta);
  auto thetaType = cast<RankedTensorType>(theta.getType());
  int64_t cq = thetaType.getDimSize(0), ck = thetaType.getDimSize(1);
  Value firstHalo = subi(ob, rowStart, cst(ob, cq - 1));
  Value crosses = arith::CmpIOp::create(ob, loc, CmpIPredicate::sgt,
                                        seqs.lastStart, firstHalo);
  auto ifOp = scf::IfOp::create(ob, loc, TypeRange{type}, crosses,
                                /*withElseRegion=*/true);
  OpBuilder tb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
  TileBuilder t(tb, loc);
  Value rowsT = t.iota(rowStart, rows);
  Value tapRows = t.bcast(t.iota(cst(tb, 0), cq), 1, cq, ck);
  auto taps = scf::ForOp::create(
      tb, loc, cst(tb, 0), cst(tb, cq), cst(tb, 1),
      ValueRange{t.splat({rows, cols}, tb.getF32Type(), 0.0)},
      [&](OpBuilder &nb, Location, Value a, ValueRange acc) {
        TileBuilder n(nb, loc);
        Value onlyA =
            n.cmpi(CmpIPredicate::eq, tapRows, n.splatI64({cq, ck}, a));
        Value part = blk::StencilOp::create(
            nb, loc, type, src,
            n.select(onlyA, theta, n.splat({cq, ck}, nb.getF32Type(), 0.0)));
        // Row r's tap a reads source row r - (c_q - 1) + a.
        Value reach = subi(nb, a, cst(nb, cq - 1));
        Value srcRows =
            arith::AddIOp::create(nb, loc, rowsT, n.splatI64({rows}, reach));
        Value ok = n.cmpi(CmpIPredicate::sge, n.bcast(srcRows, 1, rows, cols),
                          n.bcast(seqs.starts, 1, rows, cols));
        Value next = n.add(acc[0], n.select(ok, part, n.splatLike(type, 0.0)));
        scf::YieldOp::create(nb, loc, next);
      });
  scf::YieldOp::create(tb, loc, taps.getResult(0));
  OpBuilder eb = OpBuilder::atBlockBegin(&ifOp.getElseRegion().front());
  scf::YieldOp::create(
      eb, loc, ValueRange{blk::StencilOp::create(eb, loc, type, src, theta)});
  return ifOp.getResult(0);
}

Value MtaKernel::convTile(OpBuilder &ob, Value hl, Value rowStart, int64_t rows,
                          Value colStart, int64_t cols, Value srcMask) {
  TileBuilder n(ob, loc);
  Type f32 = ob.getF32Type(), f64 = ob.getF64Type();
  AttentionOp op = plan.op;
  Value h = headOf(ob, hl);
  int64_t rs = rows + plan.p(), ns = cols + 2 * plan.c();
  Value sRow = subi(ob, rowStart, cst(ob, plan.p()));
  Value sCol = subi(ob, colStart, cst(ob, plan.c()));
  Value c0 = cst(ob, 0);
  // The query tile was prepared once per program (queryTile).
  Value qt = loadScratch(ob, arg(Arg::QBuf), hl, {rs, plan.d});
  Value kh = kvHeadOf(ob, h);
  Value kt =
      n.toF32(n.load(arg(Arg::K), {bIdx, kh, sCol, c0}, {2, 3}, {ns, plan.d}));
  kt = rope(ob, kt, sCol);
  Value zero = n.splat({rs, ns}, f32, 0.0);
  Value s = blk::DotOp::create(ob, loc, zero.getType(), qt, kt, zero,
                               ob.getUnitAttr());
  if (plan.fox) {
    double gs = (op.getGateScaled() ? op.getScaleOrDefault() : 1.0) * kLog2e;
    Value gq = n.load(arg(Arg::G), {bIdx, h, addi(ob, sRow, off)}, {2}, {rs});
    Value gk = n.load(arg(Arg::G), {bIdx, h, sCol}, {2}, {ns});
    Value bias = n.sub(n.bcast(gq, 1, rs, ns), n.bcast(gk, 0, rs, ns));
    bias = n.mul(n.convert(bias, f32), n.splat({rs, ns}, f32, gs));
    s = n.add(s, bias);
    (void)f64;
  }
  if (!plan.sourceMask())
    return s;
  s = n.select(srcMask, s, zero);
  if (!plan.convPre)
    return s;
  Value theta =
      n.load(arg(Arg::ThetaPre), {h, c0, c0}, {1, 2}, {plan.cqPre, plan.ckPre});
  return stencil(ob, s, theta, rowStart, rows, cols);
}

/// out[h] = sum_{m < c_h} weight[h, m] * tile[g0 + m] over the group's
/// scratch tiles of `buf`, g0 the first local head of h's mixing group.
Value MtaKernel::mixTile(OpBuilder &ob, Value weight, Value h, Value hl,
                         Value buf, ArrayRef<int64_t> shape) {
  TileBuilder n(ob, loc);
  Value ch = dim(ob, weight, 1);
  Value g0 = muli(ob, arith::DivUIOp::create(ob, loc, hl, ch), ch);
  Value init = n.splat(shape, ob.getF32Type(), 0.0);
  auto loop = scf::ForOp::create(
      ob, loc, cst(ob, 0), ch, cst(ob, 1), ValueRange{init},
      [&](OpBuilder &nb, Location, Value m, ValueRange acc) {
        TileBuilder t(nb, loc);
        Value w = memref::LoadOp::create(nb, loc, weight, ValueRange{h, m});
        Value src = loadScratch(nb, buf, addi(nb, g0, m), shape);
        Value next = t.add(acc[0], t.mul(t.fill(shape, w), src));
        scf::YieldOp::create(nb, loc, next);
      });
  return loop.getResult(0);
}

/// Whether output (i, j) of a [rows, cols] tile at (rowStart, colStart) is
/// a visible logit: 0 <= i < T, 0 <= j < S and the mask's bounds.
Value MtaKernel::visible(OpBuilder &ob, Value rowStart, int64_t rows,
                         Value colStart, int64_t cols) {
  TileBuilder n(ob, loc);
  Value rowsT = n.bcast(iota32(ob, rowStart, rows), 1, rows, cols);
  Value colsT = n.bcast(iota32(ob, colStart, cols), 0, rows, cols);
  Value zeroI = splat32(ob, {rows, cols}, cst(ob, 0));
  Value ok = n.cmpi(CmpIPredicate::sge, rowsT, zeroI);
  ok = n.andi(
      ok, n.cmpi(CmpIPredicate::slt, rowsT, splat32(ob, {rows, cols}, tLen)));
  ok = n.andi(ok, n.cmpi(CmpIPredicate::sge, colsT, zeroI));
  ok = n.andi(
      ok, n.cmpi(CmpIPredicate::slt, colsT, splat32(ob, {rows, cols}, sLen)));
  Value pos =
      arith::AddIOp::create(ob, loc, rowsT, splat32(ob, {rows, cols}, off));
  if (plan.mask != MaskKind::none)
    ok = n.andi(ok, n.cmpi(CmpIPredicate::sle, colsT, pos));
  if (plan.mask == MaskKind::sliding_window) {
    Value lo = arith::SubIOp::create(
        ob, loc, pos,
        splat32(ob, {rows, cols}, cst(ob, plan.op.getWindow().value_or(0))));
    ok = n.andi(ok, n.cmpi(CmpIPredicate::sgt, colsT, lo));
  }
  if (Value own = inRowSequence(ob, colsT, rowStart, rows, cols))
    ok = n.andi(ok, own);
  return ok;
}

/// Final pre-softmax logits L of local head `hl` (-inf where not visible).
/// With a pre mix the group's C tiles must already be in CBuf.
Value MtaKernel::logits(OpBuilder &ob, Value hl, Value rowStart, int64_t rows,
                        Value colStart, int64_t cols, Value srcMask,
                        Value outMask) {
  TileBuilder n(ob, loc);
  Value h = headOf(ob, hl);
  Value l =
      plan.mixPre
          ? mixTile(ob, arg(Arg::WPre), h, hl, arg(Arg::CBuf), {rows, cols})
          : convTile(ob, hl, rowStart, rows, colStart, cols, srcMask);
  return n.select(outMask, l, n.splat({rows, cols}, ob.getF32Type(), -kInf));
}

/// One online-softmax step of local head `hl` on keys [j0, j0 + BN): the
/// Single kernel (with V) and the Lse kernel (without).
void MtaKernel::onlineStep(OpBuilder &ob, Value hl, Value j0, Value srcMask,
                           Value outMask) {
  TileBuilder n(ob, loc);
  int64_t bm = plan.bm, bn = plan.bn, dv = plan.dv;
  Type f32 = ob.getF32Type();
  Value s = logits(ob, hl, row0, bm, j0, bn, srcMask, outMask);
  Value m = loadScratch(ob, arg(Arg::MBuf), hl, {bm});
  Value l = loadScratch(ob, arg(Arg::LBuf), hl, {bm});
  // A row with no visible key yet keeps m = -inf and uses 0 as its
  // reference so no inf - inf appears.
  Value mNew = n.maxf(m, n.reduce(blk::ReduceKind::max, s));
  Value dead = n.cmpf(CmpFPredicate::OEQ, mNew, n.splat({bm}, f32, -kInf));
  Value mSafe = n.select(dead, n.splat({bm}, f32, 0.0), mNew);
  Value alpha = n.exp2(n.sub(m, mSafe));
  Value p = n.exp2(n.sub(s, n.bcast(mSafe, 1, bm, bn)));
  Value lNew = n.add(n.mul(l, alpha), n.reduce(blk::ReduceKind::sum, p));
  storeScratch(ob, mNew, arg(Arg::MBuf), hl);
  storeScratch(ob, lNew, arg(Arg::LBuf), hl);
  if (kind != Single)
    return;
  Value h = headOf(ob, hl);
  Value vt = n.toF32(n.load(
      arg(Arg::V), {bIdx, kvHeadOf(ob, h), j0, cst(ob, 0)}, {2, 3}, {bn, dv}));
  Value acc = loadScratch(ob, arg(Arg::AccBuf), hl, {bm, dv});
  Value scaled = n.mul(acc, n.bcast(alpha, 1, bm, dv));
  Value accNew = skippingZeroA(
      blk::DotOp::create(ob, loc, scaled.getType(), p, vt, scaled, UnitAttr()));
  storeScratch(ob, accNew, arg(Arg::AccBuf), hl);
}

/// Pass 2 on output keys [j0, j0 + BN) for every head of the group.
void MtaKernel::outputStep(OpBuilder &ob, Value j0) {
  int64_t bm = plan.bm, bn = plan.bn, dv = plan.dv;
  int64_t rows = bm + plan.p2(), cols = bn + 2 * plan.c2();
  Value rowStart = subi(ob, row0, cst(ob, plan.p2()));
  Value colStart = subi(ob, j0, cst(ob, plan.c2()));
  Type f32 = ob.getF32Type();
  // Masks are per key tile, shared by the heads.
  Value srcMask = sourceMask(ob, rowStart, rows, colStart, cols);
  Value outMask = visible(ob, rowStart, rows, colStart, cols);
  Value postMask = visible(ob, row0, bm, j0, bn);
  if (plan.mixPre)
    forHeads(ob, [&](OpBuilder &nb, Value hl) {
      storeScratch(nb,
                   convTile(nb, hl, rowStart, rows, colStart, cols, srcMask),
                   arg(Arg::CBuf), hl);
    });
  auto accumulate = [&](OpBuilder &nb, Value hl, Value p3) {
    TileBuilder n(nb, loc);
    Value h = headOf(nb, hl);
    Value vt =
        n.toF32(n.load(arg(Arg::V), {bIdx, kvHeadOf(nb, h), j0, cst(nb, 0)},
                       {2, 3}, {bn, dv}));
    Value acc = loadScratch(nb, arg(Arg::AccBuf), hl, {bm, dv});
    acc = skippingZeroA(
        blk::DotOp::create(nb, loc, acc.getType(), p3, vt, acc, UnitAttr()));
    storeScratch(nb, acc, arg(Arg::AccBuf), hl);
  };
  forHeads(ob, [&](OpBuilder &nb, Value hl) {
    TileBuilder n(nb, loc);
    Value h = headOf(nb, hl);
    Value l = logits(nb, hl, rowStart, rows, colStart, cols, srcMask, outMask);
    // Exact probabilities; rows above the sequence read LSE 0 and have
    // L = -inf, so they are the post conv's zero padding.
    Value lse = n.load(arg(Arg::Lse), {bIdx, h, rowStart}, {2}, {rows});
    Value p = n.exp2(n.sub(l, n.bcast(lse, 1, rows, cols)));
    if (plan.convPost) {
      Value theta = n.load(arg(Arg::ThetaPost), {h, cst(nb, 0), cst(nb, 0)},
                           {1, 2}, {plan.cqPost, plan.ckPost});
      p = stencil(nb, p, theta, row0, bm, bn);
    }
    // The post conv spills right of the diagonal: Mask_0 on the output.
    p = n.select(postMask, p, n.splat({bm, bn}, f32, 0.0));
    if (plan.mixPost)
      storeScratch(nb, p, arg(Arg::PBuf), hl);
    else
      accumulate(nb, hl, p);
  });
  if (plan.mixPost)
    forHeads(ob, [&](OpBuilder &nb, Value hl) {
      Value p3 = mixTile(nb, arg(Arg::WPost), headOf(nb, hl), hl,
                         arg(Arg::PBuf), {bm, bn});
      accumulate(nb, hl, p3);
    });
}

/// RMSNorm over Dv (gamma shared by heads), then the scalar gate
/// sigmoid(w . y + b), in f32 (spec/mta.md §3).
Value MtaKernel::headNorm(OpBuilder &ob, Value o) {
  TileBuilder n(ob, loc);
  int64_t bm = plan.bm, dv = plan.dv;
  Type f32 = ob.getF32Type();
  Value c0 = cst(ob, 0);
  Value ms = n.mul(n.reduce(blk::ReduceKind::sum, n.mul(o, o)),
                   n.splat({bm}, f32, 1.0 / static_cast<double>(dv)));
  double eps = plan.op.getNormEps().convertToDouble();
  Value rms = math::SqrtOp::create(ob, loc, n.add(ms, n.splat({bm}, f32, eps)));
  Value gamma = n.load(arg(Arg::Gamma), {c0}, {0}, {dv});
  Value y = n.mul(n.div(o, n.bcast(rms, 1, bm, dv)), n.bcast(gamma, 0, bm, dv));
  if (!plan.gate)
    return y;
  Value w = n.load(arg(Arg::GateW), {c0}, {0}, {dv});
  Value bias = memref::LoadOp::create(ob, loc, arg(Arg::GateB), ValueRange{c0});
  Value z =
      n.add(n.reduce(blk::ReduceKind::sum, n.mul(y, n.bcast(w, 0, bm, dv))),
            n.fill({bm}, bias));
  Value one = n.splat({bm}, f32, 1.0);
  Value sig =
      n.div(one, n.add(one, math::ExpOp::create(
                                ob, loc, arith::NegFOp::create(ob, loc, z))));
  return n.mul(y, n.bcast(sig, 1, bm, dv));
}

/// Per head: the LSE (pass 1) or the normalised, normed output.
void MtaKernel::epilogue(OpBuilder &ob) {
  int64_t bm = plan.bm, dv = plan.dv;
  Type f32 = ob.getF32Type();
  forHeads(ob, [&](OpBuilder &nb, Value hl) {
    TileBuilder n(nb, loc);
    Value h = headOf(nb, hl);
    Value c0 = cst(nb, 0);
    if (kind == Lse) {
      // A row without a visible key (l = 0) gets LSE 0: its P stays 0.
      Value m = loadScratch(nb, arg(Arg::MBuf), hl, {bm});
      Value l = loadScratch(nb, arg(Arg::LBuf), hl, {bm});
      Value empty = n.cmpf(CmpFPredicate::OEQ, l, n.splat({bm}, f32, 0.0));
      Value lse = n.add(m, math::Log2Op::create(nb, loc, l));
      lse = n.select(empty, n.splat({bm}, f32, 0.0), lse);
      blk::StoreOp::create(nb, loc, lse, arg(Arg::Lse),
                           ValueRange{bIdx, h, row0},
                           nb.getDenseI64ArrayAttr({2}));
      return;
    }
    Value o = loadScratch(nb, arg(Arg::AccBuf), hl, {bm, dv});
    if (kind == Single) {
      Value l = loadScratch(nb, arg(Arg::LBuf), hl, {bm});
      Value empty = n.cmpf(CmpFPredicate::OEQ, l, n.splat({bm}, f32, 0.0));
      Value inv = n.select(empty, n.splat({bm}, f32, 0.0),
                           n.div(n.splat({bm}, f32, 1.0), l));
      o = n.mul(o, n.bcast(inv, 1, bm, dv));
    }
    if (plan.norm)
      o = headNorm(nb, o);
    Value out = arg(Arg::Out);
    o = n.convert(o, cast<MemRefType>(out.getType()).getElementType());
    blk::StoreOp::create(nb, loc, o, out, ValueRange{bIdx, h, row0, c0},
                         nb.getDenseI64ArrayAttr({2, 3}));
  });
}

void MtaKernel::build() {
  TileBuilder t(b, loc);
  AttentionOp op = plan.op;
  int64_t bm = plan.bm, dv = plan.dv;
  Type f32 = b.getF32Type();
  Value q = arg(Arg::Q);
  px = blk::ProgramIdOp::create(b, loc, 0);
  py = blk::ProgramIdOp::create(b, loc, 1);
  hq = dim(b, q, 1);
  hk = dim(b, arg(Arg::K), 1);
  tLen = dim(b, q, 2);
  sLen = dim(b, arg(Arg::K), 2);
  groupSz = groupSize(b, loc, plan.mixPre ? dim(b, arg(Arg::WPre), 1) : Value(),
                      plan.mixPost ? dim(b, arg(Arg::WPost), 1) : Value(), hq);
  Value groups = arith::DivUIOp::create(b, loc, hq, groupSz);
  bIdx = arith::DivUIOp::create(b, loc, py, groups);
  grp = arith::RemUIOp::create(b, loc, py, groups);
  off = subi(b, sLen, tLen);
  row0 = muli(b, px, cst(b, bm));
  qPos0 = addi(b, off, row0);
  if (plan.ropeInKernel) {
    Value qBase = op.getRopeQOffset()
                      ? cst(b, *op.getRopeQOffset())
                      : addi(b, off, cst(b, op.getRopeOffset()));
    tableStart =
        arith::MinSIOp::create(b, loc, cst(b, op.getRopeOffset()), qBase);
  }

  // Fresh state for every head of the group.
  forHeads(b, [&](OpBuilder &nb, Value hl) {
    TileBuilder n(nb, loc);
    if (kind != Output) {
      storeScratch(nb, n.splat({bm}, f32, -kInf), arg(Arg::MBuf), hl);
      storeScratch(nb, n.splat({bm}, f32, 0.0), arg(Arg::LBuf), hl);
    }
    if (kind != Lse)
      storeScratch(nb, n.splat({bm, dv}, f32, 0.0), arg(Arg::AccBuf), hl);
    int64_t rows = (kind == Output ? bm + plan.p2() : bm) + plan.p();
    Value sRow = subi(nb, row0, cst(nb, rows - bm));
    storeScratch(nb, queryTile(nb, headOf(nb, hl), sRow, rows), arg(Arg::QBuf),
                 hl);
  });

  // Key range: causal tile skipping stops the walk after the diagonal
  // (pass 2's halo rows lie above the tile, so the same bound holds).
  Value kvEnd = sLen, kvStart = cst(b, 0);
  if (plan.mask != MaskKind::none)
    kvEnd = arith::MinSIOp::create(b, loc, sLen, addi(b, qPos0, cst(b, bm)));
  if (plan.mask == MaskKind::sliding_window)
    kvStart = arith::MaxSIOp::create(
        b, loc, cst(b, 0),
        subi(b, qPos0, cst(b, op.getWindow().value_or(0) - 1)));
  // Packed sequences: no output row sees a key before the first row's
  // sequence (the halo rows of an earlier one read none either).
  if (Value cu = arg(Arg::Cu)) {
    Value first = offsetAt(b, loc, cu, sequenceOf(b, loc, cu, row0));
    Value tile = muli(b, arith::DivUIOp::create(b, loc, first, cst(b, plan.bn)),
                      cst(b, plan.bn));
    kvStart = arith::MaxSIOp::create(b, loc, kvStart, tile);
  }
  scf::ForOp::create(
      b, loc, kvStart, kvEnd, cst(b, plan.bn), ValueRange{},
      [&](OpBuilder &nb, Location, Value j0, ValueRange) {
        if (kind == Output) {
          outputStep(nb, j0);
        } else {
          // Masks are per key tile, shared by the heads.
          Value srcMask = sourceMask(nb, row0, plan.bm, j0, plan.bn);
          Value outMask = visible(nb, row0, plan.bm, j0, plan.bn);
          if (plan.mixPre)
            forHeads(nb, [&](OpBuilder &hb, Value hl) {
              storeScratch(
                  hb, convTile(hb, hl, row0, plan.bm, j0, plan.bn, srcMask),
                  arg(Arg::CBuf), hl);
            });
          forHeads(nb, [&](OpBuilder &hb, Value hl) {
            onlineStep(hb, hl, j0, srcMask, outMask);
          });
        }
        scf::YieldOp::create(nb, loc);
      });
  epilogue(b);
  func::ReturnOp::create(b, loc);
}

/// FoX: G = inclusive prefix sums of g per (batch, head), in f64, one
/// program per (batch, head) walking the sequence.
void buildPrefixKernel(const MtaPlan &plan, func::FuncOp kernel) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = plan.op.getLoc();
  TileBuilder t(b, loc);
  Block &body = kernel.getBody().front();
  Value g = body.getArgument(0), prefix = body.getArgument(1);
  int64_t bn = plan.bn;
  Type f64 = b.getF64Type();
  Value py = blk::ProgramIdOp::create(b, loc, 1);
  Value heads = memref::DimOp::create(b, loc, g, 1);
  Value sLen = memref::DimOp::create(b, loc, g, 2);
  Value bIdx = arith::DivUIOp::create(b, loc, py, heads);
  Value h = arith::RemUIOp::create(b, loc, py, heads);
  scf::ForOp::create(
      b, loc, t.idx(0), sLen, t.idx(bn),
      ValueRange{arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0))},
      [&](OpBuilder &nb, Location, Value j0, ValueRange carry) {
        TileBuilder n(nb, loc);
        Value gt = n.convert(n.load(g, {bIdx, h, j0}, {2}, {bn}), f64);
        Value cum =
            n.add(blk::ScanOp::create(nb, loc, gt), n.fill({bn}, carry[0]));
        blk::StoreOp::create(nb, loc, cum, prefix, ValueRange{bIdx, h, j0},
                             nb.getDenseI64ArrayAttr({2}));
        Value total = n.reduce(blk::ReduceKind::sum, n.bcast(gt, 0, 1, bn));
        Value next = n.add(carry[0],
                           tensor::ExtractOp::create(nb, loc, total, n.idx(0)));
        scf::YieldOp::create(nb, loc, ValueRange{next});
      });
  func::ReturnOp::create(b, loc);
}

/// Host side: buffers, kernels and launches replacing `op`.
class MtaHost {
public:
  MtaHost(const MtaPlan &plan, SymbolTable &symbols)
      : plan(plan), symbols(symbols), loc(plan.op.getLoc()), b(plan.op) {}

  void lower();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value tdim(Value t, int64_t i) { return tensor::DimOp::create(b, loc, t, i); }
  Value toBuffer(Value t) {
    return bufferization::ToBufferOp::create(b, loc, bufferTypeOf(t), t,
                                             /*read_only=*/true);
  }
  /// A scratch buffer [gx, gy, G, shape...] of f32.
  Value scratch(ArrayRef<int64_t> shape) {
    SmallVector<int64_t> dims = {ShapedType::kDynamic, ShapedType::kDynamic,
                                 ShapedType::kDynamic};
    dims.append(shape.begin(), shape.end());
    return memref::AllocOp::create(b, loc,
                                   MemRefType::get(dims, b.getF32Type()),
                                   ValueRange{gridX, gridY, groupSz});
  }
  void launch(MtaKernel::Kind kind, StringRef suffix,
              ArrayRef<std::pair<Arg, Value>> extra);
  /// The prepared query tiles of a kernel whose logits have `rows` rows.
  std::pair<Arg, Value> queryScratch(int64_t rows) {
    return {Arg::QBuf, scratch({rows + plan.p(), plan.d})};
  }

  const MtaPlan &plan;
  SymbolTable &symbols;
  Location loc;
  OpBuilder b;
  SmallVector<std::pair<Arg, Value>> common;
  Value gridX, gridY, groupSz;
};

void MtaHost::launch(MtaKernel::Kind kind, StringRef suffix,
                     ArrayRef<std::pair<Arg, Value>> extra) {
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
  MtaKernel(plan, kind, kernel, index).build();
  blk::LaunchOp::create(b, loc, kernel.getName(), gridX, gridY, values);
}

void MtaHost::lower() {
  AttentionOp op = plan.op;
  int64_t bm = plan.bm, bn = plan.bn, dv = plan.dv;
  Value bDim = tdim(op.getQ(), 0), hDim = tdim(op.getQ(), 1),
        tLen = tdim(op.getQ(), 2);
  common = {{Arg::Q, toBuffer(op.getQ())},
            {Arg::K, toBuffer(op.getK())},
            {Arg::V, toBuffer(op.getV())}};
  if (plan.fox) {
    // G = cumsum(g) in f64 by its own kernel, read by the main kernels.
    Value g = toBuffer(op.getG());
    auto gType = cast<MemRefType>(g.getType());
    auto prefixType = MemRefType::get(gType.getShape(), b.getF64Type());
    SmallVector<Value> dyn;
    for (int64_t i = 0; i < 3; ++i)
      if (prefixType.isDynamicDim(i))
        dyn.push_back(tdim(op.getG(), i));
    Value prefix = memref::AllocOp::create(b, loc, prefixType, dyn);
    func::FuncOp kernel =
        createBlockKernel(op, symbols, "mta_fox_prefix", {gType, prefixType});
    buildPrefixKernel(plan, kernel);
    blk::LaunchOp::create(b, loc, kernel.getName(), cst(1),
                          arith::MulIOp::create(b, loc, bDim, hDim),
                          ValueRange{g, prefix});
    common.push_back({Arg::G, prefix});
  }
  if (plan.ropeInKernel) {
    auto [cosTable, sinTable] = buildRopeTables(op, b);
    common.push_back({Arg::Cos, toBuffer(cosTable)});
    common.push_back({Arg::Sin, toBuffer(sinTable)});
  } else if (plan.rope) {
    auto [q, k] = launchRopeGpu(op, symbols, b);
    common[0].second = q;
    common[1].second = k;
  }
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

  groupSz =
      groupSize(b, loc, plan.mixPre ? tdim(op.getHeadMixPre(), 1) : Value(),
                plan.mixPost ? tdim(op.getHeadMixPost(), 1) : Value(), hDim);
  gridX = arith::CeilDivUIOp::create(b, loc, tLen, cst(bm));
  gridY = arith::MulIOp::create(b, loc, bDim,
                                arith::DivUIOp::create(b, loc, hDim, groupSz));

  Value out = allocResult(b, loc, op, bDim, hDim, tLen);

  if (!plan.twoPass()) {
    SmallVector<std::pair<Arg, Value>> extra = {queryScratch(bm)};
    if (plan.mixPre)
      extra.push_back({Arg::CBuf, scratch({bm, bn})});
    extra.append({{Arg::MBuf, scratch({bm})},
                  {Arg::LBuf, scratch({bm})},
                  {Arg::AccBuf, scratch({bm, dv})},
                  {Arg::Out, out}});
    launch(MtaKernel::Single, "mta_kernel", extra);
  } else {
    auto lseType = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic},
        b.getF32Type());
    Value lse =
        memref::AllocOp::create(b, loc, lseType, ValueRange{bDim, hDim, tLen});
    SmallVector<std::pair<Arg, Value>> pass1 = {queryScratch(bm)};
    if (plan.mixPre)
      pass1.push_back({Arg::CBuf, scratch({bm, bn})});
    pass1.append({{Arg::MBuf, scratch({bm})},
                  {Arg::LBuf, scratch({bm})},
                  {Arg::Lse, lse}});
    launch(MtaKernel::Lse, "mta_lse_kernel", pass1);
    SmallVector<std::pair<Arg, Value>> pass2 = {{Arg::Lse, lse},
                                                queryScratch(bm + plan.p2())};
    if (plan.mixPre)
      pass2.push_back(
          {Arg::CBuf, scratch({bm + plan.p2(), bn + 2 * plan.c2()})});
    if (plan.mixPost)
      pass2.push_back({Arg::PBuf, scratch({bm, bn})});
    pass2.append({{Arg::AccBuf, scratch({bm, dv})}, {Arg::Out, out}});
    launch(MtaKernel::Output, "mta_output_kernel", pass2);
  }
  Value result = bufferization::ToTensorOp::create(
      b, loc, op.getResult().getType(), out, /*restrict=*/true,
      /*writable=*/true);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
}

} // namespace

void mlir::attn::lowerMtaAttention(AttentionOp op, SymbolTable &symbols,
                                   const BlockLoweringConfig &cfg) {
  MtaPlan plan(op, cfg);
  MtaHost(plan, symbols).lower();
}
