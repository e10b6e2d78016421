//===- PathToBlock.cpp - PaTH attention -> chunked block kernels ----------===//
//
// Lowers PaTH / PaTH-FoX attention (spec/path_fox.md §2, fla's forward) to
// three block kernels launched in sequence over scratch buffers: the chunk
// kernel (the UT transform: A, T = (I + A)^-1 diag(beta), U, the keys
// transported to the chunk end), the diagonal kernel (the queries
// transported to their chunk start and the diagonal block's partial
// softmax) and the attention kernel (the right-to-left walk carrying the
// f32 transported query). The transport is the dense D x D chunk matrix
// when D < 2C, else two low-rank dots (PathShape::dense). Query tiles are
// whole chunks at absolute positions; scores are in base 2.
// Design: docs/block-program.md, "The PaTH kernels".
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "PathTiles.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// T = (I + A)^-1 diag(beta) for strictly lower A: row r is
/// beta_r e_r - A[r, :] T, rows above r being final already.
Value forwardSubstitution(PathTiles &t, Value a, Value beta, int64_t c) {
  Value cols = t.iota(t.idx(0), c);
  auto loop = scf::ForOp::create(
      t.b, t.loc, t.idx(0), t.idx(c), t.idx(1), ValueRange{t.zeros({c, c})},
      [&](OpBuilder &nb, Location loc, Value r, ValueRange state) {
        PathTiles n(nb, loc);
        Value row = blk::ExtractRowOp::create(
            nb, loc, RankedTensorType::get({c}, nb.getF32Type()), a, r);
        Value x = n.dot(n.bcast(row, 0, 1, c), state[0], n.zeros({1, c}));
        Value xr =
            blk::ExtractRowOp::create(nb, loc, row.getType(), x, n.idx(0));
        Value diag = n.cmpi(CmpIPredicate::eq, cols, n.splatI64({c}, r));
        Value next = n.sub(n.keep(diag, beta), xr);
        scf::YieldOp::create(
            nb, loc,
            ValueRange{blk::InsertRowOp::create(nb, loc, state[0].getType(),
                                                next, state[0], r)});
      });
  return loop.getResult(0);
}

/// (T WK)^T [C keys, C rows of W]: keys' projections on the later w's of
/// their chunk, mixed by T. Shared by kernels 1 and 2.
Value keyCorrection(PathTiles &t, Value kt, Value wt, Value tt, int64_t c) {
  Value kw = t.keep(t.localMask(CmpIPredicate::sgt, c),
                    t.dot(kt, wt, t.zeros({c, c}), /*transposeB=*/true));
  return t.dot(kw, tt, t.zeros({c, c}), /*transposeB=*/true);
}

/// Kernel 1: args (k, w, beta, T, U, Khat, [N]); N = -W^T U, the dense
/// transport of the chunk, rows [chunk * D, chunk * D + D) of [B, Hk, *, D].
void buildChunkKernel(func::FuncOp kernel, const PathShape &ps, Location loc) {
  Block &body = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  PathTiles t(b, loc);
  Value k = body.getArgument(0), w = body.getArgument(1),
        betaMem = body.getArgument(2), tMem = body.getArgument(3),
        uMem = body.getArgument(4), khatMem = body.getArgument(5);
  int64_t c = ps.c, d = ps.d;
  PathProgram p = programIndices(t, Value(), k, c);
  Value c0 = t.idx(0);
  SmallVector<Value> at = {p.b, p.kvHead, p.pos0, c0};
  Value wt = t.load(w, at, {2, 3}, {c, d});
  Value beta = t.load(betaMem, {p.b, p.kvHead, p.pos0}, {2}, {c});
  Value kt = t.f32Load(k, at, {2, 3}, {c, d});

  Value a = t.mul(t.dot(wt, wt, t.zeros({c, c}), /*transposeB=*/true),
                  t.bcast(beta, 1, c, c));
  a = t.keep(t.localMask(CmpIPredicate::slt, c), a);
  Value tt = forwardSubstitution(t, a, beta, c);
  blk::StoreOp::create(b, loc, tt, tMem, at, b.getDenseI64ArrayAttr({2, 3}));
  Value ut = t.dot(tt, wt, t.zeros({c, d}));
  blk::StoreOp::create(b, loc, ut, uMem, at, b.getDenseI64ArrayAttr({2, 3}));
  Value khat = t.dot(t.neg(keyCorrection(t, kt, wt, tt, c)), wt, kt);
  blk::StoreOp::create(b, loc, khat, khatMem, at,
                       b.getDenseI64ArrayAttr({2, 3}));
  if (ps.dense()) {
    // W^T as dot(I, W^T): the block program has no transpose of an operand
    // other than dot's transpose_b; this runs once per chunk.
    Value wtT = t.dot(t.identity(d), wt, t.zeros({d, c}), /*transposeB=*/true);
    Value n = t.dot(t.neg(wtT), ut, t.zeros({d, d}));
    Value row = arith::MulIOp::create(b, loc, p.chunk, t.idx(d));
    blk::StoreOp::create(b, loc, n, body.getArgument(6),
                         ValueRange{p.b, p.kvHead, row, c0},
                         b.getDenseI64ArrayAttr({2, 3}));
  }
  func::ReturnOp::create(b, loc);
}

