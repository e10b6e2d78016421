//===- Fuse.cpp - attn op chains -> attn.attention ------------------------===//
//
// The inverse of ExpandAttention: a chain
//   [rope q] [rope k] -> scores -> [kq_conv pre] -> [head_mix pre] -> softmax
//     -> [kq_conv post] -> [head_mix post] -> weighted_sum -> [head_norm]
// becomes the one attn.attention it means. Chains are matched from their last
// op upward by small matchers, one per piece; a chain whose intermediate
// values have other uses, or that holds an op the fused form cannot express,
// is left alone. With `report` every decision is a remark.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSE
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

//===----------------------------------------------------------------------===//
// The matched chain
//===----------------------------------------------------------------------===//

/// Every op of one chain; optional pieces are null. `ropeQ`/`ropeK` are set
/// only when the RoPE pair is fused too.
struct Chain {
  RopeOp ropeQ, ropeK;
  /// Set when q's rope offset cannot be written as k's offset + S - T: the
  /// fused op then carries it explicitly (rope_q_offset).
  std::optional<int64_t> ropeQOffset;
  ScoresOp scores;
  KqConvOp convPre;
  HeadMixOp mixPre;
  SoftmaxOp softmax;
  KqConvOp convPost;
  HeadMixOp mixPost;
  WeightedSumOp sum;
  HeadNormOp norm;

  /// The last op: its result becomes the fused op's result.
  Operation *root() { return norm ? norm.getOperation() : sum.getOperation(); }

  /// The ops the fusion removes, users before producers.
  SmallVector<Operation *> opsUsersFirst() {
    SmallVector<Operation *> ops;
    for (Operation *op :
         {norm.getOperation(), sum.getOperation(), mixPost.getOperation(),
          convPost.getOperation(), softmax.getOperation(),
          mixPre.getOperation(), convPre.getOperation(), scores.getOperation(),
          ropeQ.getOperation(), ropeK.getOperation()})
      if (op)
        ops.push_back(op);
    return ops;
  }
};

/// A matcher's verdict: failure with `why` (for the `report` remark).
using Why = std::string;

LogicalResult reject(Why &why, const Twine &message) {
  why = message.str();
  return failure();
}

/// "'attn.kq_conv' (stage pre)", "'arith.addf'" or "a block argument".
std::string describeProducer(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return "a block argument";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << def->getName() << "'";
  if (auto conv = dyn_cast<KqConvOp>(def))
    os << " (stage " << stringifyStage(conv.getStage()) << ")";
  if (auto mix = dyn_cast<HeadMixOp>(def))
    os << " (stage " << stringifyStage(mix.getStage()) << ")";
  return s;
}

/// An intermediate value of the chain must feed only the next piece.
LogicalResult requireOneUse(Value v, StringRef what, Why &why) {
  size_t uses = std::distance(v.use_begin(), v.use_end());
  if (uses == 1)
    return success();
  return reject(why, "the " + what + " has " + Twine(uses) + " uses");
}

/// The optional `OpTy` of `stage` producing `value`: on a match, records it
/// in `slot` and steps `value` to its input.
template <typename OpTy>
LogicalResult matchStage(Value &value, Stage stage, StringRef what, OpTy &slot,
                         Why &why) {
  auto op = value.getDefiningOp<OpTy>();
  if (!op || op.getStage() != stage)
    return success();
  if (failed(requireOneUse(value, what, why)))
    return failure();
  slot = op;
  value = op.getInput();
  return success();
}

//===----------------------------------------------------------------------===//
// Matchers, one per piece, from the weighted_sum upward
//===----------------------------------------------------------------------===//

/// [kq_conv post] -> [head_mix post] -> weighted_sum: on success `probs` is
/// the softmax output candidate.
LogicalResult matchPostSoftmax(Chain &c, Value &probs, Why &why) {
  probs = c.sum.getProbs();
  if (failed(matchStage(probs, Stage::post, "head_mix post output", c.mixPost,
                        why)))
    return failure();
  return matchStage(probs, Stage::post, "kq_conv post output", c.convPost, why);
}

