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

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

/// A window of a padded buffer: the parent's memref at the window's first
/// element (the row stride is the layout's, shared by both).
struct LocalSubviewToOffset : OpConversionPattern<blk::LocalSubviewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::LocalSubviewOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ValueRange buf = adaptor.getBuffer();
    auto pad = cast<blk::PaddedSharedLayoutAttr>(op.getType().getEncoding());
    Value stride = arith::ConstantIndexOp::create(rw, loc, pad.getRowStride());
    Value off = arith::AddIOp::create(
        rw, loc, buf[1],
        arith::AddIOp::create(
            rw, loc,
            arith::MulIOp::create(rw, loc, adaptor.getRow().front(), stride),
            adaptor.getCol().front()));
    rw.replaceOpWithMultiple(op, {SmallVector<Value>{buf[0], off}});
    return success();
  }
};

/// One async_copy's 16-byte chunks, spread over the block's threads: chunk
/// c = tid + i * threads is row c / perRow, column (c % perRow) * vec of
/// the tile. A chunk outside the memref reads nothing (source size 0) and
/// is zero-filled.
struct ChunkCopy {
  OpBuilder &b;
  Location loc;
  Value base;             // the source memref
  SmallVector<Value> idx; // the tile's origin in it
  ArrayRef<int64_t> dims; // the memref dims of the tile's rows and columns
  Attribute layout;       // the shared buffer's
  ValueRange dst;         // (its shared memref, the stage's offset)
  int64_t rows, cols, vec, threads;
  bool rowsNonNegative; // the tile's first row is >= 0 (range analysis)

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  int64_t perRow() const { return cols / vec; }
  int64_t chunks() const { return rows * perRow(); }

  /// cp.async of `vec` elements at source indices `src` into shared offset
  /// `at`, or of none where `ok` is false.
  Value issue(Value at, ValueRange src, Value ok) {
    Value n = arith::SelectOp::create(b, loc, ok, c(vec), c(0));
    return nvgpu::DeviceAsyncCopyOp::create(
               b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst[0],
               ValueRange{at}, base, src, b.getIndexAttr(vec), n,
               b.getUnitAttr())
        .getAsyncToken();
  }

  /// Whether columns [srcCol, srcCol + vec) lie in the memref; null where
  /// that holds statically (the tile's rows from column 0 of a static
  /// width that covers them).
  Value columnsInBounds(Value srcCol) {
    using P = arith::CmpIPredicate;
    int64_t width = cast<MemRefType>(base.getType()).getDimSize(dims[1]);
    std::optional<int64_t> col0 = getConstantIntValue(idx[dims[1]]);
    if (col0 && *col0 == 0 && !ShapedType::isDynamic(width) && width >= cols)
      return Value();
    Value limit = memref::DimOp::create(b, loc, base, dims[1]);
    return andi(cmp(P::sge, srcCol, c(0)),
                cmp(P::sle, add(srcCol, c(vec)), limit));
  }

