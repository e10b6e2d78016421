//===- ReduceToGPU.cpp - row reductions and broadcasts on registers -------===//
//
// reduce axis 1 of an mma accumulator into its row slice: each thread
// combines the registers of a row it holds (2 per n8 tile), then the 4
// lanes of a quad that share the row exchange with xor shuffles 1 and 2,
// so every lane ends with the row's value. broadcast from a slice into its
// parent copies the register of the row (or column) into every register
// of the parent that holds it. fold adds the registers of a row whose
// columns agree modulo its width (a multiple of 8: in-thread, no shuffle).
// reduce axis 0 into the column slice: in-thread over the thread's rows,
// xor shuffles 4, 8 and 16 over the quads that share the columns, then, with
// several warps, quad 0 of each warp writes its partials into the scratch
// buffer and every thread combines the warps' rows in warp order between
// two barriers.
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

/// For each register of `to`, the register of `from` holding the same
/// coordinate along `dim` of `from`'s map (-1 if none).
SmallVector<int64_t> matchAlong(const RegisterMap &from, int64_t fromDim,
                                const RegisterMap &to, int64_t toDim) {
  SmallVector<int64_t> src;
  for (auto &o : to.offsets) {
    int64_t found = -1;
    for (auto [i, f] : llvm::enumerate(from.offsets))
      if (f[fromDim] == o[toDim]) {
        found = i;
        break;
      }
    src.push_back(found);
  }
  return src;
}

/// reduce of an mma tile along either axis (unsupportedReason states
/// which): each thread combines its registers of a row (axis 1) or column
/// (axis 0), then the lanes holding the same rows (the quad: xor 1, 2) or
/// columns (the quads: xor 4, 8, 16) exchange partials; a column reduction
/// over several warps ends in the scratch buffer.
struct ReduceMma : OpConversionPattern<blk::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::ReduceOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (std::string why = unsupportedReason(op); !why.empty())
      return rw.notifyMatchFailure(op, why);
    auto in = op.getInput().getType();
    auto out = op.getType();
    std::string why;
    auto inMap = registerMap(in, false, why);
    auto outMap = registerMap(out, false, why);
    if (failed(inMap) || failed(outMap))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    bool isMax = op.getKind() == blk::ReduceKind::max;
    auto combine = [&](Value x, Value y) -> Value {
      if (isMax)
        return arith::MaximumFOp::create(rw, loc, x, y);
      return arith::AddFOp::create(rw, loc, x, y);
    };
    const bool rows = op.getAxis() == 1;
    const int64_t kept = rows ? 0 : 1;
    ValueRange regs = adaptor.getInput();
    SmallVector<Value> acc(outMap->numRegs());
    for (auto [i, o] : llvm::enumerate(inMap->offsets))
      for (auto [j, oo] : llvm::enumerate(outMap->offsets))
        if (oo[0] == o[kept])
          acc[j] = acc[j] ? combine(acc[j], regs[i]) : regs[i];
    // The lanes sharing a row: the quad; a column: the quads.
    static constexpr int32_t kQuad[] = {1, 2}, kQuads[] = {4, 8, 16};
    for (Value &v : acc)
      for (int32_t x :
           rows ? ArrayRef<int32_t>(kQuad) : ArrayRef<int32_t>(kQuads))
        v = combine(
            v, gpu::ShuffleOp::create(rw, loc, v, x, 32, gpu::ShuffleMode::XOR)
                   .getShuffleResult());
    const int64_t warps =
        cast<blk::MmaLayoutAttr>(in.getEncoding()).getWarpsPerCTA()[0];
    if (!rows && warps > 1)
      combineWarps(rw, loc, op, adaptor.getScratch(), *outMap, warps, combine,
                   acc);
    rw.replaceOpWithMultiple(op, {acc});
    return success();
  }

  /// Column partials `acc` of each warp: quad 0 of each writes them into
  /// row `warp` of the scratch, and after a barrier every thread combines
  /// the rows in warp order; a second barrier frees the buffer for the
  /// next reduction.
  static void combineWarps(ConversionPatternRewriter &rw, Location loc,
                           blk::ReduceOp op, ValueRange smem,
                           const RegisterMap &outMap, int64_t warps,
                           llvm::function_ref<Value(Value, Value)> combine,
                           SmallVectorImpl<Value> &acc) {
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    const int64_t stride = rowStrideOf(op.getScratch().getType());
    auto [warp, lane] = warpAndLane(rw, loc);
    Value col = threadBase(rw, loc, op.getType(), false)[0];
    auto at = [&](Value w, int64_t dc) -> Value {
      return arith::AddIOp::create(
          rw, loc, smem[1],
          arith::AddIOp::create(rw, loc,
                                arith::MulIOp::create(rw, loc, w, c(stride)),
                                arith::AddIOp::create(rw, loc, col, c(dc))));
    };
    auto quad0 = scf::IfOp::create(
        rw, loc, TypeRange{},
        arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ult, lane, c(4)),
        false);
    {
      OpBuilder::InsertionGuard g(rw);
      rw.setInsertionPointToStart(quad0.thenBlock());
      for (auto [j, oo] : llvm::enumerate(outMap.offsets))
        memref::StoreOp::create(rw, loc, acc[j], smem[0],
                                ValueRange{at(warp, oo[0])});
    }
    gpu::BarrierOp::create(rw, loc);
    for (auto [j, oo] : llvm::enumerate(outMap.offsets)) {
      Value v;
      for (int64_t w = 0; w < warps; ++w) {
        Value x = memref::LoadOp::create(rw, loc, smem[0],
                                         ValueRange{at(c(w), oo[0])});
        v = v ? combine(v, x) : x;
      }
      acc[j] = v;
    }
    gpu::BarrierOp::create(rw, loc);
  }
};

