//===- AttnVerifiers.cpp - verifiers of the attn ops ----------------------===//
//
// Every shape, element-type and attribute error a user can make is reported
// here with the operand's name and the shape it must have. Pieces shared by a
// standalone op and the fused attn.attention (scores, RoPE, MTA kernels, the
// output norm) are checked by one function each, so both report alike.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/ShapeCheck.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

static Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

static LogicalResult verifyFiniteAttr(Operation *op, StringRef name,
                                      double value, bool positive) {
  if (!std::isfinite(value) || (positive && value <= 0.0))
    return op->emitOpError()
           << "attribute '" << name << "' must be "
           << (positive ? "positive and " : "") << "finite, got " << value;
  // The ops compute in f32 (score maps, norms, RoPE angles): a value that
  // rounds to inf there, or lies below the smallest normal f32 (where it
  // rounds to 0 or loses its precision), would silently change the result.
  double mag = std::fabs(value);
  if (mag > std::numeric_limits<float>::max() ||
      (mag != 0.0 && mag < std::numeric_limits<float>::min()))
    return op->emitOpError()
           << "attribute '" << name << "' = " << value
           << " is not representable in f32, the type the op computes in "
              "(normal f32 magnitudes are 1.17549435e-38 .. 3.40282347e+38)";
  return success();
}

/// q [B, Hq, T, D] and k [B, Hk, S, D]: D static, one element type, GQA.
static LogicalResult verifyQK(Operation *op, ShapeEnv &env, Value q, Value k) {
  if (failed(env.bind("q", q.getType(), {"B", "Hq", "T", "D"})) ||
      failed(env.bind("k", k.getType(), {"B", "Hk", "S", "D"})))
    return failure();
  if (ShapedType::isDynamic(cast<ShapedType>(q.getType()).getDimSize(3)) ||
      ShapedType::isDynamic(cast<ShapedType>(k.getType()).getDimSize(3)))
    return op->emitOpError("head dim D of 'q' and 'k' must be static");
  if (cast<ShapedType>(q.getType()).getDimSize(3) < 1)
    return op->emitOpError("head dim D of 'q' and 'k' must be >= 1");
  if (elementTypeOf(q) != elementTypeOf(k))
    return op->emitOpError()
           << "'q' and 'k' must have the same element type, "
           << "got " << elementTypeOf(q) << " and " << elementTypeOf(k);
  return success();
}

static LogicalResult verifyGQA(Operation *op, ShapeEnv &env) {
  int64_t hq = env.get("Hq"), hk = env.get("Hk");
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hk))
    return success();
  if (hk == 0 || hq % hk != 0)
    return op->emitOpError()
           << "query heads Hq = " << hq
           << " must be a multiple of KV heads Hk = " << hk << " (GQA)";
  return success();
}

/// Packed sequences (`cuSeqlens`, null without): T == S and N + 1 >= 2
/// offsets.
static LogicalResult verifyPacked(Operation *op, ShapeEnv &env,
                                  Value cuSeqlens) {
  if (!cuSeqlens)
    return success();
  int64_t t = env.get("T"), s = env.get("S");
  if (!ShapedType::isDynamic(t) && !ShapedType::isDynamic(s) && t != s)
    return op->emitOpError()
           << "packed sequences (cu_seqlens) need T == S, got T = " << t
           << ", S = " << s;
  auto cuType = cast<ShapedType>(cuSeqlens.getType());
  if (!cuType.isDynamicDim(0) && cuType.getDimSize(0) < 2)
    return op->emitOpError()
           << "'cu_seqlens' holds N + 1 >= 2 offsets, got " << cuType;
  return success();
}

