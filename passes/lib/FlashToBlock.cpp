//===- FlashToBlock.cpp - attn.attention -> flash block kernel ------------===//
//
// Lowers a fusable attn.attention (no PaTH, no MTA) to a FlashAttention-style
// kernel in the attn_block dialect plus its launch: one program instance per
// (query tile, batch x query head), a left-to-right walk over key tiles
// carrying the online-softmax state (row max m, row sum l, accumulator acc)
// in f32, RoPE applied to q/k tiles as they are loaded, the FoX bias
// G_i - G_j added on the score tile (G accumulated in f64 along the walk),
// causal tile skipping (the walk stops at the diagonal) and masks on the
// tiles that straddle it. Scores are kept in base 2: scale * log2(e) is
// folded into q, so the softmax uses exp2.
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "TileBuilder.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

/// Emits the kernel for `op` into `kernel`'s body.
void buildKernel(AttentionOp op, func::FuncOp kernel,
                 const BlockLoweringConfig &cfg) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = op.getLoc();
  TileBuilder t(b, loc);
  Block &body = kernel.getBody().front();
  Value q = body.getArgument(0), k = body.getArgument(1),
        v = body.getArgument(2);
  Value g = op.getG() ? body.getArgument(3) : Value();
  Value out = body.getArguments().back();
  int64_t d = cast<ShapedType>(q.getType()).getDimSize(3);
  int64_t dv = cast<ShapedType>(v.getType()).getDimSize(3);
  int64_t bm = cfg.blockM, bn = cfg.blockN;
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  const double log2e = 1.4426950408889634;
  const double inf = std::numeric_limits<double>::infinity();

  FlashProgram prog = t.flashProgram(q, k, bm);
  Value sLen = prog.sLen, bIdx = prog.bIdx, h = prog.h, kh = prog.kh,
        off = prog.off, row0 = prog.row0, qPos0 = prog.qPos0;
  Value c0 = t.idx(0);

  // RoPE reads cos/sin tiles of the per-position tables (kernel arguments
  // after g): row r of a tile starting at `start` is position
  // rope_offset + start + r.
  Value cosTable, sinTable;
  if (op.getRopeTheta()) {
    unsigned first = op.getG() ? 4 : 3;
    cosTable = body.getArgument(first);
    sinTable = body.getArgument(first + 1);
  }
  // Row 0 of the tables is position tableStart, as buildRopeTables lays
  // them out: min(rope_offset, the first query's position).
  Value tableStart;
  if (cosTable) {
    Value qBase =
        op.getRopeQOffset()
            ? t.idx(*op.getRopeQOffset())
            : arith::AddIOp::create(b, loc, off, t.idx(op.getRopeOffset()))
                  .getResult();
    tableStart =
        arith::MinSIOp::create(b, loc, t.idx(op.getRopeOffset()), qBase);
  }
  auto rope = [&](OpBuilder &ob, Value tile, Value start) -> Value {
    if (!cosTable)
      return tile;
    TileBuilder n(ob, loc);
    int64_t rows = cast<RankedTensorType>(tile.getType()).getDimSize(0);
    int64_t half = cast<MemRefType>(cosTable.getType()).getDimSize(1);
    Value pos = arith::SubIOp::create(
        ob, loc,
        arith::AddIOp::create(ob, loc, start, n.idx(op.getRopeOffset())),
        tableStart);
    Value cs = n.load(cosTable, {pos, n.idx(0)}, {0, 1}, {rows, half});
    Value sn = n.load(sinTable, {pos, n.idx(0)}, {0, 1}, {rows, half});
    return blk::RopeOp::create(ob, loc, tile.getType(), tile, cs, sn,
                               op.getRopeStyleAttr());
  };

  // Query tile in f32, rotated, with scale * log2(e) folded in.
  Value qt = t.toF32(t.load(q, {bIdx, h, row0, c0}, {2, 3}, {bm, d}));
  // Query rows rotate at rope_offset + S - T + i, or rope_q_offset + i.
  if (auto qOffset = op.getRopeQOffset())
    qt = rope(b, qt,
              arith::AddIOp::create(b, loc, row0,
                                    t.idx(*qOffset - op.getRopeOffset())));
  else
    qt = rope(b, qt, qPos0);
  qt = t.mul(qt, t.splat({bm, d}, f32, op.getScaleOrDefault() * log2e));
  Value rows = t.iota(qPos0, bm);

  MaskKind mask = op.getMask();
  int64_t window = op.getWindow().value_or(0);
  Value kvStart, kvEnd;
  std::tie(kvStart, kvEnd) = t.flashKeyRange(prog, mask, window, bm, c0);

  // FoX: G at the query rows and at the walk's start, in f64 (G_i - G_j
  // cancels; f32 would lose ~1e-5 of the logit at T = 4K).
  Value gq, carry0;
  double gateScale =
      (op.getGateScaled() ? op.getScaleOrDefault() : 1.0) * log2e;
  auto prefix = [&](Value upto) -> Value { // sum of g[b, h, 0 .. upto)
    auto loop = scf::ForOp::create(
        b, loc, c0, upto, t.idx(bn),
        ValueRange{arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0))},
        [&](OpBuilder &nb, Location, Value j0, ValueRange acc) {
          TileBuilder n(nb, loc);
          Value gt = n.convert(n.load(g, {bIdx, h, j0}, {2}, {bn}), f64);
          Value cols = n.iota(j0, bn);
          Value keep = n.cmpi(CmpIPredicate::slt, cols, n.splatI64({bn}, upto));
          gt = n.select(keep, gt, n.splat({bn}, f64, 0.0));
          Value two = n.bcast(gt, 0, 1, bn);
          Value s = n.reduce(blk::ReduceKind::sum, two);
          Value s0 = tensor::ExtractOp::create(nb, loc, s, n.idx(0));
          scf::YieldOp::create(nb, loc, ValueRange{n.add(acc[0], s0)});
        });
    return loop.getResult(0);
  };
  if (g) {
    Value gt = t.convert(t.load(g, {bIdx, h, qPos0}, {2}, {bm}), f64);
    gq = t.add(blk::ScanOp::create(b, loc, gt), t.fill({bm}, prefix(qPos0)));
    carry0 = prefix(kvStart);
  }

  SmallVector<Value> init = {t.splat({bm}, f32, -inf), t.splat({bm}, f32, 0.0),
                             t.splat({bm, dv}, f32, 0.0)};
  if (g)
    init.push_back(carry0);
  auto loop = scf::ForOp::create(
      b, loc, kvStart, kvEnd, t.idx(bn), init,
      [&](OpBuilder &nb, Location, Value j0, ValueRange state) {
        TileBuilder n(nb, loc);
        Value m = state[0], l = state[1], acc = state[2];
        Value kt = n.toF32(n.load(k, {bIdx, kh, j0, c0}, {2, 3}, {bn, d}));
        kt = rope(nb, kt, j0);
        Value zero = n.splat({bm, bn}, f32, 0.0);
        Value s = blk::DotOp::create(nb, loc, zero.getType(), qt, kt, zero,
                                     nb.getUnitAttr());
        Value carry;
        if (g) {
          Value gk = n.convert(n.load(g, {bIdx, h, j0}, {2}, {bn}), f64);
          Value gkCum =
              n.add(blk::ScanOp::create(nb, loc, gk), n.fill({bn}, state[3]));
          s = n.addFoxBias(s, gq, gkCum, gateScale);
          Value total = n.reduce(blk::ReduceKind::sum, n.bcast(gk, 0, 1, bn));
          carry = n.add(state[3],
                        tensor::ExtractOp::create(nb, loc, total, n.idx(0)));
        }
        // Masks on the tile: keys past S, and the causal / window bounds.
        Value cols = n.bcast(n.iota(j0, bn), 0, bm, bn);
        Value rowsT = n.bcast(rows, 1, bm, bn);
        Value valid =
            n.cmpi(CmpIPredicate::slt, cols, n.splatI64({bm, bn}, sLen));
        if (mask != MaskKind::none)
          valid = n.andi(valid, n.cmpi(CmpIPredicate::sle, cols, rowsT));
        if (mask == MaskKind::sliding_window) {
          Value lo = arith::SubIOp::create(nb, loc, rowsT,
                                           n.splatI64({bm, bn}, n.idx(window)));
          valid = n.andi(valid, n.cmpi(CmpIPredicate::sgt, cols, lo));
        }
        s = n.select(valid, s, n.splat({bm, bn}, f32, -inf));
        // Online softmax; a row with no visible key yet keeps m = -inf and
        // uses 0 as its reference so no inf - inf appears.
        Value mNew = n.maxf(m, n.reduce(blk::ReduceKind::max, s));
        Value dead = n.cmpf(CmpFPredicate::OEQ, mNew, n.splat({bm}, f32, -inf));
        Value mSafe = n.select(dead, n.splat({bm}, f32, 0.0), mNew);
        Value alpha = n.exp2(n.sub(m, mSafe));
        Value p = n.exp2(n.sub(s, n.bcast(mSafe, 1, bm, bn)));
        Value lNew = n.add(n.mul(l, alpha), n.reduce(blk::ReduceKind::sum, p));
        Value vt = n.toF32(n.load(v, {bIdx, kh, j0, c0}, {2, 3}, {bn, dv}));
        Value scaled = n.mul(acc, n.bcast(alpha, 1, bm, dv));
        Value accNew = blk::DotOp::create(nb, loc, scaled.getType(), p, vt,
                                          scaled, UnitAttr());
        SmallVector<Value> next = {mNew, lNew, accNew};
        if (g)
          next.push_back(carry);
        scf::YieldOp::create(nb, loc, next);
      });
  Value l = loop.getResult(1), acc = loop.getResult(2);
  Value empty = t.cmpf(CmpFPredicate::OEQ, l, t.splat({bm}, f32, 0.0));
  Value inv = t.select(empty, t.splat({bm}, f32, 0.0),
                       t.div(t.splat({bm}, f32, 1.0), l));
  Value o = t.mul(acc, t.bcast(inv, 1, bm, dv));
  o = t.convert(o, cast<MemRefType>(out.getType()).getElementType());
  blk::StoreOp::create(b, loc, o, out, ValueRange{bIdx, h, row0, c0},
                       b.getDenseI64ArrayAttr({2, 3}));
  func::ReturnOp::create(b, loc);
}

} // namespace

