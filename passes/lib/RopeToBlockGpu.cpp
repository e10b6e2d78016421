//===- RopeToBlockGpu.cpp - RoPE prologue kernels in the GPU form ---------===//
//
// RoPE's prologue kernels in the GPU form: the GPU form of attn-to-block has
// no host code but launches, so the cos/sin tables (<func>_rope_table, f64
// angles) and the rotations of q and k (<func>_rope_q, <func>_rope_k) are
// block kernels launched before attention, which then reads rotated q and
// k. The half style (ropeTileForm) is tile programs of 4 warps in 2-D
// blocked layouts with 16-byte accesses; the interleaved style is scalar
// code, one warp per row. attn-block-to-gpu lowers both as they are; the CPU
// runs them after attn-block-strip-gpu. Design: docs/block-program.md, the
// RoPE part of "The flash kernel's GPU form".
//
//===----------------------------------------------------------------------===//

#include "AttentionToBlock.h"
#include "PackedSequences.h"
#include "TileBuilder.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Index arithmetic of the rope kernels.
struct Idx {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value dim(Value mem, int64_t d) {
    return memref::DimOp::create(b, loc, mem, d);
  }
  Value toF64(Value index) {
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    return arith::SIToFPOp::create(b, loc, b.getF64Type(), i);
  }
};

/// `v` as a scalar of type `to` (extf / truncf between float types).
Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  unsigned from = v.getType().getIntOrFloatBitWidth();
  if (v.getType() == to)
    return v;
  if (from < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

/// Pairs a rotation kernel loads before it stores (registers: 4 per pair).
constexpr int64_t kChunk = 16;

/// The rotary dim R of `op` (rope_dim, or all of D).
int64_t rotaryDim(AttentionOp op) {
  int64_t d = cast<ShapedType>(op.getQ().getType()).getDimSize(3);
  return op.getRopeDim().value_or(d);
}

/// Writes cos/sin(pos * theta^(-2i/R)) for i < R/2 into row `row` of `cosT`
/// and `sinT`, the angle in f64.
void emitTableRow(AttentionOp op, OpBuilder &b, Location loc, Value cosT,
                  Value sinT, Value row, Value pos) {
  Idx x{b, loc};
  int64_t rot = rotaryDim(op);
  const double logTheta = std::log(op.getRopeTheta()->convertToDouble());
  Value posF = x.toF64(pos);
  Value expScale = arith::ConstantOp::create(
      b, loc, b.getF64FloatAttr(-2.0 * logTheta / static_cast<double>(rot)));
  scf::ForOp::create(
      b, loc, x.c(0), x.c(rot / 2), x.c(1), ValueRange{},
      [&](OpBuilder &nb, Location, Value i, ValueRange) {
        Idx n{nb, loc};
        Value invFreq = math::ExpOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, n.toF64(i), expScale));
        Value angle = arith::MulFOp::create(nb, loc, posF, invFreq);
        Type f32 = nb.getF32Type();
        memref::StoreOp::create(
            nb, loc,
            arith::TruncFOp::create(nb, loc, f32,
                                    math::CosOp::create(nb, loc, angle)),
            cosT, ValueRange{row, i});
        memref::StoreOp::create(
            nb, loc,
            arith::TruncFOp::create(nb, loc, f32,
                                    math::SinOp::create(nb, loc, angle)),
            sinT, ValueRange{row, i});
        scf::YieldOp::create(nb, loc);
      });
}

/// Warps of a tile-form program, and the rows of a rotation program and
/// of a table program (one repetition of their layouts, RopeTiles).
constexpr int64_t kTileWarps = 4, kRotateRows = 32, kTableRows = 16;

/// The column chunk of the rotation over `n` columns (n % 8 == 0): 32
/// columns where they divide n (a thread's 8 consecutive columns: 16-byte
/// accesses of 16-bit rows), else 16 or 8.
int64_t tileChunk(int64_t n) { return n % 32 == 0 ? 32 : n % 16 == 0 ? 16 : 8; }