/// The scores piece shared by attn.scores and attn.attention.
static LogicalResult
verifyScorePiece(Operation *op, ShapeEnv &env, Value w, Value beta, Value g,
                 bool gateScaled, MaskKind mask, std::optional<int64_t> window,
                 std::optional<double> scale, Value cuSeqlens) {
  if (static_cast<bool>(w) != static_cast<bool>(beta))
    return op->emitOpError("a PaTH path needs both 'w' and 'beta'");
  if (w && (failed(env.bind("w", w.getType(), {"B", "Hk", "S", "D"})) ||
            failed(env.bind("beta", beta.getType(), {"B", "Hk", "S"}))))
    return failure();
  if (g && failed(env.bind("g", g.getType(), {"B", "Hq", "S"})))
    return failure();
  if (gateScaled && !g)
    return op->emitOpError("'scaled' needs a forget gate 'g'");
  if (mask == MaskKind::sliding_window) {
    if (!window || *window < 1)
      return op->emitOpError(
          "mask sliding_window needs a 'window' attribute >= 1");
  } else if (window) {
    return op->emitOpError("'window' is only valid with mask sliding_window");
  }
  if (mask == MaskKind::none && (w || g))
    return op->emitOpError("PaTH paths and forget gates need a causal or "
                           "sliding_window mask, got mask none");
  if (scale && failed(verifyFiniteAttr(op, "scale", *scale, false)))
    return failure();
  int64_t t = env.get("T"), s = env.get("S");
  if (mask != MaskKind::none && !ShapedType::isDynamic(t) &&
      !ShapedType::isDynamic(s) && t > s)
    return op->emitOpError() << "a causal or sliding_window mask needs "
                             << "T <= S (queries are the last T of S "
                             << "positions), got T = " << t << ", S = " << s;
  if (failed(verifyPacked(op, env, cuSeqlens)))
    return failure();
  return verifyGQA(op, env);
}

static LogicalResult verifyRopePiece(Operation *op, int64_t headDim,
                                     std::optional<int64_t> rotaryDim,
                                     double theta) {
  if (failed(verifyFiniteAttr(op, "theta", theta, true)))
    return failure();
  int64_t r = rotaryDim.value_or(headDim);
  if (r < 2 || r > headDim || r % 2 != 0)
    return op->emitOpError()
           << "rotary dim must be even and in [2, D = " << headDim << "], got "
           << r;
  return success();
}

/// kq_conv kernel [H, c_q, c_k] with static sizes and odd c_k.
static LogicalResult verifyKqKernel(Operation *op, ShapeEnv &env,
                                    StringRef name, Value kernel,
                                    StringRef heads) {
  // Each kernel has its own sizes: pre and post kernels may differ.
  std::string cq = (name + ".c_q").str(), ck = (name + ".c_k").str();
  if (failed(env.bind(name, kernel.getType(), {heads, cq, ck})))
    return failure();
  auto type = cast<ShapedType>(kernel.getType());
  int64_t cqSize = type.getDimSize(1), ckSize = type.getDimSize(2);
  if (ShapedType::isDynamic(cqSize) || ShapedType::isDynamic(ckSize))
    return op->emitOpError() << "kernel sizes of '" << name
                             << "' [H, c_q, c_k] must be static, got " << type;
  if (cqSize < 1 || ckSize < 1 || ckSize % 2 == 0)
    return op->emitOpError()
           << "'" << name << "' must have c_q >= 1 and an odd c_k "
           << "(keys are padded (c_k-1)/2 each side), got " << type;
  return success();
}

/// Dim 1 of a head_mix weight as a ShapeEnv extent: its static size, or
/// the shared name c_h.
static std::string mixGroupDim(Value weight) {
  int64_t ch = cast<ShapedType>(weight.getType()).getDimSize(1);
  return ShapedType::isDynamic(ch) ? "c_h" : std::to_string(ch);
}

