//===- BlockToCPU.cpp - block program -> loops on the CPU -----------------===//
//
// The CPU backend of the block program. A kernel becomes a function taking
// its program ids as two trailing index arguments; a launch becomes an
// scf.parallel over the grid calling it (later spread over threads by the
// OpenMP lowering). Each tile is a dense buffer: the matrix product becomes
// explicit vectors over register-sized pieces of n with k innermost
// (RegisterLoops.h: no floating-point sum is reassociated), the other tile
// ops linalg ops or small tensor.generate / scf loop nests on tensors,
// which bufferize like any upstream tensor code.
//
//===----------------------------------------------------------------------===//

#include "Exp2ToCPU.h"
#include "MtaToCPU.h"
#include "RegisterLoops.h"
#include "RowOpsToCPU.h"
#include "attn/Codegen/Passes.h"
#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBLOCKTOCPU
#include "attn/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
namespace blk = mlir::attn_block;

namespace {

/// Steps of the dot's k loop per iteration.
constexpr int64_t kUnroll = 4;

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The memref indices of tile element `ivs` of a load/store at `indices`
/// walking memref dims `dims`, and whether they are inside the memref (the
/// bounds mask).
std::pair<SmallVector<Value>, Value> tileAccess(OpBuilder &b, Location l,
                                                Value base, ValueRange indices,
                                                ArrayRef<int64_t> dims,
                                                ValueRange ivs) {
  SmallVector<Value> idx(indices);
  Value ok = arith::ConstantIntOp::create(b, l, 1, 1);
  for (auto [r, d] : llvm::enumerate(dims)) {
    idx[d] = arith::AddIOp::create(b, l, idx[d], ivs[r]);
    Value size = memref::DimOp::create(b, l, base, d);
    ok = arith::AndIOp::create(
        b, l, ok,
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, idx[d], size));
  }
  return {idx, ok};
}

/// Reads in-bounds elements, `padding` elsewhere.
struct LowerLoad : OpRewritePattern<blk::LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::LoadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elt = type.getElementType();
    auto gen = tensor::GenerateOp::create(
        rewriter, loc, type, ValueRange{},
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          // Not a structured binding: lambdas below capture them.
          SmallVector<Value> idx;
          Value ok;
          std::tie(idx, ok) = tileAccess(b, l, op.getBase(), op.getIndices(),
                                         op.getDims(), ivs);
          auto ifOp = scf::IfOp::create(
              b, l, ok,
              [&](OpBuilder &tb, Location tl) {
                Value v = memref::LoadOp::create(tb, tl, op.getBase(), idx);
                scf::YieldOp::create(tb, tl, v);
              },
              [&](OpBuilder &eb, Location el) {
                Value pad = arith::ConstantOp::create(
                    eb, el,
                    eb.getFloatAttr(elt, op.getPadding().convertToDouble()));
                scf::YieldOp::create(eb, el, pad);
              });
          tensor::YieldOp::create(b, l, ifOp.getResult(0));
        });
    rewriter.replaceOp(op, gen.getResult());
    return success();
  }
};

/// Writes in-bounds elements only; a reducing store adds each one
/// atomically (programs run on several threads).
struct LowerStore : OpRewritePattern<blk::StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::StoreOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape = op.getValue().getType().getShape();
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t s : shape) {
      lbs.push_back(cIdx(rewriter, loc, 0));
      ubs.push_back(cIdx(rewriter, loc, s));
      steps.push_back(cIdx(rewriter, loc, 1));
    }
    scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          // Not a structured binding: lambdas below capture them.
          SmallVector<Value> idx;
          Value ok;
          std::tie(idx, ok) = tileAccess(b, l, op.getBase(), op.getIndices(),
                                         op.getDims(), ivs);
          scf::IfOp::create(b, l, ok, [&](OpBuilder &tb, Location tl) {
            Value v = tensor::ExtractOp::create(tb, tl, op.getValue(), ivs);
            if (op.getAdd())
              memref::AtomicRMWOp::create(tb, tl, arith::AtomicRMWKind::addf, v,
                                          op.getBase(), idx);
            else
              memref::StoreOp::create(tb, tl, v, op.getBase(), idx);
            scf::YieldOp::create(tb, tl);
          });
        });
    rewriter.eraseOp(op);
    return success();
  }
};

