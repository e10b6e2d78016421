//===- ScanToGPU.cpp - inclusive prefix sums of blocked tiles -------------===//
//
// attn_block.scan of a 1-D f32 or f64 tile in a 1-D blocked layout of
// exactly E * 32 * W elements: in-thread running sums, a warp scan by
// shuffles, the warps' totals through the scan's own shared scratch (two
// barriers), then each register offset by what precedes it. Every thread
// ends with the tile's last element bit for bit, so extracting it needs no
// exchange. The steps: docs/lowering-details.md,
// "codegen/gpu/ScanToGPU.cpp".
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

/// Whether `extract` reads the last element of a scan's result (the value
/// the scan lowering leaves in every thread).
bool isScanTotal(tensor::ExtractOp extract) {
  auto scan = extract.getTensor().getDefiningOp<blk::ScanOp>();
  APInt at;
  return scan && extract.getIndices().size() == 1 &&
         matchPattern(extract.getIndices()[0], m_ConstantInt(&at)) &&
         at.getSExtValue() == scan.getType().getDimSize(0) - 1;
}

/// gpu.shuffle of `x` (`up`: from the lane `offset` below, lanes below
/// `offset` keeping their own; `idx`: from lane `offset`), a 64-bit value
/// as two 32-bit halves.
Value shuffle(OpBuilder &b, Location loc, Value x, int32_t offset,
              gpu::ShuffleMode mode) {
  auto up = [&](Value v) {
    return gpu::ShuffleOp::create(b, loc, v, offset, 32, mode)
        .getShuffleResult();
  };
  if (x.getType().getIntOrFloatBitWidth() == 32)
    return up(x);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value c32 = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32));
  Value bits = arith::BitcastOp::create(b, loc, i64, x);
  Value lo = up(arith::TruncIOp::create(b, loc, i32, bits));
  Value hi = up(arith::TruncIOp::create(
      b, loc, i32, arith::ShRUIOp::create(b, loc, bits, c32)));
  Value joined = arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, i64, lo),
      arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, hi),
                            c32));
  return arith::BitcastOp::create(b, loc, x.getType(), joined);
}

struct ScanBlocked : OpConversionPattern<blk::ScanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::ScanOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (std::string why = unsupportedReason(op); !why.empty())
      return rw.notifyMatchFailure(op, why);
    auto type = op.getType();
    auto layout = cast<blk::BlockedLayoutAttr>(type.getEncoding());
    const int64_t warps = layout.getNumWarps();
    Location loc = op.getLoc();
    Type elt = type.getElementType();
    auto ci = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddFOp::create(rw, loc, x, y);
    };
    Value zero = arith::ConstantOp::create(rw, loc, rw.getFloatAttr(elt, 0.0));
    // 1. The thread's running sums.
    SmallVector<Value> run;
    for (Value x : adaptor.getInput())
      run.push_back(run.empty() ? x : add(run.back(), x));
    // 2. Inclusive, then exclusive scan of the thread totals in the warp.
    auto [warp, lane] = warpAndLane(rw, loc);
    using P = arith::CmpIPredicate;
    Value incl = run.back();
    for (int32_t off = 1; off < 32; off *= 2)
      incl = arith::SelectOp::create(
          rw, loc, arith::CmpIOp::create(rw, loc, P::uge, lane, ci(off)),
          add(incl, shuffle(rw, loc, incl, off, gpu::ShuffleMode::UP)), incl);
    Value inWarp = arith::SelectOp::create(
        rw, loc, arith::CmpIOp::create(rw, loc, P::ugt, lane, ci(0)),
        shuffle(rw, loc, incl, 1, gpu::ShuffleMode::UP), zero);
    // 3. The warps' totals through the scratch (one warp: lane 31's
    // inclusive sum, shuffled to every lane).
    Value before = zero, total = add(inWarp, run.back());
    if (warps == 1)
      total = shuffle(rw, loc, total, 31, gpu::ShuffleMode::IDX);
    if (warps > 1) {
      ValueRange scratch = adaptor.getScratch();
      Value buf = scratch[0], base = scratch[1];
      {
        OpBuilder::InsertionGuard g(rw);
        auto last = scf::IfOp::create(
            rw, loc, TypeRange{},
            arith::CmpIOp::create(rw, loc, P::eq, lane, ci(31)), false);
        rw.setInsertionPointToStart(last.thenBlock());
        memref::StoreOp::create(
            rw, loc, total, buf,
            ValueRange{arith::AddIOp::create(rw, loc, base, warp)});
      }
      gpu::BarrierOp::create(rw, loc);
      total = zero;
      for (int64_t w = 0; w < warps; ++w) {
        Value t = memref::LoadOp::create(
            rw, loc, buf,
            ValueRange{arith::AddIOp::create(rw, loc, base, ci(w))});
        total = w ? add(total, t) : t;
        if (w + 1 < warps)
          before = arith::SelectOp::create(
              rw, loc, arith::CmpIOp::create(rw, loc, P::eq, warp, ci(w + 1)),
              total, before);
      }
      gpu::BarrierOp::create(rw, loc);
    }
    // 4. Each register plus the thread's exclusive prefix, grouped as the
    // warp totals were: the last register is `total` bit for bit.
    SmallVector<Value> regs;
    for (Value r : run)
      regs.push_back(warps > 1 ? add(before, add(inWarp, r)) : add(inWarp, r));
    for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
      if (auto extract = dyn_cast<tensor::ExtractOp>(user);
          extract && isScanTotal(extract))
        rw.replaceOp(extract, total);
    rw.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

} // namespace

std::string mlir::attn::blockgpu::unsupportedReason(blk::ScanOp op) {
  auto type = op.getType();
  auto layout = dyn_cast_or_null<blk::BlockedLayoutAttr>(type.getEncoding());
  if (!layout || type.getRank() != 1)
    return "scans are lowered for 1-D tiles in a #attn_block.blocked layout, "
           "got " +
           str(type);
  const int64_t span = layout.getSizePerThread()[0] * 32 * layout.getNumWarps();
  if (layout.getThreadsPerWarp()[0] != 32 || type.getDimSize(0) != span)
    return "layout " + str(layout) +
           ": a scan is lowered for tiles of exactly sizePerThread * 32 * "
           "warpsPerCTA = " +
           std::to_string(span) +
           " elements with threadsPerWarp = [32] (one run of consecutive "
           "elements per thread)";
  if (!type.getElementType().isF32() && !type.getElementType().isF64())
    return "scans are lowered for f32 and f64 tiles, got " + str(type);
  if (Value s = op.getScratch()) {
    auto enc = dyn_cast<blk::SharedLayoutAttr>(
        cast<blk::SharedBufferType>(s.getType()).getEncoding());
    if (!enc || enc.getVec() != 1 || enc.getPerPhase() != 1 ||
        enc.getMaxPhase() != 1)
      return "the scratch of a scan is an unswizzled #attn_block.shared<vec "
             "= 1, perPhase = 1, maxPhase = 1, order = [0]> buffer, got " +
             str(s.getType());
  }
  return "";
}

std::string mlir::attn::blockgpu::unsupportedReason(tensor::ExtractOp op) {
  if (!op.getTensor().getType().getEncoding() || isScanTotal(op))
    return "";
  return "an element of a tile in a register layout (" +
         str(op.getTensor().getType()) +
         ") is lowered for the last element of an attn_block.scan only "
         "(which every thread holds after the scan)";
}

void mlir::attn::blockgpu::populateScanPatterns(BlockTypeConverter &tc,
                                                RewritePatternSet &patterns) {
  patterns.add<ScanBlocked>(tc, patterns.getContext());
}
