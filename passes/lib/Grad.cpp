//===- Grad.cpp - attn-grad: a function's training pair -------------------===//
//
// Reverse mode over the function's ops: the backward recomputes the forward
// and asks each op for its VJP (VJPOpInterface); an attn.attention's is
// attn.attention_grad on the LSE the forward saves. docs/training.md.
//
//===----------------------------------------------------------------------===//

#include "Reverse.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/Passes.h"

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

/// Clones `f` as `name` next to it.
func::FuncOp cloneAs(func::FuncOp f, StringRef name) {
  OpBuilder b(f->getContext());
  b.setInsertionPointAfter(f);
  auto clone = cast<func::FuncOp>(b.clone(*f));
  clone.setSymName(name);
  clone.setPublic();
  return clone;
}

/// What the forward saves for the backward, in program order: the row
/// log-sum-exp of each attn.attention (its second result) and of each
/// softmax of an op chain.
SmallVector<Operation *> savingOps(func::FuncOp f) {
  SmallVector<Operation *> ops;
  f.walk([&](Operation *op) {
    if (isa<AttentionOp, SoftmaxOp>(op))
      ops.push_back(op);
  });
  return ops;
}

/// Makes `f` also return the saved state (savingOps) after its result and
/// returns its types.
SmallVector<Type> saveState(func::FuncOp f) {
  SmallVector<Value> saved;
  for (Operation *op : savingOps(f)) {
    OpBuilder b(op);
    if (auto sm = dyn_cast<SoftmaxOp>(op)) {
      auto in = cast<RankedTensorType>(sm.getInput().getType());
      auto type = RankedTensorType::get(in.getShape().take_front(3),
                                        in.getElementType());
      saved.push_back(LogSumExpOp::create(b, sm.getLoc(), type, sm.getInput()));
      continue;
    }
    auto att = cast<AttentionOp>(op);
    auto q = cast<RankedTensorType>(att.getQ().getType());
    auto lseType =
        RankedTensorType::get(q.getShape().take_front(3), b.getF32Type());
    auto withLse = AttentionOp::create(
        b, att.getLoc(), TypeRange{att.getResult().getType(), lseType},
        att->getOperands(), att.getProperties());
    att.getResult().replaceAllUsesWith(withLse.getResult());
    att.erase();
    saved.push_back(withLse.getLse());
  }
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  ret.getOperandsMutable().append(saved);
  SmallVector<Type> types;
  for (Value v : saved)
    types.push_back(v.getType());
  SmallVector<Type> results(f.getResultTypes());
  results.append(types);
  f.setType(FunctionType::get(f->getContext(), f.getArgumentTypes(), results));
  return types;
}

/// Turns `g` (a copy of the forward before saveState) into the backward:
/// arguments (args, the forward's result, saved, dO), the VJPs of its ops in
/// reverse, one result per float argument. An attn.attention's VJP is
/// attn.attention_grad on its saved LSE, and on the result argument where
/// the attention's result is the function's.
LogicalResult buildBackward(func::FuncOp g, ArrayRef<Type> saved) {
  Block &body = g.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value out = ret.getOperand(0);
  unsigned numArgs = body.getNumArguments();
  Location loc = g.getLoc();
  Value outArg = body.addArgument(out.getType(), loc);
  DenseMap<Operation *, Value> lseOf;
  for (auto [op, t] : llvm::zip(savingOps(g), saved))
    lseOf[op] = body.addArgument(t, loc);
  Value dO = body.addArgument(out.getType(), loc);

  OpBuilder b(ret);
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  auto attentionVJP = [&](Operation *op,
                          Value c) -> FailureOr<SmallVector<Value>> {
    auto att = dyn_cast<AttentionOp>(op);
    if (!att)
      return failure();
    Value o = att.getResult() == out ? outArg : att.getResult();
    SmallVector<Value> operands(att->getOperands());
    // One gradient per float operand; cu_seqlens (integer offsets, the last
    // operand) has none.
    SmallVector<Type> types;
    for (Value v : operands)
      if (v != att.getCuSeqlens())
        types.push_back(v.getType());
    operands.append({o, lseOf.lookup(op), c});
    auto grad = AttentionGradOp::create(b, att.getLoc(), types, operands,
                                        gradProperties(att.getProperties()));
    SmallVector<Value> cots(grad.getResults());
    if (att.getCuSeqlens())
      cots.push_back(Value());
    return cots;
  };
  FailureOr<DenseMap<Value, Value>> cot =
      reverseSweep(b, loc, forward, out, dO, attentionVJP);
  if (failed(cot))
    return failure();

  SmallVector<Value> grads;
  SmallVector<int64_t> of;
  for (unsigned i = 0; i < numArgs; ++i) {
    Value arg = body.getArgument(i);
    if (!isFloatTensor(arg.getType()))
      continue;
    Value c = cot->lookup(arg);
    grads.push_back(c ? c : zerosLike(b, loc, arg));
    of.push_back(i);
  }
  func::ReturnOp::create(b, ret.getLoc(), grads);
  ret.erase();
  // The recomputed forward ops the VJPs do not read (an attention whose
  // result is the output argument) go.
  for (Operation *op : llvm::reverse(forward))
    if (isOpTriviallyDead(op))
      op->erase();
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
  bool chain =
      f.walk([](Operation *op) {
         return isa<AttnDialect>(op->getDialect()) && !isa<AttentionOp>(op)
                    ? WalkResult::interrupt()
                    : WalkResult::advance();
       }).wasInterrupted();
  if (chain)
    f.emitRemark("attn-grad: @")
        << f.getSymName()
        << " has ops outside attn.attention (run attn-fuse first to fuse "
           "what it can): their VJPs run through the reference lowering";

  func::FuncOp fwd = cloneAs(f, fwdName);
  // The backward recomputes the forward: a copy before the saved state.
  func::FuncOp grad = cloneAs(fwd, gradName);
  SmallVector<Type> saved = saveState(fwd);
  auto of = FlatSymbolRefAttr::get(f.getSymNameAttr());
  fwd->setAttr("attn.forward_of", of);
  grad->setAttr("attn.grad_of", of);
  return buildBackward(grad, saved);
}

} // namespace

