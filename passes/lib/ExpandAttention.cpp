//===- ExpandAttention.cpp - attn.attention -> its op chain ---------------===//
//
// attn.attention is defined as a chain of attn ops; this is that definition
// as a rewrite, used by the reference lowering and by `attn-opt
// --attn-expand-attention` to show what a fused op means.
//
//===----------------------------------------------------------------------===//

#include "Reverse.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDATTENTION
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A score-map type [B, Hq, T, S] built from q's and k's static sizes.
RankedTensorType scoreMapType(Value q, Value k) {
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  return RankedTensorType::get(
      {qt.getDimSize(0), qt.getDimSize(1), qt.getDimSize(2), kt.getDimSize(2)},
      Float32Type::get(q.getContext()));
}

/// RoPE positions of packed sequences: token t of the sequence starting at
/// cu[n] (the last offset <= t) sits at `offset + t - cu[n]`, as an i64
/// tensor [T] (T = dim 2 of `x`) for attn.rope's `positions`.
Value packedPositions(PatternRewriter &rewriter, Location loc, Value x,
                      Value cu, int64_t offset) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t t = xt.getDimSize(2);
  SmallVector<Value> dyn;
  if (ShapedType::isDynamic(t))
    dyn.push_back(tensor::DimOp::create(rewriter, loc, x, 2));
  Value n = tensor::DimOp::create(rewriter, loc, cu, 0);
  auto posType = RankedTensorType::get({t}, rewriter.getI64Type());
  return tensor::GenerateOp::create(
      rewriter, loc, posType, dyn,
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value tok = arith::IndexCastOp::create(b, l, b.getI64Type(), ivs[0]);
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value one = arith::ConstantIndexOp::create(b, l, 1);
        Value start0 = arith::ConstantIntOp::create(b, l, 0, 64);
        auto start = scf::ForOp::create(
            b, l, zero, n, one, ValueRange{start0},
            [&](OpBuilder &fb, Location fl, Value i, ValueRange acc) {
              Value c = tensor::ExtractOp::create(fb, fl, cu, i);
              Value c64 = arith::ExtSIOp::create(fb, fl, fb.getI64Type(), c);
              Value le = arith::CmpIOp::create(
                  fb, fl, arith::CmpIPredicate::sle, c64, tok);
              Value next = arith::SelectOp::create(
                  fb, fl, le, arith::MaxSIOp::create(fb, fl, acc[0], c64),
                  acc[0]);
              scf::YieldOp::create(fb, fl, next);
            });
        Value pos = arith::AddIOp::create(
            b, l, arith::SubIOp::create(b, l, tok, start.getResult(0)),
            arith::ConstantIntOp::create(b, l, offset, 64));
        tensor::YieldOp::create(b, l, pos);
      });
}

/// The chain attn.attention stands for, built at `rewriter` from `op`'s
/// operands and attributes (those of attn.attention or attn.attention_grad):
/// the output, the logits entering the softmax, and the chain's attn ops in
/// program order.
struct Chain {
  Value o, logits;
  SmallVector<Operation *> ops;
};