/// fold of an mma tile: register (row, col) of the result sums the input
/// registers of the same row whose column is col modulo the width. With
/// the width a multiple of 8 these are the thread's own registers (an n8
/// tile's two columns per thread repeat in every n8 tile), so no lane
/// exchanges anything.
struct FoldColumns : OpConversionPattern<blk::FoldOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::FoldOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    std::string why;
    auto inMap = registerMap(op.getInput().getType(), false, why);
    auto outMap = registerMap(op.getType(), false, why);
    if (failed(inMap) || failed(outMap))
      return rw.notifyMatchFailure(op, why);
    const int64_t w = op.getWidth();
    ValueRange regs = adaptor.getInput();
    SmallVector<Value> acc(outMap->numRegs());
    for (auto [i, o] : llvm::enumerate(inMap->offsets)) {
      int64_t r = -1;
      for (auto [j, oo] : llvm::enumerate(outMap->offsets))
        if (oo[0] == o[0] && oo[1] == o[1] % w)
          r = j;
      if (r < 0)
        return rw.notifyMatchFailure(op, "a register without a fold target");
      acc[r] = acc[r] ? arith::AddFOp::create(rw, op.getLoc(), acc[r], regs[i])
                            .getResult()
                      : regs[i];
    }
    rw.replaceOpWithMultiple(op, {acc});
    return success();
  }
};

struct BroadcastSlice : OpConversionPattern<blk::BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::BroadcastOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto in = op.getInput().getType();
    auto out = op.getType();
    auto slice = dyn_cast_or_null<blk::SliceLayoutAttr>(in.getEncoding());
    // axis 1 repeats a per-row value: the slice of dim 1; axis 0 a
    // per-column one: the slice of dim 0.
    if (!slice || slice.getParent() != out.getEncoding() ||
        slice.getDim() != static_cast<int64_t>(op.getAxis()))
      return rw.notifyMatchFailure(op, "broadcast of a slice into its parent");
    std::string why;
    auto inMap = registerMap(in, false, why);
    auto outMap = registerMap(out, false, why);
    if (failed(inMap) || failed(outMap))
      return rw.notifyMatchFailure(op, why);
    int64_t kept = op.getAxis() == 1 ? 0 : 1;
    SmallVector<Value> regs;
    for (int64_t src : matchAlong(*inMap, 0, *outMap, kept)) {
      if (src < 0)
        return rw.notifyMatchFailure(op, "slice misses a coordinate");
      regs.push_back(adaptor.getInput()[src]);
    }
    rw.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

} // namespace

std::string mlir::attn::blockgpu::unsupportedReason(blk::ReduceOp op) {
  auto in = op.getInput().getType();
  auto mma = dyn_cast_or_null<blk::MmaLayoutAttr>(in.getEncoding());
  auto slice =
      dyn_cast_or_null<blk::SliceLayoutAttr>(op.getType().getEncoding());
  if (!mma || !slice || slice.getParent() != Attribute(mma) ||
      slice.getDim() != static_cast<int64_t>(op.getAxis()))
    return "reductions of an mma tile into the slice of its layout along "
           "the reduced dim only";
  const int64_t warps = mma.getWarpsPerCTA()[0];
  if (op.getAxis() == 1 || warps == 1)
    return "";
  auto buf =
      op.getScratch() ? op.getScratch().getType() : blk::SharedBufferType();
  auto shared =
      buf ? dyn_cast<blk::SharedLayoutAttr>(buf.getEncoding()) : nullptr;
  if (!buf || buf.getShape()[0] < warps ||
      !(isa<blk::PaddedSharedLayoutAttr>(buf.getEncoding()) ||
        (shared && shared.getMaxPhase() == 1)))
    return "a column reduction over " + std::to_string(warps) +
           " warps exchanges their partials through a scratch buffer of at "
           "least that many rows, unswizzled #attn_block.shared or "
           "#attn_block.padded_shared";
  return "";
}

void mlir::attn::blockgpu::populateReducePatterns(BlockTypeConverter &tc,
                                                  RewritePatternSet &patterns) {
  patterns.add<ReduceMma, FoldColumns, BroadcastSlice>(tc,
                                                       patterns.getContext());
}