/// acc + a * b by register pieces: for each register-sized piece of the
/// accumulator's columns (laneChunks) and block of rows (rowsPerBlock: one
/// for a full piece, several for a narrow one), vectors stay in registers
/// while k runs (unrolled by kUnroll), c[m, piece] += a[m, k] * b[k, piece].
/// Explicit vectors (rather than a linalg loop nest left to LLVM) make the
/// lanes and the register-resident row certain.
/// True when the f32 tile `t` ([k, n]) holds a NaN or an infinity: the
/// running maximum of |t| (maximumf propagates NaN) compared with +inf,
/// one vector per row piece.
Value holdsNonFinite(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  Type f32 = type.getElementType();
  Value pad = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0));
  Value inf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, std::numeric_limits<double>::infinity()));
  Value biggest = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0));
  for (auto [off, w] : attn::laneChunks(type.getDimSize(1))) {
    auto rowType = VectorType::get({w}, f32);
    Value col = cIdx(b, loc, off);
    Value init = vector::BroadcastOp::create(b, loc, rowType, pad);
    Value m = attn::forUnrolled(
        b, loc, type.getDimSize(0), kUnroll, init,
        [&](OpBuilder &ib, Location il, Value k, Value acc) -> Value {
          Value row = vector::TransferReadOp::create(ib, il, rowType, t,
                                                     ValueRange{k, col}, pad,
                                                     ArrayRef<bool>{true});
          return arith::MaximumFOp::create(ib, il, acc,
                                           math::AbsFOp::create(ib, il, row));
        });
    biggest = arith::MaximumFOp::create(
        b, loc, biggest,
        vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXIMUMF,
                                    m));
  }
  // Not (biggest < inf): NaN compares unordered.
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGE, biggest, inf);
}

