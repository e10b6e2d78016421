//===- ProgramOracle.cpp - run an attn program on the fp64 oracle ---------===//

#include "ProgramOracle.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

using namespace mlir;
using llvm::createStringError;
using llvm::Expected;

namespace attn::ref {

namespace {

Mask toMask(mlir::attn::MaskKind k) {
  switch (k) {
  case mlir::attn::MaskKind::causal:
    return Mask::Causal;
  case mlir::attn::MaskKind::none:
    return Mask::None;
  case mlir::attn::MaskKind::sliding_window:
    return Mask::SlidingWindow;
  }
  return Mask::Causal;
}

RopeStyle toStyle(mlir::attn::RopeStyle s) {
  return s == mlir::attn::RopeStyle::half ? RopeStyle::Half
                                          : RopeStyle::Interleaved;
}

Stage toStage(mlir::attn::Stage s) {
  return s == mlir::attn::Stage::pre ? Stage::Pre : Stage::Post;
}

std::string opName(Operation *op) { return op->getName().getStringRef().str(); }

/// Values of the program, as oracle tensors.
class Env {
public:
  const Tensor *get(Value v) const {
    if (!v)
      return nullptr;
    auto it = values.find(v);
    return it == values.end() ? nullptr : &it->second;
  }
  void set(Value v, Tensor t) { values[v] = std::move(t); }

private:
  llvm::DenseMap<Value, Tensor> values;
};

std::vector<int64_t> positionsOf(const Tensor &t) {
  std::vector<int64_t> p;
  for (double d : t.data)
    p.push_back(static_cast<int64_t>(d));
  return p;
}

/// The offsets of `o`'s cu_seqlens operand in `storage`, or null without
/// one.
template <typename OpT>
const std::vector<int64_t> *packedOffsets(OpT o, const Env &env,
                                          std::vector<int64_t> &storage) {
  if (!o.getCuSeqlens())
    return nullptr;
  storage = positionsOf(*env.get(o.getCuSeqlens()));
  return &storage;
}

/// An attn.attention op as the oracle runs it: its configuration and
/// operands. With rope_q_offset (queries at explicit positions) q and k are
/// rotated here, by the oracle's rope, and the rest runs without RoPE.
struct AttentionCall {
  AttentionConfig cfg;
  std::optional<int64_t> qOffset; ///< set: q and k are qRot and kRot
  int64_t ropeDim = 0;
  Tensor qRot, kRot;
  const Tensor *q, *k, *v, *w, *beta, *g, *thetaPre, *wPre, *thetaPost, *wPost,
      *gamma, *gateW, *gateB;