/// The FoX bias tile (f32, base 2) from G differences in f64.
Value gateBias(PathTiles &t, Value gRows, Value gCols, Value shift,
               const PathShape &ps) {
  int64_t c = ps.c;
  Value diff = t.sub(t.bcast(gRows, 1, c, c), t.bcast(gCols, 0, c, c));
  if (shift)
    diff = t.add(diff, t.fill({c, c}, shift));
  return t.mul(t.convert(diff, t.b.getF32Type()),
               t.splat({c, c}, t.b.getF32Type(), ps.gateScale));
}

/// Online-softmax reference of a row: its max, or 0 while no key is
/// visible (so no inf - inf appears).
Value safeMax(PathTiles &t, Value m, int64_t c) {
  Type f32 = t.b.getF32Type();
  Value dead = t.cmpf(CmpFPredicate::OEQ, m, t.splat({c}, f32, -kInf));
  return t.select(dead, t.splat({c}, f32, 0.0), m);
}

/// Kernel 2: args (q, k, v, w, [g], T, U, Qhat, M, L, O).
void buildDiagonalKernel(func::FuncOp kernel, const PathShape &ps, bool gate,
                         Location loc) {
  Block &body = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  PathTiles t(b, loc);
  unsigned i = 0;
  Value q = body.getArgument(i++), k = body.getArgument(i++),
        v = body.getArgument(i++), w = body.getArgument(i++);
  Value g = gate ? body.getArgument(i++) : Value();
  Value tMem = body.getArgument(i++), uMem = body.getArgument(i++),
        qhatMem = body.getArgument(i++), mMem = body.getArgument(i++),
        lMem = body.getArgument(i++), oMem = body.getArgument(i++);
  int64_t c = ps.c, d = ps.d, dv = ps.dv;
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  PathProgram p = programIndices(t, q, k, c);
  Value c0 = t.idx(0);
  SmallVector<Value> kvAt = {p.b, p.kvHead, p.pos0, c0};
  SmallVector<Value> qAt = {p.b, p.head, p.row0, c0};
  auto dims2 = b.getDenseI64ArrayAttr({2, 3});

  Value qt =
      t.mul(t.f32Load(q, qAt, {2, 3}, {c, d}), t.splat({c, d}, f32, ps.qScale));
  Value wt = t.load(w, kvAt, {2, 3}, {c, d});
  Value kt = t.f32Load(k, kvAt, {2, 3}, {c, d});
  Value tt = t.load(tMem, kvAt, {2, 3}, {c, c});
  Value ut = t.load(uMem, kvAt, {2, 3}, {c, d});

  // q_i^T H_i ... H_a: the query's projections on w's up to its own.
  Value qw = t.keep(t.localMask(CmpIPredicate::sle, c),
                    t.dot(qt, wt, t.zeros({c, c}), /*transposeB=*/true));
  Value qhat = t.dot(t.neg(qw), ut, qt);
  blk::StoreOp::create(b, loc, qhat, qhatMem, qAt, dims2);

  // Exact in-chunk logits q_i^T H_i ... H_{j+1} k_j.
  Value s = t.dot(qt, kt, t.zeros({c, c}), /*transposeB=*/true);
  s = t.dot(t.neg(qw), keyCorrection(t, kt, wt, tt, c), s,
            /*transposeB=*/true);
  if (g) {
    Value gs = blk::ScanOp::create(
        b, loc, t.convert(t.load(g, {p.b, p.head, p.pos0}, {2}, {c}), f64));
    s = t.add(s, gateBias(t, gs, gs, Value(), ps));
  }
  Value valid = t.localMask(CmpIPredicate::sle, c);
  Value sLen = memref::DimOp::create(b, loc, k, 2);
  Value keyPos = t.bcast(t.iota(p.pos0, c), 0, c, c);
  valid = t.andi(valid,
                 t.cmpi(CmpIPredicate::slt, keyPos, t.splatI64({c, c}, sLen)));
  if (ps.mask == MaskKind::sliding_window) {
    Value i64 = t.iota(c0, c);
    Value lo = arith::SubIOp::create(b, loc, t.bcast(i64, 1, c, c),
                                     t.splatI64({c, c}, t.idx(ps.window)));
    valid =
        t.andi(valid, t.cmpi(CmpIPredicate::sgt, t.bcast(i64, 0, c, c), lo));
  }
  s = t.select(valid, s, t.splat({c, c}, f32, -kInf));
  Value m = t.reduce(blk::ReduceKind::max, s);
  Value pr = t.exp2(t.sub(s, t.bcast(safeMax(t, m, c), 1, c, c)));
  Value l = t.reduce(blk::ReduceKind::sum, pr);
  Value vt = t.f32Load(v, kvAt, {2, 3}, {c, dv});
  Value acc = t.dot(pr, vt, t.zeros({c, dv}));
  SmallVector<Value> rowAt = {p.b, p.head, p.row0};
  auto dims1 = b.getDenseI64ArrayAttr({2});
  blk::StoreOp::create(b, loc, m, mMem, rowAt, dims1);
  blk::StoreOp::create(b, loc, l, lMem, rowAt, dims1);
  blk::StoreOp::create(b, loc, acc, oMem, qAt, dims2);
  func::ReturnOp::create(b, loc);
}

