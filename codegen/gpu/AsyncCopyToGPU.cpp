//===- AsyncCopyToGPU.cpp - shared buffers, cp.async, waits, barriers -----===//
//
// A shared buffer becomes (a memref.view of the dynamic shared memory at
// the allocation's byte offset, the element offset of the current stage);
// local_index adds stage * stage size. async_copy spreads the tile's
// 16-byte chunks over the block's threads (chunk c = tid + i * threads:
// row c / chunksPerRow, column (c % chunksPerRow) * 8) and issues one
// nvgpu.device_async_copy (cp.async.cg, 16 bytes) per chunk into the
// swizzled position; a chunk outside the memref reads nothing (source
// size 0, the clamped address is never dereferenced) and is zero-filled,
// which is what padding 0 means. async_commit_group is cp.async's
// commit_group, async_wait its wait_group, barrier bar.sync 0, griddep_wait
// griddepcontrol.wait.
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

struct LocalAllocToView : OpConversionPattern<blk::LocalAllocOp> {
  LocalAllocToView(const TypeConverter &tc, MLIRContext *ctx,
                   const SharedOffsets &offsets)
      : OpConversionPattern(tc, ctx), offsets(offsets) {}
  LogicalResult matchAndRewrite(blk::LocalAllocOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    auto it = offsets.bytes.find(op);
    if (it == offsets.bytes.end())
      return rw.notifyMatchFailure(op, "no shared offset");
    Location loc = op.getLoc();
    auto type = op.getType();
    auto wg = gpu::AddressSpaceAttr::get(rw.getContext(),
                                         gpu::AddressSpace::Workgroup);
    Value raw = gpu::DynamicSharedMemoryOp::create(
        rw, loc,
        MemRefType::get({ShapedType::kDynamic}, rw.getI8Type(),
                        MemRefLayoutAttrInterface{}, wg));
    Value at = arith::ConstantIndexOp::create(rw, loc, it->second);
    if (offsets.alignedBase) {
      // wgmma's swizzle pattern repeats every 1024 bytes of shared address:
      // the buffers start past the first such bound of the dynamic shared
      // memory (assignShared reserved the slack).
      auto c = [&](int64_t v) {
        return arith::ConstantIndexOp::create(rw, loc, v);
      };
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, raw);
      Value a = c(kSharedAlign);
      Value shift = arith::RemUIOp::create(
          rw, loc,
          arith::SubIOp::create(rw, loc, a,
                                arith::RemUIOp::create(rw, loc, base, a)),
          a);
      at = arith::AddIOp::create(rw, loc, at, shift);
    }
    Value view = memref::ViewOp::create(
        rw, loc,
        MemRefType::get({type.getNumElements()}, type.getElementType(),
                        MemRefLayoutAttrInterface{}, wg),
        raw, at, ValueRange{});
    view = memref::CastOp::create(
        rw, loc,
        MemRefType::get({ShapedType::kDynamic}, type.getElementType(),
                        MemRefLayoutAttrInterface{}, wg),
        view);
    Value zero = arith::ConstantIndexOp::create(rw, loc, 0);
    rw.replaceOpWithMultiple(op, {SmallVector<Value>{view, zero}});
    return success();
  }
  const SharedOffsets &offsets;
};

struct LocalIndexToOffset : OpConversionPattern<blk::LocalIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::LocalIndexOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ValueRange buf = adaptor.getBuffer();
    Value stride =
        arith::ConstantIndexOp::create(rw, loc, op.getType().getNumElements());
    Value off = arith::AddIOp::create(
        rw, loc, buf[1],
        arith::MulIOp::create(rw, loc, adaptor.getIndex().front(), stride));
    rw.replaceOpWithMultiple(op, {SmallVector<Value>{buf[0], off}});
    return success();
  }
};