  AttentionCall(mlir::attn::AttentionOp o, const Env &env)
      : q(env.get(o.getQ())), k(env.get(o.getK())), v(env.get(o.getV())),
        w(env.get(o.getW())), beta(env.get(o.getBeta())), g(env.get(o.getG())),
        thetaPre(env.get(o.getKqConvPre())), wPre(env.get(o.getHeadMixPre())),
        thetaPost(env.get(o.getKqConvPost())),
        wPost(env.get(o.getHeadMixPost())), gamma(env.get(o.getNorm())),
        gateW(env.get(o.getNormGateW())), gateB(env.get(o.getNormGateB())) {
    cfg.scale = o.getScaleOrDefault();
    cfg.mask = toMask(o.getMask());
    cfg.window = o.getWindow().value_or(0);
    if (Value cu = o.getCuSeqlens())
      cfg.cuSeqlens = positionsOf(*env.get(cu));
    if (auto theta = o.getRopeTheta()) {
      cfg.rope = true;
      cfg.ropeTheta = theta->convertToDouble();
      cfg.ropeDim = o.getRopeDim().value_or(0);
      cfg.ropeStyle = toStyle(o.getRopeStyle());
      cfg.ropeOffset = o.getRopeOffset();
    }
    cfg.gateScaled = o.getGateScaled();
    cfg.normEps = o.getNormEps().convertToDouble();
    if (wPre)
      cfg.preGroup = wPre->shape[1];
    if (wPost)
      cfg.postGroup = wPost->shape[1];
    if ((qOffset = o.getRopeQOffset())) {
      ropeDim = cfg.ropeDim ? cfg.ropeDim : q->shape[3];
      qRot = rope(*q, cfg.ropeTheta, ropeDim, cfg.ropeStyle, *qOffset);
      kRot = rope(*k, cfg.ropeTheta, ropeDim, cfg.ropeStyle, cfg.ropeOffset);
      q = &qRot;
      k = &kRot;
      cfg.rope = false;
    }
  }
  // q and k may point into this object.
  AttentionCall(const AttentionCall &) = delete;
  AttentionCall &operator=(const AttentionCall &) = delete;
};

Expected<Tensor> evalOp(Operation *op, const Env &env) {
  auto in = [&](Value v) -> const Tensor & { return *env.get(v); };
  if (auto o = dyn_cast<mlir::attn::RopeOp>(op)) {
    std::vector<int64_t> pos;
    if (o.getPositions())
      pos = positionsOf(in(o.getPositions()));
    // The inverse rotation is the oracle's ropeGrad.
    auto rotate = o.getInverse() ? ropeGrad : rope;
    return rotate(in(o.getInput()), o.getTheta().convertToDouble(),
                  o.getRotaryDimOrHeadDim(), toStyle(o.getStyle()),
                  o.getOffset(), o.getPositions() ? &pos : nullptr);
  }
  std::vector<int64_t> cu; // packed sequences' offsets (packedOffsets)
  if (auto o = dyn_cast<mlir::attn::ScoresOp>(op))
    return scores(in(o.getQ()), in(o.getK()), o.getScaleOrDefault(),
                  env.get(o.getW()), env.get(o.getBeta()), env.get(o.getG()),
                  o.getGateScaled(), toMask(o.getMask()),
                  o.getWindow().value_or(0), packedOffsets(o, env, cu));
  if (auto o = dyn_cast<mlir::attn::KqConvOp>(op))
    return kqConv(in(o.getInput()), in(o.getKernel()), toStage(o.getStage()),
                  packedOffsets(o, env, cu));
  if (auto o = dyn_cast<mlir::attn::HeadMixOp>(op))
    return headMix(in(o.getInput()), in(o.getWeight()), toStage(o.getStage()),
                   packedOffsets(o, env, cu));
  if (auto o = dyn_cast<mlir::attn::SoftmaxOp>(op))
    return softmax(in(o.getInput()));
  if (auto o = dyn_cast<mlir::attn::WeightedSumOp>(op))
    return weightedSum(in(o.getProbs()), in(o.getV()));
  if (auto o = dyn_cast<mlir::attn::HeadNormOp>(op))
    return headNorm(in(o.getInput()), in(o.getGamma()),
                    o.getEps().convertToDouble(), env.get(o.getGateW()),
                    env.get(o.getGateB()));
  if (auto o = dyn_cast<mlir::attn::ShortConvOp>(op))
    return shortConv(in(o.getInput()), in(o.getKernel()), o.getSilu());
  if (auto o = dyn_cast<mlir::attn::L2NormOp>(op))
    return l2norm(in(o.getInput()), o.getEps().convertToDouble());
  if (auto o = dyn_cast<mlir::attn::AttentionOp>(op)) {
    AttentionCall c(o, env);
    return attention(c.cfg, *c.q, *c.k, *c.v, c.w, c.beta, c.g, c.thetaPre,
                     c.wPre, c.thetaPost, c.wPost, c.gamma, c.gateW, c.gateB);
  }
  return createStringError("the fp64 oracle cannot evaluate '" + opName(op) +
                           "'");
}

/// How an argument is used, which decides its random distribution.
enum class Role {
  Generic,
  PathW,
  Beta,
  Gate,
  KqKernel,
  MixWeight,
  ConvKernel,
  NormGamma,
  Small,
  Positions,
  CuSeqlens
};

Role roleOf(BlockArgument arg) {
  for (OpOperand &use : arg.getUses()) {
    Operation *user = use.getOwner();
    Value v = arg;
    if (auto o = dyn_cast<mlir::attn::ScoresOp>(user)) {
      if (v == o.getW())
        return Role::PathW;
      if (v == o.getBeta())
        return Role::Beta;
      if (v == o.getG())
        return Role::Gate;
      if (v == o.getCuSeqlens())
        return Role::CuSeqlens;
    }
    if (auto o = dyn_cast<mlir::attn::AttentionOp>(user)) {
      if (v == o.getCuSeqlens())
        return Role::CuSeqlens;
      if (v == o.getW())
        return Role::PathW;
      if (v == o.getBeta())
        return Role::Beta;
      if (v == o.getG())
        return Role::Gate;
      if (v == o.getKqConvPre() || v == o.getKqConvPost())
        return Role::KqKernel;
      if (v == o.getHeadMixPre() || v == o.getHeadMixPost())
        return Role::MixWeight;
      if (v == o.getNorm())
        return Role::NormGamma;
      if (v == o.getNormGateW() || v == o.getNormGateB())
        return Role::Small;
    }
    if (isa<mlir::attn::KqConvOp>(user) && use.getOperandNumber() == 1)
      return Role::KqKernel;
    if (isa<mlir::attn::HeadMixOp>(user) && use.getOperandNumber() == 1)
      return Role::MixWeight;
    if (auto o = dyn_cast<mlir::attn::HeadNormOp>(user)) {
      if (v == o.getGamma())
        return Role::NormGamma;
      if (v == o.getGateW() || v == o.getGateB())
        return Role::Small;
    }
    if (auto o = dyn_cast<mlir::attn::RopeOp>(user))
      if (v == o.getPositions())
        return Role::Positions;
    if (isa<mlir::attn::ShortConvOp>(user) && use.getOperandNumber() == 1)
      return Role::ConvKernel;
  }
  return Role::Generic;
}

} // namespace

namespace {

/// Runs `func` on `inputs`, leaving every value in `env`; returns the
/// returned values.
Expected<SmallVector<Value>> run(func::FuncOp func,
                                 llvm::ArrayRef<Tensor> inputs, Env &env) {
  Block &body = func.getBody().front();
  if (inputs.size() != body.getNumArguments())
    return createStringError(
        "the oracle got " + std::to_string(inputs.size()) + " inputs for " +
        std::to_string(body.getNumArguments()) + " arguments");
  for (auto [arg, t] : llvm::zip(body.getArguments(), inputs))
    env.set(arg, t);
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (ret.getNumOperands() == 0)
        return createStringError("the oracle expects at least one result");
      return SmallVector<Value>(ret.getOperands());
    }
    auto result = evalOp(&op, env);
    if (!result)
      return result.takeError();
    env.set(op.getResult(0), std::move(*result));
  }
  return createStringError("function has no return");
}