FailureOr<DenseMap<Value, Value>> mlir::attn::reverseSweep(
    OpBuilder &b, Location loc, ArrayRef<Operation *> ops, Value out,
    Value dOut,
    function_ref<FailureOr<SmallVector<Value>>(Operation *, Value)> custom) {
  DenseMap<Value, Value> cot;
  cot[out] = dOut;
  auto accumulate = [&](Value v, Value c) {
    auto [it, fresh] = cot.try_emplace(v, c);
    if (!fresh)
      it->second = arith::AddFOp::create(b, loc, it->second, c);
  };
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1 || !cot.count(op->getResult(0)))
      continue;
    Value c = cot.lookup(op->getResult(0));
    SmallVector<Value> cots;
    if (auto vjp = dyn_cast<VJPOpInterface>(op)) {
      cots = vjp.buildVJP(b, c);
    } else if (FailureOr<SmallVector<Value>> own =
                   custom ? custom(op, c) : FailureOr<SmallVector<Value>>();
               succeeded(own)) {
      cots = std::move(*own);
    } else {
      return op->emitError("attn-grad: no gradient for '")
             << op->getName() << "'";
    }
    if (cots.size() != op->getNumOperands())
      return op->emitError("attn-grad: the VJP of '")
             << op->getName() << "' gave " << cots.size() << " cotangents for "
             << op->getNumOperands() << " operands";
    for (auto [operand, c] : llvm::zip(op->getOperands(), cots))
      if (c)
        accumulate(operand, c);
  }
  return cot;
}

/// The attributes attn.attention and attn.attention_grad share.
template <typename To, typename From>
static void copyAttentionAttrs(To &to, const From &from) {
  to.rope_theta = from.rope_theta;
  to.rope_style = from.rope_style;
  to.rope_dim = from.rope_dim;
  to.rope_offset = from.rope_offset;
  to.rope_q_offset = from.rope_q_offset;
  to.gate_scaled = from.gate_scaled;
  to.mask = from.mask;
  to.window = from.window;
  to.scale = from.scale;
  to.norm_eps = from.norm_eps;
}

AttentionGradOp::Properties
mlir::attn::gradProperties(const AttentionOp::Properties &fwd) {
  AttentionGradOp::Properties grad;
  copyAttentionAttrs(grad, fwd);
  auto &sizes = grad.operandSegmentSizes;
  llvm::copy(fwd.operandSegmentSizes, sizes.begin());
  std::fill(sizes.begin() + fwd.operandSegmentSizes.size(), sizes.end(), 1);
  return grad;
}

AttentionOp::Properties
mlir::attn::forwardProperties(const AttentionGradOp::Properties &grad) {
  AttentionOp::Properties fwd;
  copyAttentionAttrs(fwd, grad);
  llvm::copy(ArrayRef(grad.operandSegmentSizes)
                 .take_front(fwd.operandSegmentSizes.size()),
             fwd.operandSegmentSizes.begin());
  return fwd;
}

Value mlir::attn::zerosLike(OpBuilder &b, Location loc, Value like) {
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

namespace {

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
