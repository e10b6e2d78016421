//===- ReduceToGPU.cpp - row reductions and broadcasts on registers -------===//
//
// reduce axis 1 of an mma accumulator into its row slice: each thread
// combines the registers of a row it holds (2 per n8 tile), then the 4
// lanes of a quad that share the row exchange with xor shuffles 1 and 2,
// so every lane ends with the row's value. broadcast from a slice into its
// parent copies the register of the row (or column) into every register
// of the parent that holds it. fold adds the registers of a row whose
// columns agree modulo its width (a multiple of 8: in-thread, no shuffle).
// Column reductions (across quads and warps)
// need shared memory and are refused.
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

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

struct ReduceRows : OpConversionPattern<blk::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::ReduceOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto in = op.getInput().getType();
    auto out = op.getType();
    auto mma = dyn_cast_or_null<blk::MmaLayoutAttr>(in.getEncoding());
    auto slice = dyn_cast_or_null<blk::SliceLayoutAttr>(out.getEncoding());
    if (op.getAxis() != 1 || !mma || !slice || slice.getDim() != 1 ||
        slice.getParent() != Attribute(mma))
      return rw.notifyMatchFailure(op, "row reductions of an mma tile only");
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
    ValueRange regs = adaptor.getInput();
    SmallVector<Value> acc(outMap->numRegs());
    for (auto [i, o] : llvm::enumerate(inMap->offsets)) {
      int64_t r = -1;
      for (auto [j, oo] : llvm::enumerate(outMap->offsets))
        if (oo[0] == o[0])
          r = j;
      acc[r] = acc[r] ? combine(acc[r], regs[i]) : regs[i];
    }
    for (Value &v : acc)
      for (int32_t x : {1, 2})
        v = combine(
            v, gpu::ShuffleOp::create(rw, loc, v, x, 32, gpu::ShuffleMode::XOR)
                   .getShuffleResult());
    rw.replaceOpWithMultiple(op, {acc});
    return success();
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

void mlir::attn::blockgpu::populateReducePatterns(BlockTypeConverter &tc,
                                                  RewritePatternSet &patterns) {
  patterns.add<ReduceRows, FoldColumns, BroadcastSlice>(tc,
                                                        patterns.getContext());
}