struct AsyncCopyToCpAsync : OpConversionPattern<blk::AsyncCopyOp> {
  AsyncCopyToCpAsync(const TypeConverter &tc, MLIRContext *ctx, int64_t threads)
      : OpConversionPattern(tc, ctx), threads(threads) {}
  LogicalResult matchAndRewrite(blk::AsyncCopyOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    std::string why = unsupportedReason(op, threads);
    if (!why.empty())
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto buf = op.getBuffer().getType();
    const int64_t rows = buf.getShape()[0], cols = buf.getShape()[1];
    const int64_t vec = 16 / (buf.getElementType().getIntOrFloatBitWidth() / 8);
    const int64_t perRow = cols / vec, total = rows * perRow;
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    using P = arith::CmpIPredicate;
    Value base = adaptor.getBase().front();
    SmallVector<Value> idx = singleValues(adaptor.getIndices());
    ArrayRef<int64_t> dims = op.getDims();
    Value rowLimit = memref::DimOp::create(rw, loc, base, dims[0]);
    Value colLimit = memref::DimOp::create(rw, loc, base, dims[1]);
    Value tid = gpu::ThreadIdOp::create(rw, loc, gpu::Dimension::x);
    ValueRange dst = adaptor.getBuffer();
    Value token;
    for (int64_t it = 0; it < total / threads; ++it) {
      Value chunk = arith::AddIOp::create(rw, loc, tid, c(it * threads));
      Value r = arith::DivUIOp::create(rw, loc, chunk, c(perRow));
      Value col = arith::MulIOp::create(
          rw, loc, arith::RemUIOp::create(rw, loc, chunk, c(perRow)), c(vec));
      Value srcRow = arith::AddIOp::create(rw, loc, idx[dims[0]], r);
      Value srcCol = arith::AddIOp::create(rw, loc, idx[dims[1]], col);
      Value ok = arith::AndIOp::create(
          rw, loc,
          arith::AndIOp::create(
              rw, loc, arith::CmpIOp::create(rw, loc, P::sge, srcRow, c(0)),
              arith::CmpIOp::create(rw, loc, P::slt, srcRow, rowLimit)),
          arith::AndIOp::create(
              rw, loc, arith::CmpIOp::create(rw, loc, P::sge, srcCol, c(0)),
              arith::CmpIOp::create(
                  rw, loc, P::sle,
                  arith::AddIOp::create(rw, loc, srcCol, c(vec)), colLimit)));
      SmallVector<Value> src = idx;
      src[dims[0]] = arith::SelectOp::create(rw, loc, ok, srcRow, c(0));
      src[dims[1]] = arith::SelectOp::create(rw, loc, ok, srcCol, c(0));
      Value at = arith::AddIOp::create(
          rw, loc, dst[1],
          swizzledOffset(rw, loc, buf.getEncoding(), r, col, cols, rows));
      Value n = arith::SelectOp::create(rw, loc, ok, c(vec), c(0));
      token = nvgpu::DeviceAsyncCopyOp::create(
                  rw, loc, nvgpu::DeviceAsyncTokenType::get(rw.getContext()),
                  dst[0], ValueRange{at}, base, src, rw.getIndexAttr(vec), n,
                  rw.getUnitAttr())
                  .getAsyncToken();
    }
    rw.replaceOp(op, token);
    return success();
  }

  const int64_t threads;
};

struct CommitToCreateGroup : OpConversionPattern<blk::AsyncCommitGroupOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::AsyncCommitGroupOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<nvgpu::DeviceAsyncCreateGroupOp>(
        op, nvgpu::DeviceAsyncTokenType::get(rw.getContext()),
        adaptor.getTokens());
    return success();
  }
};

struct WaitToWaitGroup : OpConversionPattern<blk::AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::AsyncWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    NVVM::CpAsyncWaitGroupOp::create(rw, op.getLoc(),
                                     static_cast<int32_t>(op.getPending()));
    rw.eraseOp(op);
    return success();
  }
};

struct BarrierToGpu : OpConversionPattern<blk::BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::BarrierOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<gpu::BarrierOp>(op);
    return success();
  }
};

/// griddepcontrol.wait (GpuPlan::attentionOverlapsPrologue).
struct GriddepWaitToNvvm : OpConversionPattern<blk::GriddepWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::GriddepWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::GriddepcontrolOp>(
        op, NVVM::GridDepActionKind::wait);
    return success();
  }
};

} // namespace

std::string mlir::attn::blockgpu::unsupportedReason(blk::AsyncCopyOp op,
                                                    int64_t threads) {
  auto buf = op.getBuffer().getType();
  if (buf.getRank() != 2 ||
      !isa<blk::SharedLayoutAttr, blk::NvmmaSharedLayoutAttr>(
          buf.getEncoding()))
    return "cp.async is lowered into 2-D #attn_block.shared or "
           "#attn_block.nvmma_shared buffers";
  if (isa<blk::NvmmaSharedLayoutAttr>(buf.getEncoding()) &&
      (!isSwizzle128(buf.getEncoding(), buf.getElementType(),
                     buf.getShape()[1]) ||
       buf.getShape()[0] % 8 != 0))
    return "cp.async into #attn_block.nvmma_shared is lowered for the "
           "128-byte swizzle of 16-bit tiles of 8 * k rows and 64 * n "
           "columns";
  if (op.getPadding().convertToDouble() != 0.0)
    return "cp.async zero-fills: padding must be 0";
  unsigned bits = buf.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0 || 128 % bits != 0)
    return "elements must divide 16 bytes";
  int64_t vec = 128 / bits, cols = buf.getShape()[1];
  if (cols % vec != 0)
    return "rows must be whole 16-byte chunks";
  int64_t total = buf.getShape()[0] * (cols / vec);
  if (total % threads != 0)
    return "the tile's " + std::to_string(total) +
           " 16-byte chunks must spread evenly over " +
           std::to_string(threads) + " threads";
  auto shared = dyn_cast<blk::SharedLayoutAttr>(buf.getEncoding());
  if (shared &&
      (shared.getVec() != vec || cols % (vec * shared.getMaxPhase()) != 0))
    return "the swizzle must move whole 16-byte chunks within a row";
  return "";
}

void mlir::attn::blockgpu::populateAsyncCopyPatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns,
    const SharedOffsets &offsets, int64_t numThreads) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LocalAllocToView>(tc, ctx, offsets);
  patterns.add<AsyncCopyToCpAsync>(tc, ctx, numThreads);
  patterns.add<LocalIndexToOffset, CommitToCreateGroup, WaitToWaitGroup,
               BarrierToGpu, GriddepWaitToNvvm>(tc, ctx);
}