template <typename OpT>
Chain expandChain(OpT op, Type resultType, PatternRewriter &rewriter) {
  Chain chain;
  // Records each attn op the chain creates.
  auto add = [&](Value v) {
    chain.ops.push_back(v.getDefiningOp());
    return v;
  };
  Location loc = op.getLoc();
  Value q = op.getQ(), k = op.getK();
  if (op.getRopeTheta()) {
    // Queries are the last T of S positions: q's rope positions start at
    // rope_offset + S - T. With dynamic T or S that is a positions tensor.
    auto qt = cast<RankedTensorType>(q.getType());
    auto kt = cast<RankedTensorType>(k.getType());
    int64_t t = qt.getDimSize(2), s = kt.getDimSize(2);
    Value positions;
    int64_t qOffset = op.getRopeOffset();
    if (Value cu = op.getCuSeqlens()) {
      // Packed sequences (T == S): q and k restart at each sequence.
      positions = packedPositions(rewriter, loc, q, cu, qOffset);
    } else if (auto explicitQ = op.getRopeQOffset()) {
      qOffset = *explicitQ;
    } else if (ShapedType::isDynamic(t) || ShapedType::isDynamic(s)) {
      Value tDim = tensor::DimOp::create(rewriter, loc, q, 2);
      Value sDim = tensor::DimOp::create(rewriter, loc, k, 2);
      Value base = arith::AddIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, sDim, tDim),
          arith::ConstantIndexOp::create(rewriter, loc, qOffset));
      auto posType = RankedTensorType::get({t}, rewriter.getI64Type());
      SmallVector<Value> dyn;
      if (ShapedType::isDynamic(t))
        dyn.push_back(tDim);
      positions = tensor::GenerateOp::create(
          rewriter, loc, posType, dyn,
          [&](OpBuilder &b, Location l, ValueRange ivs) {
            Value p = arith::AddIOp::create(b, l, ivs[0], base);
            Value p64 = arith::IndexCastOp::create(b, l, b.getI64Type(), p);
            tensor::YieldOp::create(b, l, p64);
          });
    } else {
      qOffset += s - t;
    }
    auto rope = [&](Value x, Value pos, int64_t offset) {
      return add(RopeOp::create(rewriter, loc, x.getType(), x, pos,
                                op.getRopeStyleAttr(), op.getRopeThetaAttr(),
                                op.getRopeDimAttr(),
                                rewriter.getI64IntegerAttr(offset)));
    };
    Value kPositions;
    if (Value cu = op.getCuSeqlens())
      kPositions = packedPositions(rewriter, loc, k, cu, op.getRopeOffset());
    q = rope(q, positions, positions ? 0 : qOffset);
    k = rope(k, kPositions, kPositions ? 0 : op.getRopeOffset());
  }
  Value s = add(ScoresOp::create(
      rewriter, loc, scoreMapType(q, k), q, k, op.getW(), op.getBeta(),
      op.getG(), op.getCuSeqlens(), op.getGateScaledAttr(), op.getMaskAttr(),
      op.getWindowAttr(), op.getScaleAttr()));
  if (Value th = op.getKqConvPre())
    s = add(
        KqConvOp::create(rewriter, loc, Stage::pre, s, th, op.getCuSeqlens()));
  if (Value w = op.getHeadMixPre())
    s = add(
        HeadMixOp::create(rewriter, loc, Stage::pre, s, w, op.getCuSeqlens()));
  chain.logits = s;
  s = add(SoftmaxOp::create(rewriter, loc, s));
  if (Value th = op.getKqConvPost())
    s = add(
        KqConvOp::create(rewriter, loc, Stage::post, s, th, op.getCuSeqlens()));
  if (Value w = op.getHeadMixPost())
    s = add(
        HeadMixOp::create(rewriter, loc, Stage::post, s, w, op.getCuSeqlens()));
  Value o = add(WeightedSumOp::create(rewriter, loc, resultType, s, op.getV()));
  if (Value gamma = op.getNorm())
    o = add(HeadNormOp::create(rewriter, loc, resultType, o, gamma,
                               op.getNormGateW(), op.getNormGateB(),
                               op.getNormEpsAttr()));
  chain.o = o;
  return chain;
}

struct ExpandAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Chain chain = expandChain(op, op.getResult().getType(), rewriter);
    SmallVector<Value> results = {chain.o};
    if (op.getLse())
      results.push_back(LogSumExpOp::create(
          rewriter, op.getLoc(), op.getLse().getType(), chain.logits));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// attn.attention_grad's meaning: the VJPs of the expanded chain's ops in
/// reverse (out and lse are not read: the chain recomputes them).
struct ExpandAttentionGrad : OpRewritePattern<AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    Chain chain = expandChain(op, op.getOut().getType(), rewriter);
    FailureOr<DenseMap<Value, Value>> cot =
        reverseSweep(rewriter, op.getLoc(), chain.ops, chain.o, op.getGrad());
    if (failed(cot))
      return failure();
    // A value in several operands (attention(q, q, q)): its whole
    // cotangent goes to the first, zeros to the others (the op defines
    // only their sum there).
    SmallVector<Value> grads;
    DenseSet<Value> seen;
    for (Value v : op.differentiated()) {
      Value c = seen.insert(v).second ? cot->lookup(v) : Value();
      grads.push_back(c ? c : zerosLike(rewriter, op.getLoc(), v));
    }
    rewriter.replaceOp(op, grads);
    return success();
  }
};

struct AttnExpandAttentionPass
    : attn::impl::AttnExpandAttentionBase<AttnExpandAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateExpandAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandAttention, ExpandAttentionGrad>(patterns.getContext());
}