/// head_mix weight [H, c_h]. A dynamic c_h is allowed (full mixing over a
/// dynamic head count, `[?, ?]`); a static one must divide a static H.
static LogicalResult verifyMixWeight(Operation *op, ShapeEnv &env,
                                     StringRef name, Value weight,
                                     StringRef heads) {
  auto type = cast<ShapedType>(weight.getType());
  int64_t ch = type.getDimSize(1);
  if (ShapedType::isDynamic(ch))
    return env.bind(name, type, {heads, mixGroupDim(weight)});
  if (ch < 1)
    return op->emitOpError() << "group size c_h = dim 1 of '" << name
                             << "' [H, c_h] must be >= 1, got " << type;
  if (failed(env.bind(name, type, {heads, mixGroupDim(weight)})))
    return failure();
  int64_t h = env.get(heads);
  if (!ShapedType::isDynamic(h) && h % ch != 0)
    return op->emitOpError()
           << "group size c_h = " << ch << " must divide the head count "
           << heads << " = " << h;
  return success();
}

static LogicalResult verifyNormPiece(Operation *op, ShapeEnv &env, Value gamma,
                                     Value gateW, Value gateB, double eps) {
  if (failed(env.bind("gamma", gamma.getType(), {"Dv"})))
    return failure();
  if (static_cast<bool>(gateW) != static_cast<bool>(gateB))
    return op->emitOpError("a norm gate needs both its weight and its bias");
  if (gateW && (failed(env.bind("gate_w", gateW.getType(), {"Dv"})) ||
                failed(env.bind("gate_b", gateB.getType(), {"1"}))))
    return failure();
  return verifyFiniteAttr(op, "eps", eps, true);
}

//===----------------------------------------------------------------------===//
// Per-op verifiers
//===----------------------------------------------------------------------===//

int64_t RopeOp::getRotaryDimOrHeadDim() {
  return getRotaryDim().value_or(
      cast<ShapedType>(getInput().getType()).getDimSize(3));
}

LogicalResult RopeOp::verify() {
  ShapeEnv env(*this);
  if (failed(env.bind("input", getInput().getType(), {"B", "H", "T", "D"})))
    return failure();
  if (failed(requireStatic(*this, env.get("D"), "head dim D")))
    return failure();
  if (getPositions() &&
      failed(env.bind("positions", getPositions().getType(), {"T"})))
    return failure();
  return verifyRopePiece(*this, env.get("D"), getRotaryDim(),
                         getTheta().convertToDouble());
}

/// The `scale` attribute of `op` or 1/sqrt(D).
template <typename OpT> static double scaleOrDefault(OpT op) {
  if (auto s = op.getScale())
    return s->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(
                   cast<ShapedType>(op.getQ().getType()).getDimSize(3)));
}

/// The operands and attributes of attn.scores, shared by its gradient.
template <typename OpT>
static LogicalResult verifyScoresOperands(OpT op, ShapeEnv &env) {
  if (failed(verifyQK(op, env, op.getQ(), op.getK())))
    return failure();
  std::optional<double> scale;
  if (auto s = op.getScale())
    scale = s->convertToDouble();
  return verifyScorePiece(op, env, op.getW(), op.getBeta(), op.getG(),
                          op.getGateScaled(), op.getMask(), op.getWindow(),
                          scale, op.getCuSeqlens());
}

/// The operands of attn.kq_conv / attn.head_mix, shared by their gradients.
static LogicalResult verifyKqConvOperands(Operation *op, ShapeEnv &env,
                                          Value input, Value kernel,
                                          Value cuSeqlens) {
  if (failed(env.bind("input", input.getType(), {"B", "H", "T", "S"})) ||
      failed(verifyPacked(op, env, cuSeqlens)))
    return failure();
  return verifyKqKernel(op, env, "kernel", kernel, "H");
}

static LogicalResult verifyHeadMixOperands(Operation *op, ShapeEnv &env,
                                           Value input, Value weight,
                                           Value cuSeqlens) {
  if (failed(env.bind("input", input.getType(), {"B", "H", "T", "S"})) ||
      failed(verifyPacked(op, env, cuSeqlens)))
    return failure();
  return verifyMixWeight(op, env, "weight", weight, "H");
}