/// The gradients of the loss w.r.t. the program's values, summed over
/// every use of a value.
class Adjoints {
public:
  void add(Value v, Tensor t) {
    if (!v)
      return;
    auto [it, inserted] = grads.try_emplace(v, std::move(t));
    if (!inserted)
      for (size_t n = 0; n < it->second.data.size(); ++n)
        it->second.data[n] += t.data[n];
  }
  const Tensor *get(Value v) const {
    auto it = grads.find(v);
    return it == grads.end() ? nullptr : &it->second;
  }

private:
  llvm::DenseMap<Value, Tensor> grads;
};

/// Adds the gradients of `op`'s operands, given `dy`, the gradient of its
/// result: the Oracle.h gradient of the function evalOp runs for it.
llvm::Error gradOp(Operation *op, const Env &env, const Tensor &dy,
                   Adjoints &adj) {
  auto in = [&](Value v) -> const Tensor & { return *env.get(v); };
  std::vector<int64_t> cu; // packed sequences' offsets (packedOffsets)
  if (auto o = dyn_cast<mlir::attn::RopeOp>(op)) {
    std::vector<int64_t> pos;
    if (o.getPositions())
      pos = positionsOf(in(o.getPositions()));
    // The transpose of a rotation is the opposite rotation, both ways.
    auto transpose = o.getInverse() ? rope : ropeGrad;
    adj.add(o.getInput(),
            transpose(dy, o.getTheta().convertToDouble(),
                      o.getRotaryDimOrHeadDim(), toStyle(o.getStyle()),
                      o.getOffset(), o.getPositions() ? &pos : nullptr));
  } else if (auto o = dyn_cast<mlir::attn::ScoresOp>(op)) {
    ScoresGrad d =
        scoresGrad(dy, in(o.getQ()), in(o.getK()), o.getScaleOrDefault(),
                   env.get(o.getW()), env.get(o.getBeta()), env.get(o.getG()),
                   o.getGateScaled(), toMask(o.getMask()),
                   o.getWindow().value_or(0), packedOffsets(o, env, cu));
    adj.add(o.getQ(), std::move(d.q));
    adj.add(o.getK(), std::move(d.k));
    adj.add(o.getW(), std::move(d.w));
    adj.add(o.getBeta(), std::move(d.beta));
    adj.add(o.getG(), std::move(d.g));
  } else if (auto o = dyn_cast<mlir::attn::KqConvOp>(op)) {
    KqConvGrad d = kqConvGrad(dy, in(o.getInput()), in(o.getKernel()),
                              toStage(o.getStage()), packedOffsets(o, env, cu));
    adj.add(o.getInput(), std::move(d.x));
    adj.add(o.getKernel(), std::move(d.theta));
  } else if (auto o = dyn_cast<mlir::attn::HeadMixOp>(op)) {
    HeadMixGrad d =
        headMixGrad(dy, in(o.getInput()), in(o.getWeight()),
                    toStage(o.getStage()), packedOffsets(o, env, cu));
    adj.add(o.getInput(), std::move(d.x));
    adj.add(o.getWeight(), std::move(d.W));
  } else if (auto o = dyn_cast<mlir::attn::SoftmaxOp>(op)) {
    adj.add(o.getInput(), softmaxGrad(dy, in(o.getInput())));
  } else if (auto o = dyn_cast<mlir::attn::WeightedSumOp>(op)) {
    WeightedSumGrad d = weightedSumGrad(dy, in(o.getProbs()), in(o.getV()));
    adj.add(o.getProbs(), std::move(d.p));
    adj.add(o.getV(), std::move(d.v));
  } else if (auto o = dyn_cast<mlir::attn::HeadNormOp>(op)) {
    HeadNormGrad d = headNormGrad(dy, in(o.getInput()), in(o.getGamma()),
                                  o.getEps().convertToDouble(),
                                  env.get(o.getGateW()), env.get(o.getGateB()));
    adj.add(o.getInput(), std::move(d.o));
    adj.add(o.getGamma(), std::move(d.gamma));
    adj.add(o.getGateW(), std::move(d.gateW));
    adj.add(o.getGateB(), std::move(d.gateB));
  } else if (auto o = dyn_cast<mlir::attn::ShortConvOp>(op)) {
    ShortConvGrad d =
        shortConvGrad(dy, in(o.getInput()), in(o.getKernel()), o.getSilu());
    adj.add(o.getInput(), std::move(d.x));
    adj.add(o.getKernel(), std::move(d.kernel));
  } else if (auto o = dyn_cast<mlir::attn::L2NormOp>(op)) {
    adj.add(o.getInput(),
            l2normGrad(dy, in(o.getInput()), o.getEps().convertToDouble()));
  } else if (auto o = dyn_cast<mlir::attn::AttentionOp>(op)) {
    AttentionCall c(o, env);
    AttentionGrad d =
        attentionGrad(dy, c.cfg, *c.q, *c.k, *c.v, c.w, c.beta, c.g, c.thetaPre,
                      c.wPre, c.thetaPost, c.wPost, c.gamma, c.gateW, c.gateB);
    if (c.qOffset) { // back through the rotation AttentionCall applied
      d.q = ropeGrad(d.q, c.cfg.ropeTheta, c.ropeDim, c.cfg.ropeStyle,
                     *c.qOffset);
      d.k = ropeGrad(d.k, c.cfg.ropeTheta, c.ropeDim, c.cfg.ropeStyle,
                     c.cfg.ropeOffset);
    }
    adj.add(o.getQ(), std::move(d.q));
    adj.add(o.getK(), std::move(d.k));
    adj.add(o.getV(), std::move(d.v));
    adj.add(o.getW(), std::move(d.w));
    adj.add(o.getBeta(), std::move(d.beta));
    adj.add(o.getG(), std::move(d.g));
    adj.add(o.getKqConvPre(), std::move(d.thetaPre));
    adj.add(o.getHeadMixPre(), std::move(d.wPre));
    adj.add(o.getKqConvPost(), std::move(d.thetaPost));
    adj.add(o.getHeadMixPost(), std::move(d.wPost));
    adj.add(o.getNorm(), std::move(d.gamma));
    adj.add(o.getNormGateW(), std::move(d.gateW));
    adj.add(o.getNormGateB(), std::move(d.gateB));
  } else {
    return createStringError("the fp64 oracle cannot differentiate '" +
                             opName(op) + "'");
  }
  return llvm::Error::success();
}

} // namespace