struct LowerDot : OpRewritePattern<blk::DotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::DotOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // 16-bit operands widened once per tile, not once per use in the
    // k loop (each A element is read for every piece of the accumulator's
    // columns, each B row for every block of rows).
    auto widenTile = [&](Value t) -> Value {
      auto type = cast<RankedTensorType>(t.getType());
      if (type.getElementType().isF32())
        return t;
      return arith::ExtFOp::create(rewriter, loc,
                                   type.clone(rewriter.getF32Type()), t);
    };
    auto transpose = [&](Value t) -> Value {
      auto tt = cast<RankedTensorType>(t.getType());
      SmallVector<int64_t> shape = {tt.getDimSize(1), tt.getDimSize(0)};
      Value init =
          tensor::EmptyOp::create(rewriter, loc, shape, tt.getElementType());
      return linalg::TransposeOp::create(rewriter, loc, t, init,
                                         ArrayRef<int64_t>{1, 0})
          .getResult()[0];
    };
    Value aMat = widenTile(op.getA());
    Value bMat = widenTile(op.getB());
    if (op.getTransposeA())
      aMat = transpose(aMat);
    if (op.getTransposeB())
      bMat = transpose(bMat);
    RankedTensorType accType = op.getType();
    int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
    int64_t k = cast<RankedTensorType>(aMat.getType()).getDimSize(1);
    Type f32 = accType.getElementType();
    Value pad = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getFloatAttr(f32, 0.0));
    Value zero = pad;
    // c[i, off : off + w] += sum_k a[i, k] * b[k, off : off + w] for the
    // `rows` rows from i0: each b row piece is read once for all of them.
    // skipZero: a zero a[i, k] keeps c as it is (skip_zero_a).
    auto block = [&](OpBuilder &b, Location l, Value i0, int64_t rows,
                     Value acc, int64_t off, int64_t w, bool skipZero) {
      auto rowType = VectorType::get({w}, f32);
      Value col = cIdx(b, l, off);
      SmallVector<Value> is, init;
      for (int64_t r = 0; r < rows; ++r) {
        is.push_back(r == 0 ? i0
                            : arith::AddIOp::create(b, l, i0, cIdx(b, l, r)));
        init.push_back(vector::TransferReadOp::create(
            b, l, rowType, acc, ValueRange{is.back(), col}, pad,
            ArrayRef<bool>{true}));
      }
      SmallVector<Value> sums = attn::forUnrolledN(
          b, l, k, kUnroll, init,
          [&](OpBuilder &ib, Location il, Value kk,
              ValueRange rs) -> SmallVector<Value> {
            Value bv = vector::TransferReadOp::create(ib, il, rowType, bMat,
                                                      ValueRange{kk, col}, pad,
                                                      ArrayRef<bool>{true});
            SmallVector<Value> next;
            for (auto [i, r] : llvm::zip(is, rs)) {
              Value a =
                  tensor::ExtractOp::create(ib, il, aMat, ValueRange{i, kk});
              Value av = vector::BroadcastOp::create(ib, il, rowType, a);
              Value sum = vector::FMAOp::create(ib, il, av, bv, r);
              if (skipZero)
                sum = arith::SelectOp::create(
                    ib, il,
                    arith::CmpFOp::create(ib, il, arith::CmpFPredicate::OEQ, a,
                                          zero),
                    r, sum);
              next.push_back(sum);
            }
            return next;
          });
      for (auto [i, sum] : llvm::zip(is, sums))
        acc = vector::TransferWriteOp::create(
                  b, l, sum, acc, ValueRange{i, col}, ArrayRef<bool>{true})
                  .getResult();
      return acc;
    };
    auto product = [&](OpBuilder &b, bool skipZero) {
      Value result = op.getAcc();
      for (auto [off, w] : attn::laneChunks(n))
        result = attn::forRowBlocks(
            b, loc, m, attn::rowsPerBlock(w), result,
            [&, off = off, w = w](OpBuilder &ob, Location l, Value i0,
                                  int64_t rows, Value acc) {
              return block(ob, l, i0, rows, acc, off, w, skipZero);
            });
      return result;
    };
    if (!op.getSkipZeroA()) {
      rewriter.replaceOp(op, product(rewriter, false));
      return success();
    }
    // The selects cost a compare per product: only where b holds a
    // non-finite element can a skipped product differ from 0.
    auto ifOp = scf::IfOp::create(
        rewriter, loc, holdsNonFinite(rewriter, loc, bMat),
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, product(b, true));
        },
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, product(b, false));
        });
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

/// Row reductions (axis 1) read each row as one vector and reduce it;
/// column reductions (axis 0) go through linalg.reduce.
struct LowerReduce : OpRewritePattern<blk::ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::ReduceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elt = type.getElementType();
    bool isMax = op.getKind() == blk::ReduceKind::max;
    double initValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
    Value c = arith::ConstantOp::create(rewriter, loc,
                                        rewriter.getFloatAttr(elt, initValue));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), elt);
    if (op.getAxis() == 1) {
      int64_t n = op.getInput().getType().getDimSize(1);
      auto rowType = VectorType::get({n}, elt);
      Value c0 = cIdx(rewriter, loc, 0);
      auto loop = scf::ForOp::create(
          rewriter, loc, c0, cIdx(rewriter, loc, type.getDimSize(0)),
          cIdx(rewriter, loc, 1), ValueRange{empty},
          [&](OpBuilder &b, Location l, Value i, ValueRange outs) {
            Value row = vector::TransferReadOp::create(
                b, l, rowType, op.getInput(), ValueRange{i, c0}, c,
                ArrayRef<bool>{true});
            // maxnumf: the max of a row with -inf entries and finite ones is
            // finite; an all -inf row gives -inf, as the kernel expects.
            Value r = vector::ReductionOp::create(
                b, l,
                isMax ? vector::CombiningKind::MAXNUMF
                      : vector::CombiningKind::ADD,
                row);
            Value next = tensor::InsertOp::create(b, l, r, outs[0], i);
            scf::YieldOp::create(b, l, next);
          });
      rewriter.replaceOp(op, loop.getResult(0));
      return success();
    }
    Value init =
        linalg::FillOp::create(rewriter, loc, ValueRange{c}, ValueRange{empty})
            .getResult(0);
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, ValueRange{op.getInput()}, ValueRange{init},
        ArrayRef<int64_t>{static_cast<int64_t>(op.getAxis())},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value r =
              isMax ? arith::MaximumFOp::create(b, l, args[0], args[1])
                          .getResult()
                    : arith::AddFOp::create(b, l, args[0], args[1]).getResult();
          linalg::YieldOp::create(b, l, r);
        });
    rewriter.replaceOp(op, reduce.getResult(0));
    return success();
  }
};