/// softmax: on success `logits` is the score map candidate.
LogicalResult matchSoftmax(Chain &c, Value probs, Value &logits, Why &why) {
  c.softmax = probs.getDefiningOp<SoftmaxOp>();
  if (!c.softmax)
    return reject(why, "expected attn.softmax (then optional kq_conv post, "
                       "head_mix post) before the weighted_sum, found " +
                           describeProducer(probs));
  if (failed(requireOneUse(probs, "softmax output", why)))
    return failure();
  logits = c.softmax.getInput();
  return success();
}

/// scores -> [kq_conv pre] -> [head_mix pre].
LogicalResult matchPreSoftmax(Chain &c, Value logits, Why &why) {
  if (failed(matchStage(logits, Stage::pre, "head_mix pre output", c.mixPre,
                        why)) ||
      failed(
          matchStage(logits, Stage::pre, "kq_conv pre output", c.convPre, why)))
    return failure();
  c.scores = logits.getDefiningOp<ScoresOp>();
  if (!c.scores)
    return reject(why, "expected attn.scores (then optional kq_conv pre, "
                       "head_mix pre) before the softmax, found " +
                           describeProducer(logits));
  return requireOneUse(logits, "score map", why);
}

/// The fused op computes everything at the root: every piece must sit in
/// the root's block.
LogicalResult matchOneBlock(Chain &c, Why &why) {
  Block *block = c.root()->getBlock();
  for (Operation *op : c.opsUsersFirst())
    if (op->getBlock() != block)
      return reject(why, "the chain spans several blocks");
  return success();
}

/// The static sequence length (dim 2) of a [B, H, L, D] value, or kDynamic.
int64_t seqLen(Value v) {
  return cast<RankedTensorType>(v.getType()).getDimSize(2);
}

/// RoPE joins when q and k come from matching single-use forward ropes (same
/// theta, style, rotary dim, no positions operand, not `inverse`). On a match
/// sets `c.ropeQ`/`c.ropeK` (and `c.ropeQOffset` when q's offset is not
/// provably k's offset + S - T); otherwise `why` says why not (empty when
/// neither q nor k is rotated).
LogicalResult matchRope(Chain &c, Why &why) {
  auto ropeQ = c.scores.getQ().getDefiningOp<RopeOp>();
  auto ropeK = c.scores.getK().getDefiningOp<RopeOp>();
  if (!ropeQ && !ropeK)
    return failure();
  if (!ropeQ || !ropeK)
    return reject(why, Twine("only ") + (ropeQ ? "q" : "k") +
                           " comes from attn.rope");
  Block *block = c.root()->getBlock();
  if (ropeQ->getBlock() != block || ropeK->getBlock() != block)
    return reject(why, "the ropes are in another block");
  if (ropeQ.getPositions() || ropeK.getPositions())
    return reject(why, "a rope has a positions operand");
  // attn.attention's rope(theta) is the forward rotation only.
  if (ropeQ.getInverse() || ropeK.getInverse())
    return reject(why, "a rope is an inverse rotation (a gradient)");
  if (ropeQ.getThetaAttr() != ropeK.getThetaAttr() ||
      ropeQ.getStyle() != ropeK.getStyle() ||
      ropeQ.getRotaryDimOrHeadDim() != ropeK.getRotaryDimOrHeadDim())
    return reject(why, "q's and k's ropes differ in theta, style or "
                       "rotary_dim");
  if (failed(requireOneUse(ropeQ.getResult(), "rotated q", why)) ||
      failed(requireOneUse(ropeK.getResult(), "rotated k", why)))
    return failure();

  // q's positions must be k's offset + S - T, + i.
  int64_t qOffset = ropeQ.getOffset(), kOffset = ropeK.getOffset();
  int64_t t = seqLen(ropeQ.getInput()), s = seqLen(ropeK.getInput());
  std::optional<int64_t> sMinusT;
  if (ropeQ.getInput() == ropeK.getInput())
    sMinusT = 0;
  else if (!ShapedType::isDynamic(t) && !ShapedType::isDynamic(s))
    sMinusT = s - t;
  // Otherwise (dynamic T or S, or another offset) the fused op states q's
  // offset explicitly, which is exact for any T and S.
  if (!sMinusT || qOffset != kOffset + *sMinusT)
    c.ropeQOffset = qOffset;
  c.ropeQ = ropeQ;
  c.ropeK = ropeK;
  return success();
}