/// Kernel 3: args (v, w, [g], U, Khat, Qhat, M, L, O, out), with N (kernel
/// 1's dense transports) in place of w and U when ps.dense().
void buildAttentionKernel(func::FuncOp kernel, const PathShape &ps, bool gate,
                          Location loc) {
  Block &body = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  PathTiles t(b, loc);
  unsigned i = 0;
  Value v = body.getArgument(i++), w = body.getArgument(i++);
  Value g = gate ? body.getArgument(i++) : Value();
  Value uMem = ps.dense() ? Value() : body.getArgument(i++);
  Value khatMem = body.getArgument(i++), qhatMem = body.getArgument(i++),
        mMem = body.getArgument(i++), lMem = body.getArgument(i++),
        oMem = body.getArgument(i++), out = body.getArgument(i++);
  int64_t c = ps.c, d = ps.d, dv = ps.dv;
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  // Qhat is [B, Hq, T, D] and Khat [B, Hk, S, D]: the query and key shapes.
  PathProgram p = programIndices(t, qhatMem, khatMem, c);
  Value c0 = t.idx(0);
  SmallVector<Value> qAt = {p.b, p.head, p.row0, c0};
  SmallVector<Value> rowAt = {p.b, p.head, p.row0};

  Value qt = t.load(qhatMem, qAt, {2, 3}, {c, d});
  Value m0 = t.load(mMem, rowAt, {2}, {c});
  Value l0 = t.load(lMem, rowAt, {2}, {c});
  Value acc0 = t.load(oMem, qAt, {2, 3}, {c, dv});
  Value gq;
  SmallVector<Value> init = {qt, m0, l0, acc0};
  if (g) {
    gq = blk::ScanOp::create(
        b, loc, t.convert(t.load(g, {p.b, p.head, p.pos0}, {2}, {c}), f64));
    init.push_back(arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0)));
  }
  // Chunks c-1 down to the one holding the window's first key.
  Value lowChunk = walkLowChunk(t, ps, p.pos0);
  Value steps = arith::SubIOp::create(b, loc, p.chunk, lowChunk);
  Value rows = t.iota(p.pos0, c);

  auto loop = scf::ForOp::create(
      b, loc, c0, steps, t.idx(1), init,
      [&](OpBuilder &nb, Location, Value n, ValueRange state) {
        PathTiles x(nb, loc);
        Value qt = state[0], m = state[1], l = state[2], acc = state[3];
        Value j0 = arith::SubIOp::create(
            nb, loc, p.pos0,
            arith::MulIOp::create(nb, loc,
                                  arith::AddIOp::create(nb, loc, n, x.idx(1)),
                                  x.idx(c)));
        SmallVector<Value> kvAt = {p.b, p.kvHead, j0, c0};
        Value kt = x.load(khatMem, kvAt, {2, 3}, {c, d});
        Value s = x.dot(qt, kt, x.zeros({c, c}), /*transposeB=*/true);
        Value carry;
        if (g) {
          Value gk = x.convert(x.load(g, {p.b, p.head, j0}, {2}, {c}), f64);
          // carry = sum of g over [j0, pos0): G_i - G_j is
          // carry + scan_q(i) - scan_k(j).
          carry = x.add(state[4], x.total(gk));
          s = x.add(
              s, gateBias(x, gq, blk::ScanOp::create(nb, loc, gk), carry, ps));
        }
        if (ps.mask == MaskKind::sliding_window) {
          Value cols = x.bcast(x.iota(j0, c), 0, c, c);
          Value lo =
              arith::SubIOp::create(nb, loc, x.bcast(rows, 1, c, c),
                                    x.splatI64({c, c}, x.idx(ps.window)));
          s = x.select(x.cmpi(CmpIPredicate::sgt, cols, lo), s,
                       x.splat({c, c}, f32, -kInf));
        }
        Value mNew = x.maxf(m, x.reduce(blk::ReduceKind::max, s));
        Value mSafe = safeMax(x, mNew, c);
        Value alpha = x.exp2(x.sub(m, mSafe));
        Value pr = x.exp2(x.sub(s, x.bcast(mSafe, 1, c, c)));
        Value lNew = x.add(x.mul(l, alpha), x.reduce(blk::ReduceKind::sum, pr));
        Value vt = x.f32Load(v, kvAt, {2, 3}, {c, dv});
        Value accNew = x.dot(pr, vt, x.mul(acc, x.bcast(alpha, 1, c, dv)));
        // q~ <- q~ (I - W^T U): through this chunk's product, for the next.
        Value qNew;
        if (ps.dense()) {
          Value row = arith::MulIOp::create(
              nb, loc, arith::DivUIOp::create(nb, loc, j0, x.idx(c)), x.idx(d));
          Value nt = x.load(w, {p.b, p.kvHead, row, c0}, {2, 3}, {d, d});
          qNew = x.dot(qt, nt, qt);
        } else {
          Value wt = x.load(w, kvAt, {2, 3}, {c, d});
          Value ut = x.load(uMem, kvAt, {2, 3}, {c, d});
          Value r = x.dot(qt, wt, x.zeros({c, c}), /*transposeB=*/true);
          qNew = x.dot(x.neg(r), ut, qt);
        }
        SmallVector<Value> next = {qNew, mNew, lNew, accNew};
        if (g)
          next.push_back(carry);
        scf::YieldOp::create(nb, loc, next);
      });
  Value l = loop.getResult(2), acc = loop.getResult(3);
  Value empty = t.cmpf(CmpFPredicate::OEQ, l, t.splat({c}, f32, 0.0));
  Value inv =
      t.select(empty, t.splat({c}, f32, 0.0), t.div(t.splat({c}, f32, 1.0), l));
  Value o = t.mul(acc, t.bcast(inv, 1, c, dv));
  o = t.convert(o, cast<MemRefType>(out.getType()).getElementType());
  blk::StoreOp::create(b, loc, o, out, qAt, b.getDenseI64ArrayAttr({2, 3}));
  func::ReturnOp::create(b, loc);
}

} // namespace