/// fold: the [M, N] tile viewed as [M, N / w, w] and summed over the
/// middle axis.
struct LowerFold : OpRewritePattern<blk::FoldOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::FoldOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType in = op.getInput().getType(), type = op.getType();
    Type elt = type.getElementType();
    int64_t m = in.getDimSize(0), w = op.getWidth(), n = in.getDimSize(1);
    Value blocks = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({m, n / w, w}, elt), op.getInput(),
        ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    Value c = arith::ConstantOp::create(rewriter, loc,
                                        rewriter.getFloatAttr(elt, 0.0));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), elt);
    Value init =
        linalg::FillOp::create(rewriter, loc, ValueRange{c}, ValueRange{empty})
            .getResult(0);
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, ValueRange{blocks}, ValueRange{init},
        ArrayRef<int64_t>{1}, [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l, arith::AddFOp::create(b, l, args[0], args[1]).getResult());
        });
    rewriter.replaceOp(op, reduce.getResult(0));
    return success();
  }
};

struct LowerBroadcast : OpRewritePattern<blk::BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value empty = tensor::EmptyOp::create(
        rewriter, op.getLoc(), type.getShape(), type.getElementType());
    auto bc = linalg::BroadcastOp::create(
        rewriter, op.getLoc(), op.getInput(), empty,
        ArrayRef<int64_t>{static_cast<int64_t>(op.getAxis())});
    rewriter.replaceOp(op, bc.getResult()[0]);
    return success();
  }
};

/// Inclusive prefix sum: a sequential loop over the (small) tile.
struct LowerScan : OpRewritePattern<blk::ScanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::ScanOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getFloatAttr(type.getElementType(), 0.0));
    auto loop = scf::ForOp::create(
        rewriter, loc, cIdx(rewriter, loc, 0),
        cIdx(rewriter, loc, type.getDimSize(0)), cIdx(rewriter, loc, 1),
        ValueRange{zero, empty},
        [&](OpBuilder &b, Location l, Value i, ValueRange args) {
          Value x = tensor::ExtractOp::create(b, l, op.getInput(), i);
          Value sum = arith::AddFOp::create(b, l, args[0], x);
          Value next = tensor::InsertOp::create(b, l, sum, args[1], i);
          scf::YieldOp::create(b, l, ValueRange{sum, next});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

struct LowerIota : OpRewritePattern<blk::IotaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::IotaOp op,
                                PatternRewriter &rewriter) const override {
    auto gen = tensor::GenerateOp::create(
        rewriter, op.getLoc(), op.getType(), ValueRange{},
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          Value v = arith::AddIOp::create(b, l, op.getStart(), ivs[0]);
          tensor::YieldOp::create(
              b, l,
              arith::IndexCastOp::create(b, l, b.getI64Type(), v).getResult());
        });
    rewriter.replaceOp(op, gen.getResult());
    return success();
  }
};