/// A gradient result `name` of the operand `primal`: its element type and
/// the shape `dims`.
static LogicalResult verifyGradResult(Operation *op, ShapeEnv &env,
                                      StringRef name, Value grad,
                                      StringRef primalName, Value primal,
                                      ArrayRef<StringRef> dims) {
  if (elementTypeOf(grad) != elementTypeOf(primal))
    return op->emitOpError()
           << "result '" << name << "' must have the element type of '"
           << primalName << "' " << elementTypeOf(primal) << ", got "
           << elementTypeOf(grad);
  return env.bind(name, grad.getType(), dims);
}

double ScoresOp::getScaleOrDefault() { return scaleOrDefault(*this); }

LogicalResult ScoresOp::verify() {
  ShapeEnv env(*this);
  if (failed(verifyScoresOperands(*this, env)))
    return failure();
  return env.bind("result", getResult().getType(), {"B", "Hq", "T", "S"});
}

LogicalResult KqConvOp::verify() {
  ShapeEnv env(*this);
  return verifyKqConvOperands(*this, env, getInput(), getKernel(),
                              getCuSeqlens());
}

LogicalResult HeadMixOp::verify() {
  ShapeEnv env(*this);
  return verifyHeadMixOperands(*this, env, getInput(), getWeight(),
                               getCuSeqlens());
}

LogicalResult WeightedSumOp::verify() {
  ShapeEnv env(*this);
  if (failed(env.bind("probs", getProbs().getType(), {"B", "Hq", "T", "S"})) ||
      failed(env.bind("v", getV().getType(), {"B", "Hk", "S", "Dv"})))
    return failure();
  if (failed(requireStatic(*this, env.get("Dv"), "value head dim Dv")))
    return failure();
  if (elementTypeOf(getResult()) != elementTypeOf(getV()))
    return emitOpError() << "result element type must be v's element type "
                         << elementTypeOf(getV()) << ", got "
                         << elementTypeOf(getResult());
  if (failed(verifyGQA(*this, env)))
    return failure();
  return env.bind("result", getResult().getType(), {"B", "Hq", "T", "Dv"});
}

LogicalResult HeadNormOp::verify() {
  ShapeEnv env(*this);
  if (failed(env.bind("input", getInput().getType(), {"B", "H", "T", "Dv"})))
    return failure();
  if (failed(requireStatic(*this, env.get("Dv"), "head dim Dv")))
    return failure();
  return verifyNormPiece(*this, env, getGamma(), getGateW(), getGateB(),
                         getEps().convertToDouble());
}

/// short_conv's input [B, H, T, D] and kernel [H, D, K] with a static K.
static LogicalResult verifyShortConvPiece(Operation *op, ShapeEnv &env,
                                          Value input, Value kernel) {
  if (failed(env.bind("input", input.getType(), {"B", "H", "T", "D"})))
    return failure();
  auto kType = cast<ShapedType>(kernel.getType());
  int64_t k = kType.getDimSize(2);
  if (ShapedType::isDynamic(k) || k < 1)
    return op->emitOpError()
           << "kernel size K = dim 2 of 'kernel' [H, D, K] must "
           << "be static and >= 1, got " << kType;
  return env.bind("kernel", kType, {"H", "D", "K"});
}

LogicalResult ShortConvOp::verify() {
  ShapeEnv env(*this);
  return verifyShortConvPiece(*this, env, getInput(), getKernel());
}

LogicalResult L2NormOp::verify() {
  return verifyFiniteAttr(*this, "eps", getEps().convertToDouble(), true);
}

double AttentionOp::getScaleOrDefault() { return scaleOrDefault(*this); }
double AttentionGradOp::getScaleOrDefault() { return scaleOrDefault(*this); }