Expected<std::vector<Tensor>> evaluateAll(func::FuncOp func,
                                          llvm::ArrayRef<Tensor> inputs) {
  Env env;
  auto results = run(func, inputs, env);
  if (!results)
    return results.takeError();
  std::vector<Tensor> out;
  for (Value v : *results)
    out.push_back(*env.get(v));
  return out;
}

Expected<Tensor> evaluate(func::FuncOp func, llvm::ArrayRef<Tensor> inputs) {
  if (func.getNumResults() != 1)
    return createStringError("evaluate takes a one-result function, @" +
                             func.getSymName().str() + " returns " +
                             std::to_string(func.getNumResults()) +
                             ": use evaluateAll");
  auto all = evaluateAll(func, inputs);
  if (!all)
    return all.takeError();
  return std::move(all->front());
}

Expected<std::vector<std::optional<Tensor>>>
evaluateGrad(func::FuncOp func, llvm::ArrayRef<Tensor> inputs,
             const Tensor &dO) {
  Env env;
  auto results = run(func, inputs, env);
  if (!results)
    return results.takeError();
  if (results->size() != 1)
    return createStringError("evaluateGrad takes a one-result function, @" +
                             func.getSymName().str() + " returns " +
                             std::to_string(results->size()));
  Value *result = &results->front();
  if (env.get(*result)->shape != dO.shape)
    return createStringError("dO's shape does not match the result's");
  Adjoints adj;
  adj.add(*result, dO);
  Block &body = func.getBody().front();
  // Reverse order: every use of an op's result comes after the op, so its
  // gradient is complete when the op is reached. Ops that do not reach the
  // result have none and are skipped.
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    const Tensor *dy =
        op.getNumResults() == 1 ? adj.get(op.getResult(0)) : nullptr;
    if (!dy)
      continue;
    if (llvm::Error err = gradOp(&op, env, *dy, adj))
      return std::move(err);
  }
  std::vector<std::optional<Tensor>> grads;
  for (BlockArgument arg : body.getArguments()) {
    if (!isa<FloatType>(getElementTypeOrSelf(arg.getType()))) {
      grads.push_back(std::nullopt); // integer: RoPE positions
      continue;
    }
    const Tensor *d = adj.get(arg);
    grads.push_back(d ? *d : Tensor::zeros(env.get(arg)->shape));
  }
  return grads;
}