/// out[r, c] = x[r, c] cos[r, i] + sign * x[r, partner(c)] sin[r, i] for the
/// pair i that feature c belongs to.
struct LowerRope : OpRewritePattern<blk::RopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(blk::RopeOp op,
                                PatternRewriter &rewriter) const override {
    int64_t half = op.getCos().getType().getDimSize(1);
    int64_t rot = 2 * half;
    bool interleaved = op.getStyle() == attn::RopeStyle::interleaved;
    Value x = op.getInput();
    auto gen = tensor::GenerateOp::create(
        rewriter, op.getLoc(), op.getType(), ValueRange{},
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          using P = arith::CmpIPredicate;
          Value r = ivs[0], c = ivs[1];
          auto ci = [&](int64_t v) { return cIdx(b, l, v); };
          Value xc = tensor::ExtractOp::create(b, l, x, ValueRange{r, c});
          Value rotated = arith::CmpIOp::create(b, l, P::slt, c, ci(rot));
          Value i, partner, first;
          if (interleaved) {
            i = arith::DivUIOp::create(b, l, c, ci(2));
            first = arith::CmpIOp::create(
                b, l, P::eq, arith::RemUIOp::create(b, l, c, ci(2)), ci(0));
            partner = arith::SelectOp::create(
                b, l, first, arith::AddIOp::create(b, l, c, ci(1)),
                arith::SubIOp::create(b, l, c, ci(1)));
          } else {
            first = arith::CmpIOp::create(b, l, P::slt, c, ci(half));
            i = arith::SelectOp::create(
                b, l, first, c, arith::SubIOp::create(b, l, c, ci(half)));
            partner = arith::SelectOp::create(
                b, l, first, arith::AddIOp::create(b, l, c, ci(half)), i);
          }
          // Features past the rotary dim read pair 0 but keep x.
          partner = arith::SelectOp::create(b, l, rotated, partner, c);
          i = arith::SelectOp::create(b, l, rotated, i, ci(0));
          Value xp = tensor::ExtractOp::create(b, l, x, ValueRange{r, partner});
          Value cs =
              tensor::ExtractOp::create(b, l, op.getCos(), ValueRange{r, i});
          Value sn =
              tensor::ExtractOp::create(b, l, op.getSin(), ValueRange{r, i});
          Value neg = arith::NegFOp::create(b, l, sn);
          Value signedSin = arith::SelectOp::create(b, l, first, neg, sn);
          Value v =
              arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, xc, cs),
                                    arith::MulFOp::create(b, l, xp, signedSin));
          tensor::YieldOp::create(
              b, l, arith::SelectOp::create(b, l, rotated, v, xc).getResult());
        });
    rewriter.replaceOp(op, gen.getResult());
    return success();
  }
};