/// The operands and attributes attn.attention and attn.attention_grad share,
/// binding B, Hq, Hk, T, S, D and Dv in `env`.
template <typename OpT>
static LogicalResult verifyAttentionPieces(OpT op, ShapeEnv &env) {
  if (failed(verifyQK(op, env, op.getQ(), op.getK())) ||
      failed(env.bind("v", op.getV().getType(), {"B", "Hk", "S", "Dv"})))
    return failure();
  if (failed(requireStatic(op, env.get("Dv"), "value head dim Dv")))
    return failure();
  if (elementTypeOf(op.getV()) != elementTypeOf(op.getQ()))
    return op.emitOpError()
           << "'v' must have q's element type " << elementTypeOf(op.getQ())
           << ", got " << elementTypeOf(op.getV());
  std::optional<double> scale;
  if (auto s = op.getScale())
    scale = s->convertToDouble();
  if (failed(verifyScorePiece(op, env, op.getW(), op.getBeta(), op.getG(),
                              op.getGateScaled(), op.getMask(), op.getWindow(),
                              scale, op.getCuSeqlens())))
    return failure();
  if (op.getCuSeqlens() && op.getRopeQOffset())
    return op.emitOpError()
           << "packed sequences (cu_seqlens) are not supported with "
              "rope_q_offset (positions restart at each sequence's start)";
  if (auto theta = op.getRopeTheta()) {
    if (failed(verifyRopePiece(op, env.get("D"), op.getRopeDim(),
                               theta->convertToDouble())))
      return failure();
    if (static_cast<int64_t>(op.getRopeOffset()) < 0 ||
        static_cast<int64_t>(op.getRopeQOffset().value_or(0)) < 0)
      return op.emitOpError("rope positions must be non-negative: rope_offset "
                            "and rope_q_offset must be >= 0");
  } else if (op.getRopeDim() || op.getRopeOffset() != 0 ||
             op.getRopeQOffset() || op.getRopeStyle() != RopeStyle::half) {
    return op.emitOpError(
        "rope_style, rope_dim, rope_offset and rope_q_offset need rope(theta)");
  }
  if (op.hasMTA() && op.getMask() != MaskKind::causal)
    return op.emitOpError(
        "MTA convolutions and head mixing need a causal mask");
  if (op.getKqConvPre() &&
      failed(verifyKqKernel(op, env, "kq_conv_pre", op.getKqConvPre(), "Hq")))
    return failure();
  if (op.getHeadMixPre() && failed(verifyMixWeight(op, env, "head_mix_pre",
                                                   op.getHeadMixPre(), "Hq")))
    return failure();
  if (op.getKqConvPost() &&
      failed(verifyKqKernel(op, env, "kq_conv_post", op.getKqConvPost(), "Hq")))
    return failure();
  if (op.getHeadMixPost() && failed(verifyMixWeight(op, env, "head_mix_post",
                                                    op.getHeadMixPost(), "Hq")))
    return failure();
  if (op.getNorm()) {
    if (failed(verifyNormPiece(op, env, op.getNorm(), op.getNormGateW(),
                               op.getNormGateB(),
                               op.getNormEps().convertToDouble())))
      return failure();
  } else if (op.getNormGateW() || op.getNormGateB()) {
    return op.emitOpError("norm_gate needs norm(gamma)");
  }
  return success();
}

/// `value` has the attention result's shape [B, Hq, T, Dv] and v's element
/// type.
template <typename OpT>
static LogicalResult verifyLikeResult(OpT op, ShapeEnv &env, StringRef name,
                                      Value value) {
  if (elementTypeOf(value) != elementTypeOf(op.getV()))
    return op.emitOpError()
           << name << " element type must be v's element type "
           << elementTypeOf(op.getV()) << ", got " << elementTypeOf(value);
  return env.bind(name, value.getType(), {"B", "Hq", "T", "Dv"});
}

LogicalResult AttentionOp::verify() {
  ShapeEnv env(*this);
  if (failed(verifyAttentionPieces(*this, env)) ||
      failed(verifyLikeResult(*this, env, "result", getResult())))
    return failure();
  return getLse() ? env.bind("lse", getLse().getType(), {"B", "Hq", "T"})
                  : success();
}