std::pair<Value, Value> mlir::attn::buildRopeTables(AttentionOp op,
                                                    OpBuilder &b) {
  Location loc = op.getLoc();
  int64_t d = cast<ShapedType>(op.getQ().getType()).getDimSize(3);
  int64_t rot = op.getRopeDim().value_or(d), half = rot / 2;
  double logTheta = std::log(op.getRopeTheta()->convertToDouble());
  auto cIdx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value t = tensor::DimOp::create(b, loc, op.getQ(), 2);
  Value s = tensor::DimOp::create(b, loc, op.getK(), 2);
  Value kEnd = arith::AddIOp::create(b, loc, s, cIdx(op.getRopeOffset()));
  Value qBase = op.getRopeQOffset()
                    ? cIdx(*op.getRopeQOffset()).getResult()
                    : arith::SubIOp::create(b, loc, kEnd, t).getResult();
  Value qEnd = arith::AddIOp::create(b, loc, qBase, t);
  // Queries may sit at negative positions (mask none with T > S): the table
  // starts at the lowest position any row takes (see tableStart).
  Value start = arith::MinSIOp::create(b, loc, cIdx(op.getRopeOffset()), qBase);
  Value positions = arith::SubIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, kEnd, qEnd), start);
  auto type =
      RankedTensorType::get({ShapedType::kDynamic, half}, b.getF32Type());
  auto table = [&](bool isCos) {
    return tensor::GenerateOp::create(
               b, loc, type, ValueRange{positions},
               [&](OpBuilder &nb, Location l, ValueRange ivs) {
                 auto toF64 = [&](Value idx) -> Value {
                   Value i =
                       arith::IndexCastOp::create(nb, l, nb.getI64Type(), idx);
                   return arith::SIToFPOp::create(nb, l, nb.getF64Type(), i);
                 };
                 Value e = arith::MulFOp::create(
                     nb, l, toF64(ivs[1]),
                     arith::ConstantOp::create(
                         nb, l, nb.getF64FloatAttr(-2.0 * logTheta / rot)));
                 Value pos = arith::AddIOp::create(nb, l, ivs[0], start);
                 Value angle = arith::MulFOp::create(
                     nb, l, toF64(pos), math::ExpOp::create(nb, l, e));
                 Value v = isCos
                               ? math::CosOp::create(nb, l, angle).getResult()
                               : math::SinOp::create(nb, l, angle).getResult();
                 tensor::YieldOp::create(
                     nb, l,
                     arith::TruncFOp::create(nb, l, nb.getF32Type(), v)
                         .getResult());
               })
        .getResult();
  };
  return {table(true), table(false)};
}

