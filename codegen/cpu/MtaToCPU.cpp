//===- MtaToCPU.cpp - CPU lowering of the block ops MTA added -------------===//
//
// attn_block.stencil (MTA's key-query convolution on a haloed tile) becomes,
// per register piece of the output rows (RegisterLoops.h: C lanes split
// into power-of-two vectors of at most 64) and block of rows (several for
// a narrow piece), vectors kept in registers while the A x B kernel taps
// run (unrolled by 4 along b): row += kernel[a, b] * input[r + a, b : b + C],
// i.e. shifted unaligned row reads and FMAs, with n innermost and
// contiguous as in the dot lowering. Loads/stores marked
// in_bounds (the per-program scratch tiles MTA exchanges between heads) copy
// whole rows as vectors instead of testing the bounds mask per element.
//
//===----------------------------------------------------------------------===//

#include "MtaToCPU.h"
#include "RegisterLoops.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
namespace blk = mlir::attn_block;

namespace {

/// Kernel columns per iteration of the tap loop.
constexpr int64_t kTapUnroll = 4;

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

struct LowerStencil : OpRewritePattern<blk::StencilOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::StencilOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    ArrayRef<int64_t> k = op.getKernel().getType().getShape();
    Type f32 = type.getElementType();
    Value c0 = cIdx(rewriter, loc, 0), c1 = cIdx(rewriter, loc, 1);
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), f32);
    // Output rows [r0, r0 + rows), lanes [off, off + w): the kernel taps
    // in registers, each tap's weight broadcast once for all the rows.
    auto block = [&](OpBuilder &b, Location l, Value r0, int64_t rows,
                     Value out, int64_t off, int64_t w) -> Value {
      auto rowType = VectorType::get({w}, f32);
      Value zeroRow = arith::ConstantOp::create(
          b, l, DenseElementsAttr::get(rowType, 0.0f));
      Value col = cIdx(b, l, off);
      SmallVector<Value> rs, init(rows, zeroRow);
      for (int64_t r = 0; r < rows; ++r)
        rs.push_back(r == 0 ? r0
                            : arith::AddIOp::create(b, l, r0, cIdx(b, l, r)));
      auto taps = scf::ForOp::create(
          b, l, c0, cIdx(b, l, k[0]), c1, init,
          [&](OpBuilder &ab, Location al, Value a, ValueRange accA) {
            SmallVector<Value> srcs;
            for (Value r : rs)
              srcs.push_back(arith::AddIOp::create(ab, al, r, a));
            SmallVector<Value> sums = attn::forUnrolledN(
                ab, al, k[1], kTapUnroll, accA,
                [&](OpBuilder &ib, Location il, Value bb,
                    ValueRange accs) -> SmallVector<Value> {
                  Value wt = tensor::ExtractOp::create(ib, il, op.getKernel(),
                                                       ValueRange{a, bb});
                  Value wv = vector::BroadcastOp::create(ib, il, rowType, wt);
                  Value x0 = arith::AddIOp::create(ib, il, bb, col);
                  SmallVector<Value> next;
                  for (auto [src, acc] : llvm::zip(srcs, accs)) {
                    Value x = vector::TransferReadOp::create(
                        ib, il, rowType, op.getInput(), ValueRange{src, x0},
                        zero, ArrayRef<bool>{true});
                    next.push_back(vector::FMAOp::create(ib, il, wv, x, acc));
                  }
                  return next;
                });
            scf::YieldOp::create(ab, al, sums);
          });
      for (auto [r, sum] : llvm::zip(rs, taps.getResults()))
        out = vector::TransferWriteOp::create(
                  b, l, sum, out, ValueRange{r, col}, ArrayRef<bool>{true})
                  .getResult();
      return out;
    };
    Value result = empty;
    for (auto [off, w] : attn::laneChunks(cols))
      result = attn::forRowBlocks(
          rewriter, loc, rows, attn::rowsPerBlock(w), result,
          [&, off = off, w = w](OpBuilder &b, Location l, Value r0, int64_t n,
                                Value out) {
            return block(b, l, r0, n, out, off, w);
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Walks every row of a tile of `shape` (all dims but the last), giving the
/// row's tile indices and the memref indices of its first element; `init`
/// (the tile being filled, if any) is carried through the nest.
template <typename Body>
Value forEachRow(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 ValueRange base, ArrayRef<int64_t> dims, Value init,
                 Body body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t s : shape.drop_back()) {
    lbs.push_back(cIdx(b, loc, 0));
    ubs.push_back(cIdx(b, loc, s));
    steps.push_back(cIdx(b, loc, 1));
  }
  auto indices = [&](OpBuilder &nb, Location l, ValueRange ivs) {
    SmallVector<Value> tileIdx(ivs), memIdx(base);
    for (auto [r, iv] : llvm::enumerate(ivs))
      memIdx[dims[r]] = arith::AddIOp::create(nb, l, memIdx[dims[r]], iv);
    tileIdx.push_back(cIdx(nb, l, 0));
    return std::make_pair(tileIdx, memIdx);
  };
  if (!init) {
    scf::buildLoopNest(b, loc, lbs, ubs, steps,
                       [&](OpBuilder &nb, Location l, ValueRange ivs) {
                         auto [tileIdx, memIdx] = indices(nb, l, ivs);
                         body(nb, l, tileIdx, memIdx, Value());
                       });
    return Value();
  }
  auto nest =
      scf::buildLoopNest(b, loc, lbs, ubs, steps, ValueRange{init},
                         [&](OpBuilder &nb, Location l, ValueRange ivs,
                             ValueRange iter) -> scf::ValueVector {
                           auto [tileIdx, memIdx] = indices(nb, l, ivs);
                           return {body(nb, l, tileIdx, memIdx, iter[0])};
                         });
  return nest.results[0];
}

/// The tile's last dim must be the memref's innermost (contiguous) one.
bool rowsAreContiguous(MemRefType mem, ArrayRef<int64_t> dims) {
  return !dims.empty() && dims.back() == mem.getRank() - 1;
}

struct LowerInBoundsLoad : OpRewritePattern<blk::LoadOp> {
  LowerInBoundsLoad(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(blk::LoadOp op,
                                PatternRewriter &rewriter) const override {
    MemRefType mem = op.getBase().getType();
    if (!op.getInBounds() || !rowsAreContiguous(mem, op.getDims()))
      return failure();
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto rowType =
        VectorType::get({type.getShape().back()}, type.getElementType());
    Value pad = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    Value result = forEachRow(
        rewriter, loc, type.getShape(), op.getIndices(), op.getDims(), empty,
        [&](OpBuilder &b, Location l, ValueRange tileIdx, ValueRange memIdx,
            Value tile) -> Value {
          Value row = vector::TransferReadOp::create(
              b, l, rowType, op.getBase(), memIdx, pad, ArrayRef<bool>{true});
          return vector::TransferWriteOp::create(b, l, row, tile, tileIdx,
                                                 ArrayRef<bool>{true})
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerInBoundsStore : OpRewritePattern<blk::StoreOp> {
  LowerInBoundsStore(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(blk::StoreOp op,
                                PatternRewriter &rewriter) const override {
    MemRefType mem = op.getBase().getType();
    if (!op.getInBounds() || op.getAdd() ||
        !rowsAreContiguous(mem, op.getDims()))
      return failure();
    Location loc = op.getLoc();
    RankedTensorType type = op.getValue().getType();
    auto rowType =
        VectorType::get({type.getShape().back()}, type.getElementType());
    Value pad = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    forEachRow(
        rewriter, loc, type.getShape(), op.getIndices(), op.getDims(), Value(),
        [&](OpBuilder &b, Location l, ValueRange tileIdx, ValueRange memIdx,
            Value) -> Value {
          Value row = vector::TransferReadOp::create(
              b, l, rowType, op.getValue(), tileIdx, pad, ArrayRef<bool>{true});
          vector::TransferWriteOp::create(b, l, row, op.getBase(), memIdx,
                                          ArrayRef<bool>{true});
          return Value();
        });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::populateMtaToCPUPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerStencil, LowerInBoundsLoad, LowerInBoundsStore>(
      patterns.getContext());
}