/// Whether the rope kernels of `op` take the tile form: the half style
/// (each pair's two columns are the same place of two column tiles) with
/// R/2 and D - R whole 8-column chunks. Else they are the scalar form.
bool ropeTileForm(AttentionOp op) {
  int64_t d = cast<ShapedType>(op.getQ().getType()).getDimSize(3);
  int64_t rot = rotaryDim(op);
  return op.getRopeStyle() != RopeStyle::interleaved && (rot / 2) % 8 == 0 &&
         (d - rot) % 8 == 0;
}

/// The blocked layouts of the tile forms, kTileWarps warps stacked along
/// rows, which the backend moves as whole runs of a thread's columns:
///  * rotation tiles [kRotateRows, chunk]: 4 threads per row of chunk / 4
///    consecutive columns each (8 for 32-column chunks: a 16-byte access
///    of bf16 / f16), 8 rows a warp;
///  * table tiles [kTableRows, 8]: one element a thread, 8 threads per
///    row, so that each thread computes one f64 angle per column chunk
///    (the table kernel is latency-bound on its cos / sin).
struct RopeTiles : TileBuilder {
  RopeTiles(OpBuilder &b, Location loc) : TileBuilder(b, loc) {}
  Attribute blocked(int64_t perThread, int64_t threadsPerRow) const {
    return attn_block::BlockedLayoutAttr::get(
        b.getContext(), {1, perThread}, {32 / threadsPerRow, threadsPerRow},
        {kTileWarps, 1}, {1, 0});
  }
  Attribute rotateLayout(int64_t cols) const { return blocked(cols / 4, 4); }
  Attribute tableLayout() const { return blocked(1, 8); }
  RankedTensorType tile(int64_t rows, int64_t cols, Type e,
                        Attribute layout) const {
    return RankedTensorType::get({rows, cols}, e, layout);
  }
  RankedTensorType rotateTile(int64_t cols, Type e) const {
    return tile(kRotateRows, cols, e, rotateLayout(cols));
  }
  Value load(Value mem, ValueRange at, int64_t cols, ArrayRef<int64_t> dims) {
    Type e = llvm::cast<MemRefType>(mem.getType()).getElementType();
    return blk::LoadOp::create(b, loc, rotateTile(cols, e), mem, at,
                               b.getDenseI64ArrayAttr(dims),
                               b.getF64FloatAttr(0.0));
  }
  void store(Value t, Value mem, ValueRange at, ArrayRef<int64_t> dims) {
    blk::StoreOp::create(b, loc, t, mem, at, b.getDenseI64ArrayAttr(dims));
  }
};

/// The tile form of the table kernel: program (r, side) writes rows
/// [16 r, 16 r + 16) of one side's tables; each element its own angle
/// pos * theta^(-2i/R) in f64 (positions from a row iota, frequencies from
/// a column iota), cos and sin through libdevice, stored f32.
void buildTableTiles(AttentionOp op, OpBuilder &b, Location loc, Value cosT,
                     Value sinT, Value row0, Value base, Value cu) {
  RopeTiles t(b, loc);
  Idx x{b, loc};
  const int64_t half = rotaryDim(op) / 2, chunk = 8;
  Attribute layout = t.tableLayout();
  MLIRContext *ctx = b.getContext();
  auto rowLayout = attn_block::SliceLayoutAttr::get(ctx, 1, layout),
       colLayout = attn_block::SliceLayoutAttr::get(ctx, 0, layout);
  const double logTheta = std::log(op.getRopeTheta()->convertToDouble());
  Type f64 = b.getF64Type(), f32 = b.getF32Type(), i64 = b.getI64Type();
  auto rowsType = RankedTensorType::get({kTableRows}, i64, rowLayout);
  Value pos = blk::IotaOp::create(b, loc, rowsType, x.add(base, row0));
  // Packed sequences: a row sits at base + its index in its sequence.
  if (cu) {
    Value rows = blk::IotaOp::create(b, loc, rowsType, row0);
    SequenceBounds seqs = sequenceBounds(b, loc, cu, row0, kTableRows, rows,
                                         /*withEnds=*/false);
    pos = arith::SubIOp::create(b, loc, pos, seqs.starts);
  }
  Value posF = arith::SIToFPOp::create(
      b, loc, RankedTensorType::get({kTableRows}, f64, rowLayout), pos);
  // A loop over 8-column chunks (one angle per thread each), so that the
  // f64 cos / sin of several are never live at once.
  scf::ForOp::create(
      b, loc, x.c(0), x.c(half), x.c(chunk), ValueRange{},
      [&](OpBuilder &nb, Location, Value c0, ValueRange) {
        RopeTiles n(nb, loc);
        Value i = blk::IotaOp::create(
            nb, loc, RankedTensorType::get({chunk}, i64, colLayout), c0);
        auto colF = RankedTensorType::get({chunk}, f64, colLayout);
        Value iF = arith::SIToFPOp::create(nb, loc, colF, i);
        Value scale = tensor::SplatOp::create(
            nb, loc, colF,
            arith::ConstantOp::create(
                nb, loc,
                nb.getF64FloatAttr(-2.0 * logTheta /
                                   static_cast<double>(2 * half)))
                .getResult());
        Value inv = math::ExpOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, iF, scale));
        auto angles = t.tile(kTableRows, chunk, f64, layout);
        Value angle = arith::MulFOp::create(
            nb, loc, blk::BroadcastOp::create(nb, loc, angles, posF, 1),
            blk::BroadcastOp::create(nb, loc, angles, inv, 0));
        n.store(n.convert(math::CosOp::create(nb, loc, angle), f32), cosT,
                ValueRange{row0, c0}, {0, 1});
        n.store(n.convert(math::SinOp::create(nb, loc, angle), f32), sinT,
                ValueRange{row0, c0}, {0, 1});
        scf::YieldOp::create(nb, loc);
      });
}