/// Conditions of attn.attention the chain does not impose on itself.
LogicalResult matchExpressible(Chain &c, Why &why) {
  bool mta = c.convPre || c.mixPre || c.convPost || c.mixPost;
  if (mta && c.scores.getMask() != MaskKind::causal)
    return reject(why, "MTA pieces need a causal mask in attn.attention, the "
                       "scores have mask " +
                           stringifyMaskKind(c.scores.getMask()));
  // attn.attention packs its MTA pieces with the scores' sequences.
  Value cu = c.scores.getCuSeqlens();
  auto packedApart = [&](auto piece) {
    return piece && piece.getCuSeqlens() != cu;
  };
  if (packedApart(c.convPre) || packedApart(c.mixPre) ||
      packedApart(c.convPost) || packedApart(c.mixPost))
    return reject(why, "an MTA piece does not take the scores' cu_seqlens "
                       "(attn.attention packs its pieces with the scores)");
  Type qElem = getElementTypeOrSelf(c.scores.getQ().getType());
  Type vElem = getElementTypeOrSelf(c.sum.getV().getType());
  if (qElem != vElem) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "v's element type " << vElem << " is not q's " << qElem;
    return reject(why, s);
  }
  return success();
}

/// The whole chain ending at `sum` (and `norm`, when given).
LogicalResult matchChain(Chain &c, WeightedSumOp sum, HeadNormOp norm, Why &why,
                         Why &whyNotRope) {
  c.sum = sum;
  c.norm = norm;
  Value probs, logits;
  if (failed(matchPostSoftmax(c, probs, why)) ||
      failed(matchSoftmax(c, probs, logits, why)) ||
      failed(matchPreSoftmax(c, logits, why)) ||
      failed(matchOneBlock(c, why)) || failed(matchExpressible(c, why)))
    return failure();
  (void)matchRope(c, whyNotRope);
  return success();
}

//===----------------------------------------------------------------------===//
// Building the fused op
//===----------------------------------------------------------------------===//

/// The attn.attention meaning `c`, created detached (not inserted), or
/// failure with the verifier's message: a chain can be valid op by op while
/// its pieces contradict each other once in one op (say a static B on q and
/// another on v, with a dynamic score map in between).
FailureOr<AttentionOp> buildFused(Chain &c, Why &why) {
  MLIRContext *ctx = c.sum.getContext();
  OpBuilder b(ctx);
  ScoresOp sc = c.scores;
  Value q = sc.getQ(), k = sc.getK();
  FloatAttr ropeTheta;
  RopeStyleAttr ropeStyle;
  IntegerAttr ropeDim, ropeOffset;
  if (c.ropeQ) {
    q = c.ropeQ.getInput();
    k = c.ropeK.getInput();
    ropeTheta = c.ropeQ.getThetaAttr();
    ropeStyle = c.ropeQ.getStyleAttr();
    if (c.ropeQ.getRotaryDim() || c.ropeK.getRotaryDim())
      ropeDim = b.getI64IntegerAttr(c.ropeQ.getRotaryDimOrHeadDim());
    ropeOffset = c.ropeK.getOffsetAttr();
  }
  HeadNormOp n = c.norm;
  Value operandGroups[] = {q,
                           k,
                           c.sum.getV(),
                           sc.getW(),
                           sc.getBeta(),
                           sc.getG(),
                           c.convPre ? c.convPre.getKernel() : Value(),
                           c.mixPre ? c.mixPre.getWeight() : Value(),
                           c.convPost ? c.convPost.getKernel() : Value(),
                           c.mixPost ? c.mixPost.getWeight() : Value(),
                           n ? n.getGamma() : Value(),
                           n ? n.getGateW() : Value(),
                           n ? n.getGateB() : Value(),
                           sc.getCuSeqlens()};
  // Built from properties rather than the positional builder so that
  // attributes attn.attention gains later (left unset here) do not change
  // this call; its operand groups are fixed.
  AttentionOp::Properties props;
  static_assert(std::tuple_size<decltype(props.operandSegmentSizes)>::value ==
                    std::extent_v<decltype(operandGroups)>,
                "attn.attention operand groups changed");
  SmallVector<Value> operands;
  for (auto [i, v] : llvm::enumerate(operandGroups)) {
    props.operandSegmentSizes[i] = v ? 1 : 0;
    if (v)
      operands.push_back(v);
  }
  props.setRopeTheta(ropeTheta);
  props.setRopeStyle(ropeStyle);
  props.setRopeDim(ropeDim);
  props.setRopeOffset(ropeOffset);
  if (c.ropeQOffset)
    props.setRopeQOffset(b.getI64IntegerAttr(*c.ropeQOffset));
  props.setGateScaled(sc.getGateScaledAttr());
  props.setMask(sc.getMaskAttr());
  props.setWindow(sc.getWindowAttr());
  props.setScale(sc.getScaleAttr());
  if (n)
    props.setNormEps(n.getEpsAttr());
  auto fused = AttentionOp::create(
      b, c.root()->getLoc(), c.root()->getResult(0).getType(), operands, props);

  std::string message;
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
    if (message.empty())
      message = diag.str();
    return success();
  });
  if (failed(verify(fused))) {
    fused->erase();
    return reject(why, "the fused op would not verify: " + message);
  }
  return fused;
}

