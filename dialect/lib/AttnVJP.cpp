//===- AttnVJP.cpp - each attn op's vector-Jacobian product ---------------===//
//
// VJPOpInterface for the forward ops: each emits its `*_grad` op (or the
// inverse rotation for rope) and hands back one cotangent per operand. The
// formulas are on the grad ops (AttnOps.td); docs/training.md says how
// `attn-grad` strings them together.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

/// The type of an optional operand, or null when it is absent (an absent
/// optional result of the grad op).
static Type typeOrNull(Value v) { return v ? v.getType() : Type(); }

SmallVector<Value> RopeOp::buildVJP(OpBuilder &b, Value grad) {
  // A rotation is orthogonal: its transpose is the opposite rotation.
  auto inverse = RopeOp::create(
      b, getLoc(), grad.getType(), grad, getPositions(), getStyleAttr(),
      getThetaAttr(), getRotaryDimAttr(), getOffsetAttr(), b.getUnitAttr());
  SmallVector<Value> cots = {inverse.getResult()};
  if (getPositions())
    cots.push_back(Value()); // integer positions: not differentiable
  return cots;
}

SmallVector<Value> ScoresOp::buildVJP(OpBuilder &b, Value grad) {
  auto g = ScoresGradOp::create(
      b, getLoc(), getQ().getType(), getK().getType(), typeOrNull(getW()),
      typeOrNull(getBeta()), typeOrNull(getG()), getQ(), getK(), getW(),
      getBeta(), getG(), getCuSeqlens(), grad, getGateScaledAttr(),
      getMaskAttr(), getWindowAttr(), getScaleAttr());
  // One cotangent per operand present: q, k, [w, beta], [g], [cu_seqlens].
  SmallVector<Value> cots = {g.getDq(), g.getDk()};
  if (getW())
    cots.append({g.getDw(), g.getDbeta()});
  if (getG())
    cots.push_back(g.getDg());
  if (getCuSeqlens())
    cots.push_back(Value()); // integer offsets: not differentiable
  return cots;
}

SmallVector<Value> KqConvOp::buildVJP(OpBuilder &b, Value grad) {
  auto g = KqConvGradOp::create(b, getLoc(), getInput().getType(),
                                getKernel().getType(), getStage(), getInput(),
                                getKernel(), grad, getCuSeqlens());
  SmallVector<Value> cots = {g.getDx(), g.getDkernel()};
  if (getCuSeqlens())
    cots.push_back(Value()); // integer offsets: not differentiable
  return cots;
}

SmallVector<Value> HeadMixOp::buildVJP(OpBuilder &b, Value grad) {
  auto g = HeadMixGradOp::create(b, getLoc(), getInput().getType(),
                                 getWeight().getType(), getStage(), getInput(),
                                 getWeight(), grad, getCuSeqlens());
  SmallVector<Value> cots = {g.getDx(), g.getDweight()};
  if (getCuSeqlens())
    cots.push_back(Value()); // integer offsets: not differentiable
  return cots;
}

SmallVector<Value> SoftmaxOp::buildVJP(OpBuilder &b, Value grad) {
  // The softmax's VJP is stated in terms of its output.
  auto g = SoftmaxGradOp::create(b, getLoc(), getType(), getResult(), grad);
  return {g.getResult()};
}

SmallVector<Value> WeightedSumOp::buildVJP(OpBuilder &b, Value grad) {
  auto g =
      WeightedSumGradOp::create(b, getLoc(), getProbs().getType(),
                                getV().getType(), getProbs(), getV(), grad);
  return {g.getProbsGrad(), g.getVGrad()};
}

SmallVector<Value> HeadNormOp::buildVJP(OpBuilder &b, Value grad) {
  auto g = HeadNormGradOp::create(
      b, getLoc(), getInput().getType(), getGamma().getType(),
      typeOrNull(getGateW()), typeOrNull(getGateB()), getInput(), getGamma(),
      getGateW(), getGateB(), grad, getEpsAttr());
  SmallVector<Value> cots = {g.getInputGrad(), g.getGammaGrad()};
  if (getGateW())
    cots.append({g.getGateWGrad(), g.getGateBGrad()});
  return cots;
}

SmallVector<Value> ShortConvOp::buildVJP(OpBuilder &b, Value grad) {
  auto g = ShortConvGradOp::create(b, getLoc(), getInput().getType(),
                                   getKernel().getType(), getInput(),
                                   getKernel(), grad, getSiluAttr());
  return {g.getInputGrad(), g.getKernelGrad()};
}

SmallVector<Value> L2NormOp::buildVJP(OpBuilder &b, Value grad) {
  auto g = L2NormGradOp::create(b, getLoc(), getType(), getInput(), grad,
                                getEpsAttr());
  return {g.getResult()};
}