/// The tile form of a rotation kernel: program (r, b * H + h) rotates rows
/// [32 r, 32 r + 32) of head h of batch b, column chunk by column chunk:
/// x1 = x[:, p], x2 = x[:, p + R/2] with the tables' cos, sin at the same
/// place, y1 = x1 cos - x2 sin, y2 = x1 sin + x2 cos in f32 (`inverse`:
/// the opposite rotation, y1 = x1 cos + x2 sin, y2 = x2 cos - x1 sin); the
/// columns past R are copied. `low`: also the rest y - round(y), rounded.
void buildRotateTiles(AttentionOp op, OpBuilder &b, Location loc, Value in,
                      Value cosT, Value sinT, Value out, Value low, Value bIdx,
                      Value h, Value row0, bool inverse) {
  RopeTiles t(b, loc);
  Idx x{b, loc};
  const int64_t d = cast<MemRefType>(in.getType()).getDimSize(3),
                rot = rotaryDim(op), half = rot / 2;
  Type f32 = b.getF32Type(),
       elt = cast<MemRefType>(out.getType()).getElementType();
  auto at = [&](int64_t col) -> SmallVector<Value> {
    return {bIdx, h, row0, x.c(col)};
  };
  auto put = [&](Value y, int64_t col) {
    Value hi = t.convert(y, elt);
    t.store(hi, out, at(col), {2, 3});
    if (low)
      t.store(
          t.convert(arith::SubFOp::create(b, loc, y, t.convert(hi, f32)), elt),
          low, at(col), {2, 3});
  };
  for (int64_t c0 = 0, chunk = tileChunk(half); c0 < half; c0 += chunk) {
    Value x1 = t.convert(t.load(in, at(c0), chunk, {2, 3}), f32);
    Value x2 = t.convert(t.load(in, at(c0 + half), chunk, {2, 3}), f32);
    Value cs = t.load(cosT, ValueRange{row0, x.c(c0)}, chunk, {0, 1});
    Value sn = t.load(sinT, ValueRange{row0, x.c(c0)}, chunk, {0, 1});
    auto mul = [&](Value u, Value v) -> Value {
      return arith::MulFOp::create(b, loc, u, v);
    };
    if (inverse) {
      put(arith::AddFOp::create(b, loc, mul(x1, cs), mul(x2, sn)), c0);
      put(arith::SubFOp::create(b, loc, mul(x2, cs), mul(x1, sn)), c0 + half);
    } else {
      put(arith::SubFOp::create(b, loc, mul(x1, cs), mul(x2, sn)), c0);
      put(arith::AddFOp::create(b, loc, mul(x1, sn), mul(x2, cs)), c0 + half);
    }
  }
  for (int64_t c0 = rot, chunk = tileChunk(d - rot); c0 < d; c0 += chunk) {
    Value v = t.load(in, at(c0), chunk, {2, 3});
    t.store(t.convert(v, elt), out, at(c0), {2, 3});
    if (low)
      t.store(tensor::SplatOp::create(
                  b, loc, t.rotateTile(chunk, elt),
                  arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 0.0))
                      .getResult()),
              low, at(c0), {2, 3});
  }
}