/// Matches the chain ending at `sum`/`norm` and replaces it by one
/// attn.attention; with `report`, says what it did or why not.
LogicalResult fuseChain(WeightedSumOp sum, HeadNormOp norm,
                        PatternRewriter &rewriter, bool report) {
  Chain c;
  Why why, whyNotRope;
  Operation *root = norm ? norm.getOperation() : sum.getOperation();
  FailureOr<AttentionOp> fused = failure();
  if (succeeded(matchChain(c, sum, norm, why, whyNotRope)))
    fused = buildFused(c, why);
  if (failed(fused)) {
    if (report)
      root->emitRemark() << "not fused: " << why;
    return failure();
  }

  // The head_norm pattern takes a weighted_sum only when it has no other
  // use; say so for any head_norm left behind.
  if (report && !norm)
    for (Operation *user : sum->getUsers())
      if (isa<HeadNormOp>(user))
        user->emitRemark("head_norm not fused: the weighted_sum result has ")
            << std::distance(sum->use_begin(), sum->use_end()) << " uses";

  SmallVector<Operation *> ops = c.opsUsersFirst();
  rewriter.setInsertionPoint(root);
  rewriter.insert(*fused);
  rewriter.replaceOp(root, fused->getResult());
  for (Operation *op : ops)
    if (op != root)
      rewriter.eraseOp(op);
  if (report) {
    fused->emitRemark() << "fused " << ops.size() << " ops into attn.attention";
    if (!whyNotRope.empty())
      fused->emitRemark() << "rope not fused: " << whyNotRope;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// A chain ending in weighted_sum -> head_norm, where the weighted_sum feeds
/// only the head_norm. Rooted at the head_norm, the last op, so a walk has
/// already visited every op it erases.
struct FuseNormedChain : OpRewritePattern<HeadNormOp> {
  FuseNormedChain(MLIRContext *ctx, bool report)
      : OpRewritePattern(ctx), report(report) {}

  LogicalResult matchAndRewrite(HeadNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto sum = norm.getInput().getDefiningOp<WeightedSumOp>();
    if (!sum || !sum->hasOneUse() || sum->getBlock() != norm->getBlock())
      return failure(); // FuseChain takes the chain without the norm.
    return fuseChain(sum, norm, rewriter, report);
  }

  bool report;
};

/// A chain ending in weighted_sum (no fusable head_norm after it).
struct FuseChain : OpRewritePattern<WeightedSumOp> {
  FuseChain(MLIRContext *ctx, bool report)
      : OpRewritePattern(ctx), report(report) {}

  LogicalResult matchAndRewrite(WeightedSumOp sum,
                                PatternRewriter &rewriter) const override {
    if (sum->hasOneUse()) {
      Operation *user = *sum->user_begin();
      if (isa<HeadNormOp>(user) && user->getBlock() == sum->getBlock())
        return failure(); // FuseNormedChain's, visited next.
    }
    return fuseChain(sum, HeadNormOp(), rewriter, report);
  }

  bool report;
};

struct AttnFusePass : attn::impl::AttnFuseBase<AttnFusePass> {
  using AttnFuseBase::AttnFuseBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseNormedChain, FuseChain>(&getContext(), report);
    // One visit per op: every chain is decided (and reported) once. The
    // patterns root at a chain's last op and only erase ops before it.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