SmallVector<Value> AttentionGradOp::differentiated() {
  SmallVector<Value> of;
  for (Value v : {getQ(), getK(), getV(), getW(), getBeta(), getG(),
                  getKqConvPre(), getHeadMixPre(), getKqConvPost(),
                  getHeadMixPost(), getNorm(), getNormGateW(), getNormGateB()})
    if (v)
      of.push_back(v);
  return of;
}

LogicalResult AttentionGradOp::verify() {
  ShapeEnv env(*this);
  if (failed(verifyAttentionPieces(*this, env)) ||
      failed(verifyLikeResult(*this, env, "out", getOut())) ||
      failed(verifyLikeResult(*this, env, "grad", getGrad())) ||
      failed(env.bind("lse", getLse().getType(), {"B", "Hq", "T"})))
    return failure();
  SmallVector<Value> of = differentiated();
  if (of.size() != getGrads().size())
    return emitOpError() << "expects " << of.size()
                         << " results (one per float operand), got "
                         << getGrads().size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(of, getGrads())))
    if (std::get<0>(pair).getType() != std::get<1>(pair).getType())
      return emitOpError() << "result " << i << " must have the type of the "
                           << "operand it is the gradient of, "
                           << std::get<0>(pair).getType() << ", got "
                           << std::get<1>(pair).getType();
  return success();
}

//===----------------------------------------------------------------------===//
// VJP ops and attn.logsumexp
//===----------------------------------------------------------------------===//

/// A cotangent or gradient `name` must have the element type of the value
/// `refName` it belongs to.
static LogicalResult requireElementTypeOf(Operation *op, StringRef name,
                                          Value v, StringRef refName,
                                          Value ref) {
  if (elementTypeOf(v) == elementTypeOf(ref))
    return success();
  return op->emitOpError() << "'" << name << "' must have the element type of '"
                           << refName << "', " << elementTypeOf(ref) << ", got "
                           << elementTypeOf(v);
}

LogicalResult WeightedSumGradOp::verify() {
  ShapeEnv env(*this);
  if (failed(env.bind("probs", getProbs().getType(), {"B", "Hq", "T", "S"})) ||
      failed(env.bind("v", getV().getType(), {"B", "Hk", "S", "Dv"})) ||
      failed(env.bind("grad", getGrad().getType(), {"B", "Hq", "T", "Dv"})))
    return failure();
  if (failed(requireStatic(*this, env.get("Dv"), "value head dim Dv")) ||
      failed(verifyGQA(*this, env)) ||
      failed(requireElementTypeOf(*this, "grad", getGrad(), "v", getV())) ||
      failed(requireElementTypeOf(*this, "v_grad", getVGrad(), "v", getV())))
    return failure();
  if (failed(env.bind("probs_grad", getProbsGrad().getType(),
                      {"B", "Hq", "T", "S"})))
    return failure();
  return env.bind("v_grad", getVGrad().getType(), {"B", "Hk", "S", "Dv"});
}

LogicalResult HeadNormGradOp::verify() {
  ShapeEnv env(*this);
  if (failed(env.bind("input", getInput().getType(), {"B", "H", "T", "Dv"})))
    return failure();
  if (failed(requireStatic(*this, env.get("Dv"), "head dim Dv")) ||
      failed(verifyNormPiece(*this, env, getGamma(), getGateW(), getGateB(),
                             getEps().convertToDouble())))
    return failure();
  if (static_cast<bool>(getGateWGrad()) != static_cast<bool>(getGateW()) ||
      static_cast<bool>(getGateBGrad()) != static_cast<bool>(getGateB()))
    return emitOpError("results 'gate_w_grad' and 'gate_b_grad' must be "
                       "present exactly when the gate operands are");
  for (auto [name, v] : {std::pair<StringRef, Value>{"grad", getGrad()},
                         {"input_grad", getInputGrad()}})
    if (failed(env.bind(name, v.getType(), {"B", "H", "T", "Dv"})) ||
        failed(requireElementTypeOf(*this, name, v, "input", getInput())))
      return failure();
  if (failed(env.bind("gamma_grad", getGammaGrad().getType(), {"Dv"})))
    return failure();
  if (getGateWGrad() &&
      (failed(env.bind("gate_w_grad", getGateWGrad().getType(), {"Dv"})) ||
       failed(env.bind("gate_b_grad", getGateBGrad().getType(), {"1"}))))
    return failure();
  return success();
}