TrainingBounds trainingBounds(func::FuncOp func) {
  std::vector<bool> mapSum(func.getNumArguments(), false);
  func.walk([&](Operation *op) {
    SmallVector<Value> params;
    if (auto c = dyn_cast<mlir::attn::KqConvOp>(op))
      params = {c.getKernel()};
    else if (auto m = dyn_cast<mlir::attn::HeadMixOp>(op))
      params = {m.getWeight()};
    else if (auto n = dyn_cast<mlir::attn::HeadNormOp>(op))
      params = {n.getGamma(), n.getGateW(), n.getGateB()};
    else if (auto a = dyn_cast<mlir::attn::AttentionOp>(op))
      params = {a.getKqConvPre(),   a.getHeadMixPre(), a.getKqConvPost(),
                a.getHeadMixPost(), a.getNorm(),       a.getNormGateW(),
                a.getNormGateB()};
    for (Value v : params)
      if (auto arg = dyn_cast_or_null<BlockArgument>(v))
        if (arg.getOwner() == &func.getBody().front())
          mapSum[arg.getArgNumber()] = true;
  });
  bool half = llvm::any_of(func.getArgumentTypes(), [](Type t) {
    Type e = getElementTypeOrSelf(t);
    return e.isF16() || e.isBF16();
  });
  bool mta = llvm::is_contained(mapSum, true);
  TrainingBounds b;
  if (!half) {
    for (bool m : mapSum)
      b.args.push_back(ErrorBound{false, m ? 1e-3 : 1e-5});
    return b;
  }
  b.output = mta ? ErrorBound{true, 2e-2, 1e-1}
                 : ErrorBound{true, kHalfRmsBound, kHalfRowBound};
  for (bool m : mapSum)
    b.args.push_back(!mta ? ErrorBound{true, 2e-2, 1e-1, kGradRowFloor}
                     : m  ? ErrorBound{true, 2.5e-1, 5e-1, kGradRowFloor}
                          : ErrorBound{true, 2e-2, 5e-1, kGradRowFloor});
  return b;
}

Tensor randomCotangent(const std::vector<int64_t> &shape, uint64_t seed) {
  return randn(shape, seed + 99);
}

