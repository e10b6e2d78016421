//===- RowOpsToCPU.cpp - CPU lowering of the PaTH tile ops ----------------===//
//
// On the CPU a tile is a dense row-major buffer, so a row is a contiguous
// slice: extract_row / insert_row become rank-reducing tensor slices, which
// one-shot bufferization turns into a subview (read) and an in-place copy
// into the loop-carried tile (write).
//
//===----------------------------------------------------------------------===//

#include "RowOpsToCPU.h"
#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
namespace blk = mlir::attn_block;

namespace {

/// Offsets [index, 0], sizes [1, cols], unit strides: one row of `tile`.
struct RowSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  RowSlice(OpBuilder &b, RankedTensorType tile, Value index) {
    offsets = {index, b.getIndexAttr(0)};
    sizes = {b.getIndexAttr(1), b.getIndexAttr(tile.getDimSize(1))};
    strides = {b.getIndexAttr(1), b.getIndexAttr(1)};
  }
};

struct LowerExtractRow : OpRewritePattern<blk::ExtractRowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::ExtractRowOp op,
                                PatternRewriter &rewriter) const override {
    RowSlice s(rewriter, op.getTile().getType(), op.getIndex());
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), op.getTile(), s.offsets, s.sizes, s.strides);
    return success();
  }
};

struct LowerInsertRow : OpRewritePattern<blk::InsertRowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::InsertRowOp op,
                                PatternRewriter &rewriter) const override {
    RowSlice s(rewriter, op.getDest().getType(), op.getIndex());
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getRow(), op.getDest(), s.offsets, s.sizes, s.strides);
    return success();
  }
};

} // namespace

void mlir::attn::populateRowOpsToCPUPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerExtractRow, LowerInsertRow>(patterns.getContext());
}