LogicalResult ShortConvGradOp::verify() {
  ShapeEnv env(*this);
  return verifyShortConvPiece(*this, env, getInput(), getKernel());
}

LogicalResult L2NormGradOp::verify() {
  return verifyFiniteAttr(*this, "eps", getEps().convertToDouble(), true);
}

LogicalResult LogSumExpOp::verify() {
  ShapeEnv env(*this);
  if (failed(env.bind("input", getInput().getType(), {"B", "H", "T", "S"})))
    return failure();
  return env.bind("result", getResult().getType(), {"B", "H", "T"});
}

//===----------------------------------------------------------------------===//
// Vector-Jacobian products: the forward's checks, then the cotangent and
// one gradient per differentiable operand
//===----------------------------------------------------------------------===//

double ScoresGradOp::getScaleOrDefault() { return scaleOrDefault(*this); }

LogicalResult ScoresGradOp::verify() {
  ShapeEnv env(*this);
  if (failed(verifyScoresOperands(*this, env)) ||
      failed(env.bind("grad", getGrad().getType(), {"B", "Hq", "T", "S"})))
    return failure();
  if (static_cast<bool>(getDw()) != static_cast<bool>(getW()) ||
      static_cast<bool>(getDg()) != static_cast<bool>(getG()))
    return emitOpError() << "results must be (dq, dk"
                         << (getW() ? ", dw, dbeta" : "")
                         << (getG() ? ", dg" : "")
                         << "), one per differentiable operand, got "
                         << getNumResults() << " results";
  if (failed(verifyGradResult(*this, env, "dq", getDq(), "q", getQ(),
                              {"B", "Hq", "T", "D"})) ||
      failed(verifyGradResult(*this, env, "dk", getDk(), "k", getK(),
                              {"B", "Hk", "S", "D"})))
    return failure();
  if (getW() && (failed(verifyGradResult(*this, env, "dw", getDw(), "w", getW(),
                                         {"B", "Hk", "S", "D"})) ||
                 failed(verifyGradResult(*this, env, "dbeta", getDbeta(),
                                         "beta", getBeta(), {"B", "Hk", "S"}))))
    return failure();
  if (getG())
    return verifyGradResult(*this, env, "dg", getDg(), "g", getG(),
                            {"B", "Hq", "S"});
  return success();
}

LogicalResult KqConvGradOp::verify() {
  ShapeEnv env(*this);
  if (failed(verifyKqConvOperands(*this, env, getInput(), getKernel(),
                                  getCuSeqlens())) ||
      failed(env.bind("grad", getGrad().getType(), {"B", "H", "T", "S"})) ||
      failed(verifyGradResult(*this, env, "dx", getDx(), "input", getInput(),
                              {"B", "H", "T", "S"})))
    return failure();
  return verifyGradResult(*this, env, "dkernel", getDkernel(), "kernel",
                          getKernel(), {"H", "kernel.c_q", "kernel.c_k"});
}

LogicalResult HeadMixGradOp::verify() {
  ShapeEnv env(*this);
  if (failed(verifyHeadMixOperands(*this, env, getInput(), getWeight(),
                                   getCuSeqlens())) ||
      failed(env.bind("grad", getGrad().getType(), {"B", "H", "T", "S"})) ||
      failed(verifyGradResult(*this, env, "dx", getDx(), "input", getInput(),
                              {"B", "H", "T", "S"})))
    return failure();
  return verifyGradResult(*this, env, "dweight", getDweight(), "weight",
                          getWeight(), {"H", mixGroupDim(getWeight())});
}