  /// Any thread count: each chunk computes its row, column, bounds and
  /// clamped source indices.
  Value byChunk(Value tid) {
    using P = arith::CmpIPredicate;
    Value rowLimit = memref::DimOp::create(b, loc, base, dims[0]);
    Value token;
    // A last, partial round repeats the last chunk in the threads past it
    // (fewer chunks than threads: chunk tid % chunks, each copied by
    // threads / chunks threads rather than one copied by most): the same
    // bytes from the same source, so the writes agree.
    for (int64_t it = 0; it < (chunks() + threads - 1) / threads; ++it) {
      Value chunk = add(tid, c(it * threads));
      if (chunks() < threads)
        chunk = arith::RemUIOp::create(b, loc, tid, c(chunks()));
      else if ((it + 1) * threads > chunks())
        chunk = arith::MinUIOp::create(b, loc, chunk, c(chunks() - 1));
      Value r = arith::DivUIOp::create(b, loc, chunk, c(perRow()));
      Value col = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, chunk, c(perRow())), c(vec));
      Value srcRow = add(idx[dims[0]], r), srcCol = add(idx[dims[1]], col);
      Value ok = andi(cmp(P::sge, srcRow, c(0)), cmp(P::slt, srcRow, rowLimit));
      if (Value colOk = columnsInBounds(srcCol))
        ok = andi(ok, colOk);
      SmallVector<Value> src = idx;
      src[dims[0]] = arith::SelectOp::create(b, loc, ok, srcRow, c(0));
      src[dims[1]] = arith::SelectOp::create(b, loc, ok, srcCol, c(0));
      token =
          issue(add(dst[1], swizzledOffset(b, loc, layout, r, col, cols, rows)),
                src, ok);
    }
    return token;
  }

  /// threads % perRow == 0: a thread's chunks share a column and lie
  /// `threads / perRow` rows apart, so its column, row bounds and
  /// addresses are computed once per copy and each chunk adds constants
  /// (the former direct kernel's copyTile): the row check is an i32 compare of
  /// the chunk's constant row with the thread's valid range, the shared offset
  /// a constant step wherever the swizzle pattern repeats, and the source
  /// row is not clamped (a chunk with source size 0 reads nothing).
  Value byThreadRows(Value tid) {
    using P = arith::CmpIPredicate;
    const int64_t step = threads / perRow();
    Value r0 = arith::DivUIOp::create(b, loc, tid, c(perRow()));
    Value col = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, tid, c(perRow())), c(vec));
    Value first = add(idx[dims[0]], r0);
    Value rowLimit = memref::DimOp::create(b, loc, base, dims[0]);
    // Row first + dr is in [0, rowLimit) iff lo <= dr < hi, i.e.
    // (unsigned) (dr - lo) < hi - lo: one i32 compare per chunk, which
    // ptxas folds into cp.async's source-size predicate (dr < rows).
    auto clampI32 = [&](Value x) -> Value {
      Value y = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, x, c(0)), c(rows));
      return arith::IndexCastOp::create(b, loc, b.getI32Type(), y);
    };
    // A first row known not negative leaves lo = 0 and the compare of a
    // constant dr: no subtraction per chunk (what the former direct kernel
    // checked).
    Value lo = rowsNonNegative
                   ? arith::ConstantIntOp::create(b, loc, 0, 32).getResult()
                   : clampI32(arith::SubIOp::create(b, loc, c(0), first));
    Value hi = clampI32(arith::SubIOp::create(b, loc, rowLimit, first));
    Value width =
        arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, hi, lo),
                               arith::ConstantIntOp::create(b, loc, 0, 32));
    Value srcCol = add(idx[dims[1]], col);
    Value colOk = columnsInBounds(srcCol);
    Value dstBase =
        add(dst[1], swizzledOffset(b, loc, layout, r0, col, cols, rows));
    auto [period, periodElems] = swizzlePeriod(layout, cols);
    Value token;
    for (int64_t it = 0; it < chunks() / threads; ++it) {
      const int64_t dr = it * step;
      Value fromLo = arith::SubIOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, dr, 32), lo);
      Value ok = cmp(P::ult, fromLo, width);
      if (colOk)
        ok = andi(ok, colOk);
      SmallVector<Value> src = idx;
      src[dims[0]] = add(first, c(dr));
      src[dims[1]] = srcCol;
      Value at =
          dr % period == 0
              ? add(dstBase, c(dr / period * periodElems))
              : add(dst[1], swizzledOffset(b, loc, layout, add(r0, c(dr)), col,
                                           cols, rows));
      token = issue(at, src, ok);
    }
    return token;
  }
};

struct AsyncCopyToCpAsync : OpConversionPattern<blk::AsyncCopyOp> {
  AsyncCopyToCpAsync(const TypeConverter &tc, MLIRContext *ctx,
                     const NonNegativeRowCopies &nonNegativeRows,
                     int64_t threads)
      : OpConversionPattern(tc, ctx), nonNegativeRows(nonNegativeRows),
        threads(threads) {}
  LogicalResult matchAndRewrite(blk::AsyncCopyOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    std::string why = unsupportedReason(op, threads);
    if (!why.empty())
      return rw.notifyMatchFailure(op, why);
    auto buf = op.getBuffer().getType();
    ChunkCopy copy{rw,
                   op.getLoc(),
                   adaptor.getBase().front(),
                   singleValues(adaptor.getIndices()),
                   op.getDims(),
                   buf.getEncoding(),
                   adaptor.getBuffer(),
                   buf.getShape()[0],
                   buf.getShape()[1],
                   16 / (buf.getElementType().getIntOrFloatBitWidth() / 8),
                   threads,
                   nonNegativeRows.contains(op)};
    Value tid = gpu::ThreadIdOp::create(rw, op.getLoc(), gpu::Dimension::x);
    bool even = threads % copy.perRow() == 0 && copy.chunks() % threads == 0;
    rw.replaceOp(op, even ? copy.byThreadRows(tid) : copy.byChunk(tid));
    return success();
  }