void mlir::attn::lowerFlashAttention(AttentionOp op, SymbolTable &symbols,
                                     const BlockLoweringConfig &cfg) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  SmallVector<Value> tensors = {op.getQ(), op.getK(), op.getV()};
  if (op.getG())
    tensors.push_back(op.getG());
  // The GPU form reads q and k rotated by launchRopeGpu's kernels, not
  // tables built on the host.
  if (op.getRopeTheta() && !cfg.target.gpu) {
    auto [cosTable, sinTable] = buildRopeTables(op, b);
    tensors.push_back(cosTable);
    tensors.push_back(sinTable);
  }
  SmallVector<Type> argTypes;
  for (Value v : tensors)
    argTypes.push_back(bufferTypeOf(v));
  argTypes.push_back(bufferTypeOf(op.getResult()));

  func::FuncOp kernel;
  int64_t blockM = cfg.blockM;
  if (cfg.target.gpu) {
    auto parent = op->getParentOfType<func::FuncOp>();
    OpBuilder mb(parent);
    kernel = buildFlashGpuKernel(op, mb,
                                 (parent.getName() + "_attention_kernel").str(),
                                 cfg.target, cfg.blockN);
    symbols.insert(kernel);
    blockM = cfg.target.blockM();
  } else {
    kernel = createBlockKernel(op, symbols, "attention_kernel", argTypes);
    buildKernel(op, kernel, cfg);
  }

  // The launch: buffers in, a fresh output buffer out. The GPU form reads
  // q and k rotated (RoPE) and G' (the gate prologue's output), not g.
  SmallVector<Value> args(tensors.size());
  if (cfg.target.gpu && op.getRopeTheta())
    std::tie(args[0], args[1]) =
        launchRopeGpu(op, symbols, b, cfg.target.dependentLaunch);
  if (cfg.target.gpu && op.getG())
    args[3] = launchGatePrefix(op, symbols, b, cfg.target.dependentLaunch);
  for (auto [arg, v] : llvm::zip(args, tensors))
    if (!arg)
      arg = bufferization::ToBufferOp::create(b, loc, bufferTypeOf(v), v,
                                              /*read_only=*/true);
  if (cfg.target.gpu && usesFoxRecords(op))
    args.push_back(
        launchFoxRecords(op, symbols, b, args[3], cfg.target.dependentLaunch));
  auto outType = bufferTypeOf(op.getResult());
  SmallVector<Value> dyn;
  Value bDim = tensor::DimOp::create(b, loc, op.getQ(), 0);
  Value hDim = tensor::DimOp::create(b, loc, op.getQ(), 1);
  Value tDim = tensor::DimOp::create(b, loc, op.getQ(), 2);
  Value sizes[3] = {bDim, hDim, tDim};
  for (int64_t i = 0; i < 3; ++i)
    if (outType.isDynamicDim(i))
      dyn.push_back(sizes[i]);
  Value out = memref::AllocOp::create(b, loc, outType, dyn);
  args.push_back(out);
  Value bm = arith::ConstantIndexOp::create(b, loc, blockM);
  Value gridX = arith::CeilDivUIOp::create(b, loc, tDim, bm);
  Value gridY = arith::MulIOp::create(b, loc, bDim, hDim);
  blk::LaunchOp::create(b, loc, kernel.getName(), gridX, gridY, args);
  Value result = bufferization::ToTensorOp::create(
      b, loc, op.getType(), out, /*restrict=*/true, /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
}
