//===- BulkStoreToGPU.cpp - asynchronous reducing stores (TMA bulk) -------===//
//
// async_store_add: thread r of the block adds row r of the shared f32 tile
// into its row of global memory with one cp.reduce.async.bulk ... add.f32
// (rows past the threads take further rounds) and commits it as a bulk
// group of its own; a row outside the memref issues nothing. Each add is
// one instruction for a whole row, done by the TMA unit in L2, where the
// per-element atomics of `store ... add` are 64 * D instructions per tile
// (docs/gpu-backend.md). async_store_wait is cp.async.bulk.wait_group.
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"
#include "Wgmma.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

struct AsyncStoreAddToBulk : OpConversionPattern<blk::AsyncStoreAddOp> {
  AsyncStoreAddToBulk(const TypeConverter &tc, MLIRContext *ctx,
                      int64_t threads)
      : OpConversionPattern(tc, ctx), threads(threads) {}
  LogicalResult matchAndRewrite(blk::AsyncStoreAddOp op,
                                OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    if (std::string why = unsupportedReason(op); !why.empty())
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddIOp::create(rw, loc, x, y);
    };
    auto mul = [&](Value x, Value y) -> Value {
      return arith::MulIOp::create(rw, loc, x, y);
    };
    auto buf = op.getBuffer().getType();
    const int64_t rows = buf.getShape()[0], cols = buf.getShape()[1];
    Value base = adaptor.getBase().front();
    ValueRange smem = adaptor.getBuffer();
    SmallVector<Value> idx = singleValues(adaptor.getIndices());
    ArrayRef<int64_t> dims = op.getDims();
    auto meta = memref::ExtractStridedMetadataOp::create(rw, loc, base);
    Value gBase = memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, base);
    Value sBase =
        memref::ExtractAlignedPointerAsIndexOp::create(rw, loc, smem[0]);
    Value tid = gpu::ThreadIdOp::create(rw, loc, gpu::Dimension::x);
    Value limit = memref::DimOp::create(rw, loc, base, dims[0]);
    Value bytes = arith::ConstantIntOp::create(rw, loc, cols * 4, 32);
    // Global: the tile's first element through the strides; row r is
    // r row strides further.
    Value linear0 = meta.getOffset();
    for (auto [d, i] : llvm::enumerate(idx))
      linear0 = add(linear0, mul(i, meta.getStrides()[d]));
    Value rowStride = meta.getStrides()[dims[0]];
    using P = arith::CmpIPredicate;
    for (int64_t first = 0; first < rows; first += threads) {
      Value r = add(tid, c(first));
      Value row = add(idx[dims[0]], r);
      Value ok = arith::AndIOp::create(
          rw, loc, arith::CmpIOp::create(rw, loc, P::slt, r, c(rows)),
          arith::AndIOp::create(
              rw, loc, arith::CmpIOp::create(rw, loc, P::sge, row, c(0)),
              arith::CmpIOp::create(rw, loc, P::slt, row, limit)));
      auto guard = scf::IfOp::create(rw, loc, TypeRange{}, ok, false);
      OpBuilder::InsertionGuard g(rw);
      rw.setInsertionPointToStart(guard.thenBlock());
      Value linear = add(linear0, mul(r, rowStride));
      Value gAddr = arith::IndexCastOp::create(rw, loc, rw.getI64Type(),
                                               add(gBase, mul(linear, c(4))));
      Value sAddr = arith::IndexCastOp::create(
          rw, loc, rw.getI32Type(),
          add(sBase, mul(add(smem[1], mul(r, c(rowStrideOf(buf)))), c(4))));
      attn::wgmma::inlinePtx(
          rw, loc,
          "{ .reg .u64 g; cvta.to.global.u64 g, $0; "
          "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 "
          "[g], [$1], $2; cp.async.bulk.commit_group; }",
          {}, {gAddr, sAddr, bytes}, {});
    }
    rw.eraseOp(op);
    return success();
  }
  const int64_t threads;
};

struct AsyncStoreWaitToBulkWait : OpConversionPattern<blk::AsyncStoreWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::AsyncStoreWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    NVVM::CpAsyncBulkWaitGroupOp::create(
        rw, op.getLoc(), static_cast<uint32_t>(op.getPending()),
        op.getRead() ? rw.getUnitAttr() : UnitAttr());
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

std::string mlir::attn::blockgpu::unsupportedReason(blk::AsyncStoreAddOp op) {
  auto buf = op.getBuffer().getType();
  auto shared = dyn_cast<blk::SharedLayoutAttr>(buf.getEncoding());
  if (!isa<blk::PaddedSharedLayoutAttr>(buf.getEncoding()) &&
      !(shared && shared.getMaxPhase() == 1))
    return "a bulk store reads whole rows as they lie: the buffer must be "
           "#attn_block.padded_shared or unswizzled #attn_block.shared";
  if ((buf.getShape()[1] * 4) % 16 != 0 || (rowStrideOf(buf) * 4) % 16 != 0)
    return "a bulk store moves 16-byte multiples from 16-byte bounds: rows "
           "and the row stride must be multiples of 4 f32";
  // The destination rows: contiguous, whole and 16-byte aligned (from a
  // 16-byte aligned base, as the runtime's buffers are), which the type
  // must show. Row-major: every stride is a multiple of the innermost size.
  MemRefType mem = op.getBase().getType();
  ArrayRef<int64_t> dims = op.getDims();
  const int64_t width = mem.getDimSize(dims[1]);
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  bool aligned =
      mem.getLayout().isIdentity()
          ? !ShapedType::isDynamic(width) && width % 4 == 0
          : succeeded(mem.getStridesAndOffset(strides, offset)) &&
                strides.back() == 1 &&
                llvm::all_of(ArrayRef(strides).drop_back(),
                             [](int64_t s) {
                               return !ShapedType::isDynamic(s) && s % 4 == 0;
                             }) &&
                !ShapedType::isDynamic(offset) && offset % 4 == 0;
  APInt col;
  if (dims[1] != mem.getRank() - 1 || !aligned ||
      !matchPattern(op.getIndices()[dims[1]], m_ConstantInt(&col)) ||
      col.getSExtValue() % 4 || col.getSExtValue() < 0 ||
      col.getSExtValue() + buf.getShape()[1] > width)
    return "a bulk store adds whole rows at 16-byte bounds: the columns "
           "must be the memref's contiguous innermost dim, of static size, "
           "from a constant column, every row 16-byte aligned";
  return "";
}

void mlir::attn::blockgpu::populateBulkStorePatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns, int64_t numThreads) {
  patterns.add<AsyncStoreAddToBulk>(tc, patterns.getContext(), numThreads);
  patterns.add<AsyncStoreWaitToBulkWait>(tc, patterns.getContext());
}
