//===- ProgramOracle.cpp - run an attn program on the fp64 oracle ---------===//

#include "ProgramOracle.h"

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

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

Expected<Tensor> evalOp(Operation *op, const Env &env) {
  auto in = [&](Value v) -> const Tensor & { return *env.get(v); };
  if (auto o = dyn_cast<mlir::attn::RopeOp>(op)) {
    std::vector<int64_t> pos;
    if (o.getPositions())
      pos = positionsOf(in(o.getPositions()));
    return rope(in(o.getInput()), o.getTheta().convertToDouble(),
                o.getRotaryDimOrHeadDim(), toStyle(o.getStyle()), o.getOffset(),
                o.getPositions() ? &pos : nullptr);
  }
  if (auto o = dyn_cast<mlir::attn::ScoresOp>(op))
    return scores(in(o.getQ()), in(o.getK()), o.getScaleOrDefault(),
                  env.get(o.getW()), env.get(o.getBeta()), env.get(o.getG()),
                  o.getGateScaled(), toMask(o.getMask()),
                  o.getWindow().value_or(0));
  if (auto o = dyn_cast<mlir::attn::KqConvOp>(op))
    return kqConv(in(o.getInput()), in(o.getKernel()), toStage(o.getStage()));
  if (auto o = dyn_cast<mlir::attn::HeadMixOp>(op))
    return headMix(in(o.getInput()), in(o.getWeight()), toStage(o.getStage()));
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
    AttentionConfig cfg;
    cfg.scale = o.getScaleOrDefault();
    cfg.mask = toMask(o.getMask());
    cfg.window = o.getWindow().value_or(0);
    if (auto theta = o.getRopeTheta()) {
      cfg.rope = true;
      cfg.ropeTheta = theta->convertToDouble();
      cfg.ropeDim = o.getRopeDim().value_or(0);
      cfg.ropeStyle = toStyle(o.getRopeStyle());
      cfg.ropeOffset = o.getRopeOffset();
    }
    cfg.gateScaled = o.getGateScaled();
    cfg.normEps = o.getNormEps().convertToDouble();
    if (const Tensor *w = env.get(o.getHeadMixPre()))
      cfg.preGroup = w->shape[1];
    if (const Tensor *w = env.get(o.getHeadMixPost()))
      cfg.postGroup = w->shape[1];
    const Tensor *q = &in(o.getQ()), *k = &in(o.getK());
    Tensor qRot, kRot;
    if (auto qOffset = o.getRopeQOffset()) {
      // Queries at explicit positions: rotate q and k here, with the
      // oracle's rope, and run the rest without RoPE.
      int64_t dim = cfg.ropeDim ? cfg.ropeDim : q->shape[3];
      qRot = rope(*q, cfg.ropeTheta, dim, cfg.ropeStyle, *qOffset);
      kRot = rope(*k, cfg.ropeTheta, dim, cfg.ropeStyle, cfg.ropeOffset);
      q = &qRot;
      k = &kRot;
      cfg.rope = false;
    }
    return attention(cfg, *q, *k, in(o.getV()), env.get(o.getW()),
                     env.get(o.getBeta()), env.get(o.getG()),
                     env.get(o.getKqConvPre()), env.get(o.getHeadMixPre()),
                     env.get(o.getKqConvPost()), env.get(o.getHeadMixPost()),
                     env.get(o.getNorm()), env.get(o.getNormGateW()),
                     env.get(o.getNormGateB()));
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
  Positions
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
    }
    if (auto o = dyn_cast<mlir::attn::AttentionOp>(user)) {
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

Expected<Tensor> evaluate(func::FuncOp func, llvm::ArrayRef<Tensor> inputs) {
  Block &body = func.getBody().front();
  if (inputs.size() != body.getNumArguments())
    return createStringError(
        "the oracle got " + std::to_string(inputs.size()) + " inputs for " +
        std::to_string(body.getNumArguments()) + " arguments");
  Env env;
  for (auto [arg, t] : llvm::zip(body.getArguments(), inputs))
    env.set(arg, t);
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (ret.getNumOperands() != 1)
        return createStringError("the oracle expects exactly one result");
      return *env.get(ret.getOperand(0));
    }
    auto result = evalOp(&op, env);
    if (!result)
      return result.takeError();
    env.set(op.getResult(0), std::move(*result));
  }
  return createStringError("function has no return");
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