void mlir::attn::lowerPathAttention(AttentionOp op, SymbolTable &symbols,
                                    const BlockLoweringConfig &cfg) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  int64_t c = cfg.pathChunk;
  PathShape ps = makePathShape(op, c);
  bool gate = static_cast<bool>(op.getG());

  auto dim = [&](Value x, int64_t i) -> Value {
    return tensor::DimOp::create(b, loc, x, i);
  };
  auto buffer = [&](Value x) -> Value {
    return bufferization::ToBufferOp::create(b, loc, bufferTypeOf(x), x,
                                             /*read_only=*/true);
  };
  Value q = buffer(op.getQ()), k = buffer(op.getK()), v = buffer(op.getV()),
        w = buffer(op.getW()), beta = buffer(op.getBeta());
  Value g = gate ? buffer(op.getG()) : Value();
  Value bDim = dim(op.getQ(), 0), hq = dim(op.getQ(), 1),
        tLen = dim(op.getQ(), 2), hk = dim(op.getK(), 1),
        sLen = dim(op.getK(), 2);

  // Scratch, O(B H S D): per KV head T, U, Khat; per query head Qhat and
  // the diagonal block's m, l, P V.
  Type f32 = b.getF32Type();
  auto scratch = [&](Value h, Value len, int64_t inner) -> Value {
    SmallVector<int64_t> shape = {ShapedType::kDynamic, ShapedType::kDynamic,
                                  ShapedType::kDynamic};
    if (inner)
      shape.push_back(inner);
    return memref::AllocOp::create(b, loc, MemRefType::get(shape, f32),
                                   ValueRange{bDim, h, len});
  };
  Value tMem = scratch(hk, sLen, c), uMem = scratch(hk, sLen, ps.d),
        khat = scratch(hk, sLen, ps.d), qhat = scratch(hq, tLen, ps.d),
        mMem = scratch(hq, tLen, 0), lMem = scratch(hq, tLen, 0),
        oPart = scratch(hq, tLen, ps.dv);
  Value out = allocPathOutput(b, loc, op, bDim, hq, tLen);

  auto withGate = [&](SmallVector<Value> head, ArrayRef<Value> tail) {
    if (g)
      head.push_back(g);
    head.append(tail.begin(), tail.end());
    return head;
  };
  Value cIdx = arith::ConstantIndexOp::create(b, loc, c);
  Value chunks = arith::CeilDivUIOp::create(b, loc, sLen, cIdx);
  SmallVector<Value> chunkArgs = {k, w, beta, tMem, uMem, khat};
  SmallVector<Value> diagArgs =
      withGate({q, k, v, w}, {tMem, uMem, qhat, mMem, lMem, oPart});
  SmallVector<Value> mainArgs =
      withGate({v, w}, {uMem, khat, qhat, mMem, lMem, oPart, out});
  if (ps.dense()) {
    Value rows = arith::MulIOp::create(
        b, loc, chunks, arith::ConstantIndexOp::create(b, loc, ps.d));
    Value nMem = scratch(hk, rows, ps.d);
    chunkArgs.push_back(nMem);
    mainArgs = withGate({v, nMem}, {khat, qhat, mMem, lMem, oPart, out});
  }

  func::FuncOp chunkKernel = createBlockKernel(
      op, symbols, kPathChunkKernelSuffix, typesOf(chunkArgs));
  buildChunkKernel(chunkKernel, ps, loc);
  func::FuncOp diagKernel =
      createBlockKernel(op, symbols, "path_diagonal_kernel", typesOf(diagArgs));
  buildDiagonalKernel(diagKernel, ps, gate, loc);
  func::FuncOp mainKernel = createBlockKernel(
      op, symbols, kPathAttentionKernelSuffix, typesOf(mainArgs));
  buildAttentionKernel(mainKernel, ps, gate, loc);

  Value firstChunk = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, sLen, tLen), cIdx);
  Value queryChunks = arith::SubIOp::create(b, loc, chunks, firstChunk);
  Value kvPrograms = arith::MulIOp::create(b, loc, bDim, hk);
  Value qPrograms = arith::MulIOp::create(b, loc, bDim, hq);
  blk::LaunchOp::create(b, loc, chunkKernel.getName(), chunks, kvPrograms,
                        chunkArgs);
  blk::LaunchOp::create(b, loc, diagKernel.getName(), queryChunks, qPrograms,
                        diagArgs);
  blk::LaunchOp::create(b, loc, mainKernel.getName(), queryChunks, qPrograms,
                        mainArgs);
  Value result = bufferization::ToTensorOp::create(
      b, loc, op.getType(), out, /*restrict=*/true, /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
}