/// `<func>_rope_table(cosK, sinK, cosQ, sinQ[, cu])` (see the file
/// comment); with packed sequences (`cuType`) positions restart at each
/// sequence's start.
func::FuncOp buildTableKernel(AttentionOp op, SymbolTable &symbols,
                              MemRefType kTable, MemRefType qTable,
                              MemRefType cuType, bool dependentLaunch) {
  Location loc = op.getLoc();
  SmallVector<Type> argTypes = {kTable, kTable, qTable, qTable};
  if (cuType)
    argTypes.push_back(cuType);
  func::FuncOp kernel = createBlockKernel(op, symbols, "rope_table", argTypes);
  const bool tiles = ropeTileForm(op);
  kernel->setAttr("attn_block.num_warps",
                  IntegerAttr::get(IntegerType::get(op.getContext(), 64),
                                   tiles ? kTileWarps : 1));
  Block &body = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Idx x{b, loc};
  if (dependentLaunch)
    blk::LaunchDependentsOp::create(b, loc);
  Value cosK = body.getArgument(0), sinK = body.getArgument(1),
        cosQ = body.getArgument(2), sinQ = body.getArgument(3);
  Value cu = cuType ? body.getArgument(4) : Value();
  Value row = blk::ProgramIdOp::create(b, loc, 0);
  Value which = blk::ProgramIdOp::create(b, loc, 1);
  Value sLen = x.dim(cosK, 0), tLen = x.dim(cosQ, 0);
  const int64_t ro = static_cast<int64_t>(op.getRopeOffset());
  // Query i sits at rope_q_offset + i, or at rope_offset + S - T + i
  // (negative for mask none with T > S + rope_offset); packed (T == S, no
  // rope_q_offset): both at rope_offset + i - its sequence's start.
  Value kBase = x.c(ro);
  Value qBase = op.getRopeQOffset()
                    ? x.c(static_cast<int64_t>(*op.getRopeQOffset()))
                    : x.sub(x.add(kBase, sLen), tLen);
  auto isQuery =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, which, x.c(1));
  auto side = scf::IfOp::create(b, loc, TypeRange{}, isQuery,
                                /*withElseRegion=*/true);
  auto fillIfInside = [&](Block *block, Value len, Value cosT, Value sinT,
                          Value base) {
    OpBuilder sb = OpBuilder::atBlockBegin(block);
    if (tiles) {
      // Rows past the table's length are not stored (the stores' bounds).
      buildTableTiles(
          op, sb, loc, cosT, sinT,
          arith::MulIOp::create(sb, loc, row, Idx{sb, loc}.c(kTableRows)), base,
          cu);
      return;
    }
    auto inside = scf::IfOp::create(
        sb, loc, TypeRange{},
        arith::CmpIOp::create(sb, loc, arith::CmpIPredicate::slt, row, len),
        /*withElseRegion=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(inside.thenBlock());
    Value pos = arith::AddIOp::create(ib, loc, base, row);
    if (cu)
      pos = arith::SubIOp::create(
          ib, loc, pos, offsetAt(ib, loc, cu, sequenceOf(ib, loc, cu, row)));
    emitTableRow(op, ib, loc, cosT, sinT, row, pos);
  };
  fillIfInside(side.thenBlock(), tLen, cosQ, sinQ, qBase);
  fillIfInside(side.elseBlock(), sLen, cosK, sinK, kBase);
  func::ReturnOp::create(b, loc);
  return kernel;
}

/// `<func>_<suffix>(x, cos, sin, y[, ylo])`: y = RoPE(x) (`inverse`: the
/// opposite rotation), row i of every head at table row i (see the file
/// comment); with `withLow` also
/// ylo = RoPE(x) - y rounded to y's type, so that y + ylo keeps about 16
/// bits more of the f32 rotation.
func::FuncOp buildRotateKernel(AttentionOp op, SymbolTable &symbols,
                               StringRef suffix, MemRefType xType,
                               MemRefType tableType, MemRefType yType,
                               bool withLow, bool dependentLaunch,
                               bool inverse = false) {
  Location loc = op.getLoc();
  SmallVector<Type> argTypes = {xType, tableType, tableType, yType};
  if (withLow)
    argTypes.push_back(yType);
  func::FuncOp kernel = createBlockKernel(op, symbols, suffix, argTypes);
  const bool tiles = ropeTileForm(op);
  kernel->setAttr("attn_block.num_warps",
                  IntegerAttr::get(IntegerType::get(op.getContext(), 64),
                                   tiles ? kTileWarps : 1));
  Block &body = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Idx x{b, loc};
  // Dependent launch: the next kernel may set up while this one runs;
  // this one waits for the table kernel before it reads the tables (x is
  // an input), so that its end implies the table's (BlockLaunchPlan.cpp).
  if (dependentLaunch) {
    blk::LaunchDependentsOp::create(b, loc);
    blk::GriddepWaitOp::create(b, loc);
  }
  Value in = body.getArgument(0), cosT = body.getArgument(1),
        sinT = body.getArgument(2), out = body.getArgument(3);
  Value i = blk::ProgramIdOp::create(b, loc, 0);
  Value bh = blk::ProgramIdOp::create(b, loc, 1);
  Value heads = x.dim(in, 1);
  Value bIdx = arith::DivUIOp::create(b, loc, bh, heads);
  Value h = arith::RemUIOp::create(b, loc, bh, heads);
  if (tiles) {
    buildRotateTiles(op, b, loc, in, cosT, sinT, out,
                     withLow ? body.getArgument(4) : Value(), bIdx, h,
                     x.mul(i, x.c(kRotateRows)), inverse);
    func::ReturnOp::create(b, loc);
    return kernel;
  }
  const int64_t d = xType.getDimSize(3), rot = rotaryDim(op), half = rot / 2;
  const bool interleaved = op.getRopeStyle() == RopeStyle::interleaved;
  Type f32 = b.getF32Type(), elt = yType.getElementType();
  auto load = [&](Value mem, ArrayRef<Value> at) -> Value {
    return memref::LoadOp::create(b, loc, mem, at);
  };
  auto row = [&](int64_t col) -> SmallVector<Value> {
    return {bIdx, h, i, x.c(col)};
  };
  // y = the 16-bit rounding of v; with withLow also the rest v - y.
  auto store = [&](Value v, ArrayRef<Value> at) {
    Value hi = castFloat(b, loc, v, elt);
    memref::StoreOp::create(b, loc, hi, out, at);
    if (!withLow)
      return;
    Value rest = arith::SubFOp::create(b, loc, v, castFloat(b, loc, hi, f32));
    memref::StoreOp::create(b, loc, castFloat(b, loc, rest, elt),
                            body.getArgument(4), at);
  };
  // Straight-line code in chunks of kChunk pairs, each chunk's loads issued
  // before its stores: a loop over pairs waited a memory latency per pair
  // (the stores to y may alias the next loads of x).
  for (int64_t p0 = 0; p0 < half; p0 += kChunk) {
    const int64_t n = std::min(kChunk, half - p0);
    SmallVector<std::array<Value, 4>> in4; // x_a, x_b, cos, sin
    SmallVector<std::pair<int64_t, int64_t>> cols;
    for (int64_t p = p0; p < p0 + n; ++p) {
      int64_t ia = interleaved ? 2 * p : p;
      int64_t ib = interleaved ? ia + 1 : p + half;
      cols.push_back({ia, ib});
      in4.push_back({castFloat(b, loc, load(in, row(ia)), f32),
                     castFloat(b, loc, load(in, row(ib)), f32),
                     load(cosT, {i, x.c(p)}), load(sinT, {i, x.c(p)})});
    }
    auto mul = [&](Value u, Value v) {
      return arith::MulFOp::create(b, loc, u, v);
    };
    for (auto [v, c] : llvm::zip(in4, cols)) {
      auto [xa, xb, cs, sn] = v;
      Value ac = mul(xa, cs), bs = mul(xb, sn);
      Value ya = inverse ? arith::AddFOp::create(b, loc, ac, bs).getResult()
                         : arith::SubFOp::create(b, loc, ac, bs).getResult();
      Value as = mul(xa, sn), bc = mul(xb, cs);
      Value yb = inverse ? arith::SubFOp::create(b, loc, bc, as).getResult()
                         : arith::AddFOp::create(b, loc, as, bc).getResult();
      store(ya, row(c.first));
      store(yb, row(c.second));
    }
  }
  // The columns past R are copied, in chunks of 2 kChunk.
  for (int64_t e0 = rot; e0 < d; e0 += 2 * kChunk) {
    SmallVector<Value> vals;
    for (int64_t e = e0; e < std::min(d, e0 + 2 * kChunk); ++e)
      vals.push_back(load(in, row(e)));
    // Unrotated columns are x itself: nothing is left over.
    for (auto [k, v] : llvm::enumerate(vals)) {
      SmallVector<Value> at = row(e0 + static_cast<int64_t>(k));
      memref::StoreOp::create(b, loc, castFloat(b, loc, v, elt), out, at);
      if (withLow)
        memref::StoreOp::create(
            b, loc, arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 0.0)),
            body.getArgument(4), at);
    }
  }
  func::ReturnOp::create(b, loc);
  return kernel;
}

/// A new buffer of `type` whose dynamic dims are those of `like` (a tensor
/// of at least `type`'s rank), dim i of `type` being dim dims[i] of `like`.
Value allocLike(OpBuilder &b, Location loc, MemRefType type, Value like,
                ArrayRef<int64_t> dims) {
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(b, loc, like, dims[i]));
  return memref::AllocOp::create(b, loc, type, dyn);
}

} // namespace

/// Launches rotation kernel `kernel` on `args` (x, cos, sin, y[, ylo]): one
/// program per row of x, or per kRotateRows rows in the tile form, times
/// B * H.
static void launchRotation(OpBuilder &b, Location loc, func::FuncOp kernel,
                           bool tiles, ValueRange args) {
  auto dim = [&](int64_t i) -> Value {
    return memref::DimOp::create(b, loc, args[0], i);
  };
  Value rows = dim(2);
  if (tiles)
    rows = arith::CeilDivUIOp::create(
        b, loc, rows, arith::ConstantIndexOp::create(b, loc, kRotateRows));
  blk::LaunchOp::create(b, loc, kernel.getName(), rows,
                        arith::MulIOp::create(b, loc, dim(0), dim(1)), args);
}

/// The table kernel and the rotations of q and k (each with its 16-bit
/// remainder when `withLow`), launched at `b`.
static RopeSplit launchRope(AttentionOp op, SymbolTable &symbols, OpBuilder &b,
                            bool withLow, bool dependentLaunch) {
  assert(op.getRopeTheta() && "launchRopeGpu needs an op with RoPE");
  Location loc = op.getLoc();
  Value q = op.getQ(), k = op.getK();
  auto qType = cast<RankedTensorType>(q.getType());
  assert(!qType.isDynamicDim(3) && "launchRopeGpu needs a static head dim");
  auto kType = cast<RankedTensorType>(k.getType());
  Type elt = qType.getElementType(), f32 = b.getF32Type();
  const int64_t half = rotaryDim(op) / 2;
  auto qTable = MemRefType::get({qType.getDimSize(2), half}, f32);
  auto kTable = MemRefType::get({kType.getDimSize(2), half}, f32);
  auto qIn = bufferTypeOf(q);
  auto kIn = MemRefType::get(kType.getShape(), kType.getElementType());
  auto qOut = MemRefType::get(qType.getShape(), elt);
  auto kOut = MemRefType::get(kType.getShape(), elt);

  Value cu = op.getCuSeqlens();
  MemRefType cuType = cu ? bufferTypeOf(cu) : MemRefType();
  func::FuncOp table =
      buildTableKernel(op, symbols, kTable, qTable, cuType, dependentLaunch);
  func::FuncOp rotQ = buildRotateKernel(op, symbols, "rope_q", qIn, qTable,
                                        qOut, withLow, dependentLaunch);
  func::FuncOp rotK = buildRotateKernel(op, symbols, "rope_k", kIn, kTable,
                                        kOut, withLow, dependentLaunch);
  // The tile forms' programs cover kTableRows or kRotateRows rows each.
  const bool tiles = ropeTileForm(op);
  auto programs = [&](Value rows, int64_t perProgram) -> Value {
    if (!tiles)
      return rows;
    return arith::CeilDivUIOp::create(
        b, loc, rows, arith::ConstantIndexOp::create(b, loc, perProgram));
  };

  auto dimOf = [&](Value t, int64_t i) -> Value {
    return tensor::DimOp::create(b, loc, t, i);
  };
  Value cosK = allocLike(b, loc, kTable, k, {2, 3});
  Value sinK = allocLike(b, loc, kTable, k, {2, 3});
  Value cosQ = allocLike(b, loc, qTable, q, {2, 3});
  Value sinQ = allocLike(b, loc, qTable, q, {2, 3});
  Value tLen = dimOf(q, 2), sLen = dimOf(k, 2);
  SmallVector<Value> tableArgs = {cosK, sinK, cosQ, sinQ};
  if (cu)
    tableArgs.push_back(bufferization::ToBufferOp::create(b, loc, cuType, cu,
                                                          /*read_only=*/true));
  blk::LaunchOp::create(
      b, loc, table.getName(),
      programs(arith::MaxSIOp::create(b, loc, sLen, tLen), kTableRows),
      arith::ConstantIndexOp::create(b, loc, 2), tableArgs);

  auto rotate = [&](func::FuncOp kernel, Value x, MemRefType inType,
                    MemRefType outType, Value cosT, Value sinT) {
    Value in = bufferization::ToBufferOp::create(b, loc, inType, x,
                                                 /*read_only=*/true);
    Value out = allocLike(b, loc, outType, x, {0, 1, 2, 3});
    Value lo = withLow ? allocLike(b, loc, outType, x, {0, 1, 2, 3}) : Value();
    SmallVector<Value> args = {in, cosT, sinT, out};
    if (lo)
      args.push_back(lo);
    launchRotation(b, loc, kernel, tiles, args);
    return std::pair(out, lo);
  };
  RopeSplit r;
  std::tie(r.qHi, r.qLo) = rotate(rotQ, q, qIn, qOut, cosQ, sinQ);
  std::tie(r.kHi, r.kLo) = rotate(rotK, k, kIn, kOut, cosK, sinK);
  r.tables = {cosQ, sinQ, cosK, sinK};
  return r;
}