Expected<std::vector<std::vector<int64_t>>>
randomInputShapes(func::FuncOp func, const RandomSpec &spec) {
  std::vector<std::vector<int64_t>> shapes;
  for (BlockArgument arg : func.getBody().front().getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return createStringError("argument " +
                               std::to_string(arg.getArgNumber()) +
                               " is not a ranked tensor");
    Role role = roleOf(arg);
    std::vector<int64_t> shape(type.getShape());
    int64_t rank = type.getRank();
    // Dynamic dims by convention; see RandomSpec.
    for (int64_t d = 0; d < rank; ++d) {
      if (!ShapedType::isDynamic(shape[d]))
        continue;
      if (role == Role::KqKernel || role == Role::MixWeight ||
          role == Role::ConvKernel)
        shape[d] = spec.heads;
      else if (role == Role::CuSeqlens)
        shape[d] = spec.sequences + 1;
      else if (rank >= 3)
        shape[d] = d == 0 ? spec.batch : d == 1 ? spec.heads : spec.seqLen;
      else if (rank == 2)
        shape[d] = spec.heads;
      else
        shape[d] = spec.seqLen;
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

Expected<std::vector<Tensor>> randomInputs(func::FuncOp func,
                                           const RandomSpec &spec) {
  std::vector<Tensor> out;
  uint64_t seed = spec.seed * 1000003ull + 17;
  auto shapes = randomInputShapes(func, spec);
  if (!shapes)
    return shapes.takeError();
  for (BlockArgument arg : func.getBody().front().getArguments()) {
    Role role = roleOf(arg);
    const std::vector<int64_t> &shape = (*shapes)[arg.getArgNumber()];
    uint64_t s = ++seed;
    Tensor t;
    switch (role) {
    case Role::PathW: {
      t = randn(shape, s);
      int64_t d = shape.back();
      for (size_t row = 0; row * d < t.data.size(); ++row) {
        double ss = 0;
        for (int64_t e = 0; e < d; ++e)
          ss += t.data[row * d + e] * t.data[row * d + e];
        for (int64_t e = 0; e < d; ++e)
          t.data[row * d + e] /= std::sqrt(ss);
      }
      break;
    }
    case Role::Beta:
      t = randUniform(shape, s, spec.betaLo, spec.betaHi);
      break;
    case Role::Gate: // log f, by default f in (0.9, 1): a realistic forget gate
      t = randUniform(shape, s, spec.fLo, spec.fHi);
      for (double &x : t.data)
        x = std::log(x);
      break;
    case Role::KqKernel: { // identity plus noise: delta at (c_q-1, centre)
      t = randn(shape, s, 0.1);
      int64_t cq = shape[1], ck = shape[2];
      for (int64_t h = 0; h < shape[0]; ++h)
        t.data[(h * cq + cq - 1) * ck + (ck - 1) / 2] += 1.0;
      break;
    }
    case Role::MixWeight: { // identity within each group plus noise
      t = randn(shape, s, 0.1);
      int64_t ch = shape[1];
      for (int64_t h = 0; h < shape[0]; ++h)
        t.data[h * ch + h % ch] += 1.0;
      break;
    }
    case Role::NormGamma:
      t = randn(shape, s, 0.1);
      for (double &x : t.data)
        x += 1.0;
      break;
    case Role::Small:
      t = randn(shape, s, 0.3);
      break;
    case Role::ConvKernel:
      t = randn(shape, s, 0.5);
      break;
    case Role::Positions:
      t = Tensor::zeros(shape);
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] = static_cast<double>(i);
      break;
    case Role::CuSeqlens: { // 0, sorted uniform cuts of [0, S], S
      t = randUniform(shape, s, 0.0, static_cast<double>(spec.seqLen + 1));
      for (double &x : t.data)
        x = std::floor(x);
      std::sort(t.data.begin(), t.data.end());
      t.data.front() = 0;
      t.data.back() = static_cast<double>(spec.seqLen);
      break;
    }
    case Role::Generic:
      t = randn(shape, s);
      break;
    }
    out.push_back(std::move(t));
  }
  return out;
}

Expected<Tensor> fromHost(const NpyArray &a) {
  Tensor t = Tensor::zeros(a.shape);
  for (size_t i = 0, n = a.numel(); i < n; ++i)
    t.data[i] = a.get(i);
  return t;
}

NpyArray toHost(const Tensor &t, DType dtype) {
  NpyArray a{dtype, t.shape,
             std::vector<uint8_t>(t.data.size() * dtypeSize(dtype))};
  for (size_t i = 0; i < t.data.size(); ++i)
    a.set(i, t.data[i]);
  return a;
}

} // namespace attn::ref