/// Half-style RoPE, row by row on vectors: with lo = x[r, 0 : R/2] and
/// hi = x[r, R/2 : R], out = [lo cos - hi sin, hi cos + lo sin, x[r, R:]].
/// The same products and sums as LowerRope's per-element form (bit for
/// bit), without its per-element index selects: K tiles are rotated once
/// per key tile and program, so the per-element form was a large part of
/// the MTA kernels' time (bench/RESULTS.md, "CPU: figures moved from code
/// comments").
struct LowerHalfRope : OpRewritePattern<blk::RopeOp> {
  LowerHalfRope(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(blk::RopeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getStyle() == attn::RopeStyle::interleaved)
      return failure();
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rows = type.getDimSize(0), d = type.getDimSize(1);
    int64_t half = op.getCos().getType().getDimSize(1), rot = 2 * half;
    Type elt = type.getElementType();
    auto halfType = VectorType::get({half}, elt);
    Value c0 = cIdx(rewriter, loc, 0), c1 = cIdx(rewriter, loc, 1);
    Value pad =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(elt));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), elt);
    Value x = op.getInput();
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, cIdx(rewriter, loc, rows), c1, ValueRange{empty},
        [&](OpBuilder &b, Location l, Value r, ValueRange outs) {
          auto read = [&](Value t, int64_t col, VectorType vt) -> Value {
            return vector::TransferReadOp::create(
                b, l, vt, t, ValueRange{r, cIdx(b, l, col)}, pad,
                ArrayRef<bool>{true});
          };
          auto write = [&](Value v, Value t, int64_t col) -> Value {
            return vector::TransferWriteOp::create(
                       b, l, v, t, ValueRange{r, cIdx(b, l, col)},
                       ArrayRef<bool>{true})
                .getResult();
          };
          Value lo = read(x, 0, halfType), hi = read(x, half, halfType);
          Value cs = read(op.getCos(), 0, halfType);
          Value sn = read(op.getSin(), 0, halfType);
          auto mul = [&](Value a, Value c) -> Value {
            return arith::MulFOp::create(b, l, a, c);
          };
          Value negSn = arith::NegFOp::create(b, l, sn);
          // Named steps: a fixed op order (C++ leaves argument order open).
          Value loCos = mul(lo, cs), hiSin = mul(hi, negSn);
          Value outLo = arith::AddFOp::create(b, l, loCos, hiSin);
          Value hiCos = mul(hi, cs), loSin = mul(lo, sn);
          Value outHi = arith::AddFOp::create(b, l, hiCos, loSin);
          Value out = write(outHi, write(outLo, outs[0], 0), half);
          if (d > rot)
            out =
                write(read(x, rot, VectorType::get({d - rot}, elt)), out, rot);
          scf::YieldOp::create(b, l, out);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct AttnBlockToCPUPass : attn::impl::AttnBlockToCPUBase<AttnBlockToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Program ids become two trailing index arguments of each kernel.
    for (auto kernel : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (!kernel->hasAttr("attn_block.kernel"))
        continue;
      Block &entry = kernel.getBody().front();
      IndexType index = IndexType::get(&getContext());
      Value ids[2] = {entry.addArgument(index, kernel.getLoc()),
                      entry.addArgument(index, kernel.getLoc())};
      SmallVector<Type> inputs(kernel.getArgumentTypes());
      inputs.append({index, index});
      kernel.setType(FunctionType::get(&getContext(), inputs, {}));
      kernel.walk([&](blk::ProgramIdOp pid) {
        pid.replaceAllUsesWith(ids[pid.getAxis()]);
        pid.erase();
      });
    }
    // Launches become a parallel loop over the grid.
    SmallVector<blk::LaunchOp> launches;
    module.walk([&](blk::LaunchOp op) { launches.push_back(op); });
    for (blk::LaunchOp op : launches) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value c0 = cIdx(b, loc, 0), c1 = cIdx(b, loc, 1);
      scf::ParallelOp::create(
          b, loc, ValueRange{c0, c0}, ValueRange{op.getGridX(), op.getGridY()},
          ValueRange{c1, c1}, [&](OpBuilder &nb, Location l, ValueRange ivs) {
            SmallVector<Value> args(op.getArgs());
            args.append(ivs.begin(), ivs.end());
            func::CallOp::create(nb, l, op.getKernel(), TypeRange{}, args);
          });
      op.erase();
    }
    RewritePatternSet patterns(&getContext());
    patterns
        .add<LowerLoad, LowerStore, LowerDot, LowerReduce, LowerFold,
             LowerBroadcast, LowerScan, LowerIota, LowerRope, LowerHalfRope>(
            &getContext());
    attn::populateMtaToCPUPatterns(patterns);
    attn::populateExp2ToCPUPatterns(patterns);
    attn::populateRowOpsToCPUPatterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// attn-cpu-fuse-elementwise
//===----------------------------------------------------------------------===//

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUFUSEELEMENTWISE
#include "attn/Codegen/Passes.h.inc"
} // namespace mlir::attn

namespace {

struct AttnCPUFuseElementwisePass
    : attn::impl::AttnCPUFuseElementwiseBase<AttnCPUFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Fusing an elementwise producer into a consumer with a reduction (the
    // tile dot) would recompute it once per reduction step: p = exp2(s - m)
    // fused into dot(p, v) costs 64 exp2 per element instead of one.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          return consumer && consumer.getNumReductionLoops() == 0;
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