void mlir::attn::launchRopeInverse(AttentionOp op, SymbolTable &symbols,
                                   OpBuilder &b, const RopeTables &tables,
                                   ArrayRef<std::pair<Value, Value>> qk) {
  const bool tiles = ropeTileForm(op);
  for (auto [side, inOut] : llvm::enumerate(qk)) {
    auto [in, out] = inOut;
    Value cosT = side ? tables.cosK : tables.cosQ;
    Value sinT = side ? tables.sinK : tables.sinQ;
    func::FuncOp kernel = buildRotateKernel(
        op, symbols, side ? "rope_k_inverse" : "rope_q_inverse",
        cast<MemRefType>(in.getType()), cast<MemRefType>(cosT.getType()),
        cast<MemRefType>(out.getType()), /*withLow=*/false,
        /*dependentLaunch=*/false, /*inverse=*/true);
    launchRotation(b, op.getLoc(), kernel, tiles, {in, cosT, sinT, out});
  }
}

std::pair<Value, Value>
mlir::attn::launchRopeGpu(AttentionOp op, SymbolTable &symbols, OpBuilder &b,
                          bool dependentLaunch, RopeTables *tables) {
  RopeSplit r = launchRope(op, symbols, b, /*withLow=*/false, dependentLaunch);
  if (tables)
    *tables = r.tables;
  return {r.qHi, r.kHi};
}

RopeSplit mlir::attn::launchRopeGpuSplit(AttentionOp op, SymbolTable &symbols,
                                         OpBuilder &b) {
  return launchRope(op, symbols, b, /*withLow=*/true,
                    /*dependentLaunch=*/false);
}