  const NonNegativeRowCopies &nonNegativeRows;
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

/// griddepcontrol.wait (BlockTarget::dependentLaunch) and
/// griddepcontrol.launch_dependents: the block op is the PTX instruction.
template <typename BlockOp, NVVM::GridDepActionKind Action>
struct GriddepcontrolToNvvm : OpConversionPattern<BlockOp> {
  using OpConversionPattern<BlockOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(BlockOp op, typename BlockOp::Adaptor,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::GriddepcontrolOp>(op, Action);
    return success();
  }
};
using GriddepWaitToNvvm =
    GriddepcontrolToNvvm<blk::GriddepWaitOp, NVVM::GridDepActionKind::wait>;
using LaunchDependentsToNvvm =
    GriddepcontrolToNvvm<blk::LaunchDependentsOp,
                         NVVM::GridDepActionKind::launch_dependents>;

} // namespace

NonNegativeRowCopies
mlir::attn::blockgpu::findNonNegativeRowCopies(Operation *kernel) {
  DataFlowSolver solver;
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<dataflow::IntegerRangeAnalysis>();
  NonNegativeRowCopies out;
  if (failed(solver.initializeAndRun(kernel)))
    return out;
  kernel->walk([&](blk::AsyncCopyOp op) {
    Value row = op.getIndices()[op.getDims()[0]];
    auto *state = solver.lookupState<dataflow::IntegerValueRangeLattice>(row);
    if (state && !state->getValue().isUninitialized() &&
        state->getValue().getValue().smin().isNonNegative())
      out.insert(op);
  });
  return out;
}

std::string mlir::attn::blockgpu::unsupportedReason(blk::AsyncCopyOp op,
                                                    int64_t threads) {
  auto buf = op.getBuffer().getType();
  if (buf.getRank() != 2 ||
      !isa<blk::SharedLayoutAttr, blk::NvmmaSharedLayoutAttr,
           blk::PaddedSharedLayoutAttr>(buf.getEncoding()))
    return "cp.async is lowered into 2-D #attn_block.shared, "
           "#attn_block.nvmma_shared or #attn_block.padded_shared buffers";
  if (isa<blk::NvmmaSharedLayoutAttr>(buf.getEncoding()) &&
      (!isWgmmaShared(buf.getEncoding(), buf.getElementType(),
                      buf.getShape()[1]) ||
       buf.getShape()[0] % 8 != 0))
    return "cp.async into #attn_block.nvmma_shared is lowered for 16-bit "
           "tiles of 8 * k rows in the 128-byte swizzle (64 * n columns) or "
           "interleaved (swizzleBytes = 0, 8 * n columns)";
  if (op.getPadding().convertToDouble() != 0.0)
    return "cp.async zero-fills: padding must be 0";
  unsigned bits = buf.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0 || 128 % bits != 0)
    return "elements must divide 16 bytes";
  int64_t vec = 128 / bits, cols = buf.getShape()[1];
  if (cols % vec != 0)
    return "rows must be whole 16-byte chunks";
  auto padded = dyn_cast<blk::PaddedSharedLayoutAttr>(buf.getEncoding());
  if (padded && padded.getRowStride() % vec != 0)
    return "a padded row stride must keep rows on 16-byte bounds";
  auto shared = dyn_cast<blk::SharedLayoutAttr>(buf.getEncoding());
  if (shared &&
      (shared.getVec() != vec || cols % (vec * shared.getMaxPhase()) != 0))
    return "the swizzle must move whole 16-byte chunks within a row";
  return "";
}

void mlir::attn::blockgpu::populateAsyncCopyPatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns,
    const SharedOffsets &offsets, const NonNegativeRowCopies &nonNegativeRows,
    int64_t numThreads) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LocalAllocToView>(tc, ctx, offsets);
  patterns.add<AsyncCopyToCpAsync>(tc, ctx, nonNegativeRows, numThreads);
  patterns.add<LocalIndexToOffset, LocalSubviewToOffset, CommitToCreateGroup,
               WaitToWaitGroup, BarrierToGpu, GriddepWaitToNvvm,
               LaunchDependentsToNvvm>(tc, ctx);
}
