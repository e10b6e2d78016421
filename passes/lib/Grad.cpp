//===- Grad.cpp - attn-grad: a function's training pair -------------------===//
//
// Reverse mode over the op chain: the backward recomputes the forward and
// asks each op for its VJP (VJPOpInterface). docs/training.md.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGRAD
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

bool isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

/// Clones `f` as `name` next to it, with every attn.attention expanded into
/// its chain (the only backward there is today runs op by op).
FailureOr<func::FuncOp> expandedClone(func::FuncOp f, StringRef name) {
  OpBuilder b(f->getContext());
  b.setInsertionPointAfter(f);
  auto clone = cast<func::FuncOp>(b.clone(*f));
  clone.setSymName(name);
  clone.setPublic();
  RewritePatternSet patterns(f->getContext());
  populateExpandAttentionPatterns(patterns);
  if (failed(applyPatternsGreedily(clone, std::move(patterns))))
    return clone.emitError("attn-grad: could not expand attn.attention");
  return clone;
}

/// Zeros of `like`'s type (the gradient of an argument the result does not
/// depend on).
Value zerosLike(OpBuilder &b, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(b, loc, like, i));
  Value empty = tensor::EmptyOp::create(b, loc, type, dyn);
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// Appends to `f` the row log-sum-exp of every softmax's input and returns
/// their types in program order.
SmallVector<Type> saveLogSumExps(func::FuncOp f) {
  SmallVector<Value> lses;
  f.walk([&](SoftmaxOp sm) {
    OpBuilder b(sm);
    auto in = cast<RankedTensorType>(sm.getInput().getType());
    auto type =
        RankedTensorType::get(in.getShape().take_front(3), in.getElementType());
    lses.push_back(LogSumExpOp::create(b, sm.getLoc(), type, sm.getInput()));
  });
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  ret.getOperandsMutable().append(lses);
  SmallVector<Type> types;
  for (Value v : lses)
    types.push_back(v.getType());
  SmallVector<Type> results(f.getResultTypes());
  results.append(types);
  f.setType(FunctionType::get(f->getContext(), f.getArgumentTypes(), results));
  return types;
}

/// Turns `g` (a copy of the forward) into the backward: arguments
/// (args, saved, dO), the VJPs of its ops in reverse, one result per float
/// argument.
LogicalResult buildBackward(func::FuncOp g, ArrayRef<Type> saved) {
  Block &body = g.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value out = ret.getOperand(0);
  unsigned numArgs = body.getNumArguments();
  Location loc = g.getLoc();
  for (Type t : saved)
    body.addArgument(t, loc);
  Value dO = body.addArgument(out.getType(), loc);

  DenseMap<Value, Value> cot;
  cot[out] = dO;
  OpBuilder b(ret);
  auto accumulate = [&](Value v, Value c) {
    auto [it, fresh] = cot.try_emplace(v, c);
    if (!fresh)
      it->second = arith::AddFOp::create(b, loc, it->second, c);
  };
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    if (op->getNumResults() != 1 || !cot.count(op->getResult(0)))
      continue;
    auto vjp = dyn_cast<VJPOpInterface>(op);
    if (!vjp)
      return op->emitError("attn-grad: no gradient for '")
             << op->getName() << "'";
    SmallVector<Value> cots = vjp.buildVJP(b, cot.lookup(op->getResult(0)));
    if (cots.size() != op->getNumOperands())
      return op->emitError("attn-grad: the VJP of '")
             << op->getName() << "' gave " << cots.size() << " cotangents for "
             << op->getNumOperands() << " operands";
    for (auto [operand, c] : llvm::zip(op->getOperands(), cots))
      if (c)
        accumulate(operand, c);
  }

  SmallVector<Value> grads;
  SmallVector<int64_t> of;
  for (unsigned i = 0; i < numArgs; ++i) {
    Value arg = body.getArgument(i);
    if (!isFloatTensor(arg.getType()))
      continue;
    Value c = cot.lookup(arg);
    grads.push_back(c ? c : zerosLike(b, loc, arg));
    of.push_back(i);
  }
  func::ReturnOp::create(b, ret.getLoc(), grads);
  ret.erase();
  SmallVector<Type> types;
  for (Value v : grads)
    types.push_back(v.getType());
  g.setType(FunctionType::get(g->getContext(), body.getArgumentTypes(), types));
  g->setAttr("attn.grad_args", b.getDenseI64ArrayAttr(of));
  return success();
}

LogicalResult deriveTrainingPair(func::FuncOp f) {
  if (f.getNumResults() != 1 || !isFloatTensor(f.getResultTypes()[0]))
    return f.emitError("attn-grad: @")
           << f.getSymName() << " must return one float tensor (it returns "
           << f.getNumResults() << " values)";
  auto module = f->getParentOfType<ModuleOp>();
  std::string fwdName = (f.getSymName() + "_fwd").str();
  std::string gradName = (f.getSymName() + "_grad").str();
  for (StringRef name : {StringRef(fwdName), StringRef(gradName)})
    if (module.lookupSymbol(name))
      return f.emitError("attn-grad: @")
             << name << " exists already; rename it or @" << f.getSymName();
  f.emitRemark("attn-grad: no fused backward yet: @")
      << fwdName << " and @" << gradName
      << " run the op chain through the reference lowering";

  FailureOr<func::FuncOp> fwd = expandedClone(f, fwdName);
  if (failed(fwd))
    return failure();
  // The backward recomputes the expanded forward: a copy before the LSEs.
  OpBuilder b(f->getContext());
  b.setInsertionPointAfter(*fwd);
  auto grad = cast<func::FuncOp>(b.clone(**fwd));
  grad.setSymName(gradName);
  SmallVector<Type> saved = saveLogSumExps(*fwd);
  auto of = FlatSymbolRefAttr::get(f.getSymNameAttr());
  (*fwd)->setAttr("attn.forward_of", of);
  grad->setAttr("attn.grad_of", of);
  return buildBackward(grad, saved);
}

struct AttnGradPass : attn::impl::AttnGradBase<AttnGradPass> {
  using AttnGradBase::AttnGradBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> todo;
    for (const std::string &name : functions) {
      auto f = module.lookupSymbol<func::FuncOp>(name);
      if (!f || f.isDeclaration()) {
        module.emitError("attn-grad: no function @") << name;
        return signalPassFailure();
      }
      todo.push_back(f);
    }
    if (functions.empty())
      for (auto f : module.getOps<func::FuncOp>())
        if (!f.isDeclaration() && !f->hasAttr("attn.grad_of") &&
            !f->hasAttr("attn.forward_of") &&
            f.walk([](Operation *op) {
               return isa<AttnDialect>(op->getDialect())
                          ? WalkResult::interrupt()
                          : WalkResult::advance();
             }).wasInterrupted())
          todo.push_back(f);
    for (func::FuncOp f : todo)
      if (failed(deriveTrainingPair(f)))
        return signalPassFailure();
  }
};

} // namespace
