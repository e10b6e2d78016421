//===- CallerBuffers.cpp - the entry on caller-owned strided buffers ------===//
//
// attn-caller-buffers: the host program owns the inputs and the outputs
// (one per result), in whatever strided layout it keeps them (BSHD, a
// slice, a transposed view with a unit innermost stride). The entry takes
// them as strided memrefs, block kernels read the inputs where they lie and
// write each output in place; nothing is packed or copied on the way in or
// out (a result that is an argument or another result is copied).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCALLERBUFFERS
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
namespace blk = mlir::attn_block;
namespace al = mlir::attn_launch;

namespace {

/// `memref<shape x T, strided<[?, ..., ?, 1], offset: ?>>`: any outer
/// strides and offset; the innermost stride stays static so that rows are
/// read with vector loads.
MemRefType callerType(ShapedType t) {
  int64_t rank = t.getRank();
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  if (rank)
    strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(t.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(t.getShape(), t.getElementType(), layout);
}

/// Whether every use of kernel argument `arg` accepts any strided layout.
bool takesAnyLayout(BlockArgument arg) {
  return llvm::all_of(arg.getUsers(), [](Operation *user) {
    return isa<blk::LoadOp, blk::StoreOp, memref::LoadOp, memref::StoreOp,
               memref::DimOp>(user);
  });
}

/// Gives block kernel arguments of the identity layout the caller layout
/// where their uses allow it, and makes every launch pass operands of the
/// kernel's argument types: a fresh to_buffer of the tensor (bufferized
/// onto the caller's view without a copy) or a memref.cast.
void retypeKernels(ModuleOp module, SymbolTable &symbols) {
  DenseSet<Operation *> retyped;
  module.walk([&](blk::LaunchOp launch) {
    auto kernel = symbols.lookup<func::FuncOp>(launch.getKernel());
    if (!kernel || kernel.isDeclaration())
      return;
    if (retyped.insert(kernel).second) {
      SmallVector<Type> inputs(kernel.getArgumentTypes());
      for (BlockArgument arg : kernel.getArguments()) {
        auto t = dyn_cast<MemRefType>(arg.getType());
        if (!t || !t.getLayout().isIdentity() || t.getRank() == 0 ||
            !takesAnyLayout(arg))
          continue;
        arg.setType(callerType(t));
        inputs[arg.getArgNumber()] = arg.getType();
      }
      kernel.setType(FunctionType::get(module.getContext(), inputs,
                                       kernel.getResultTypes()));
    }
  });
  module.walk([&](blk::LaunchOp launch) {
    auto kernel = symbols.lookup<func::FuncOp>(launch.getKernel());
    if (!kernel)
      return;
    OpBuilder b(launch);
    for (OpOperand &operand : launch.getArgsMutable()) {
      Type want =
          kernel.getArgumentTypes()[operand.getOperandNumber() -
                                    launch.getArgs().getBeginOperandIndex()];
      Value v = operand.get();
      if (v.getType() == want)
        continue;
      if (auto toBuf = v.getDefiningOp<bufferization::ToBufferOp>()) {
        operand.set(bufferization::ToBufferOp::create(
            b, launch.getLoc(), cast<MemRefType>(want), toBuf.getTensor(),
            toBuf.getReadOnly()));
        if (toBuf->use_empty())
          toBuf.erase();
      } else
        operand.set(memref::CastOp::create(b, launch.getLoc(), want, v));
    }
  });
}

/// The result is a launch's fresh output buffer (to_tensor of an alloc that
/// only launches write, returned once): the launches write the caller's
/// output instead.
void forwardOutput(bufferization::MaterializeInDestinationOp mat,
                   Value output) {
  auto toTensor = mat.getSource().getDefiningOp<bufferization::ToTensorOp>();
  if (!toTensor || !toTensor->hasOneUse())
    return;
  auto alloc = toTensor.getBuffer().getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  SmallVector<OpOperand *> launchUses;
  for (OpOperand &use : alloc->getUses()) {
    if (use.getOwner() == toTensor)
      continue;
    Operation *user = use.getOwner();
    // memref.cast to the kernel's layout (retypeKernels).
    if (auto c = dyn_cast<memref::CastOp>(user);
        c && c.getType() == output.getType() &&
        llvm::all_of(c->getUsers(),
                     [](Operation *u) { return isa<blk::LaunchOp>(u); })) {
      for (OpOperand &cu : c->getUses())
        launchUses.push_back(&cu);
      continue;
    }
    return; // read or written by anything else: keep the copy
  }
  if (launchUses.empty())
    return;
  for (OpOperand *use : launchUses)
    use->set(output);
  mat.erase();
  toTensor.erase();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    user->erase();
  alloc.erase();
}

struct AttnCallerBuffersPass
    : attn::impl::AttnCallerBuffersBase<AttnCallerBuffersPass> {
  using AttnCallerBuffersBase::AttnCallerBuffersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto fn = module.lookupSymbol<func::FuncOp>(entry);
    if (!fn || fn.isDeclaration()) {
      module.emitError("attn-caller-buffers: no function @") << entry;
      return signalPassFailure();
    }
    if (fn.getNumResults() == 0 || !fn.getBody().hasOneBlock()) {
      fn.emitError("attn-caller-buffers: @")
          << entry << " must have one block and return at least one tensor";
      return signalPassFailure();
    }
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes()))
      if (!isa<RankedTensorType>(t)) {
        fn.emitError("attn-caller-buffers: result ")
            << i << " must be a ranked tensor";
        return signalPassFailure();
      }
    Block &body = fn.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    SmallVector<Type> argTypes;
    for (BlockArgument arg : body.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t) {
        fn.emitError("attn-caller-buffers: argument ")
            << arg.getArgNumber() << " must be a ranked tensor";
        return signalPassFailure();
      }
      arg.setType(callerType(t));
      auto read = bufferization::ToTensorOp::create(
          b, fn.getLoc(), t, arg, /*restrict=*/true, /*writable=*/false);
      arg.replaceAllUsesExcept(read, read);
      argTypes.push_back(arg.getType());
    }
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.removeArgAttr(i, "bufferization.writable");
    // One output argument per result, in result order, each filled by a
    // materialize_in_destination (a copy unless forwardOutput removes it).
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    SmallVector<std::pair<bufferization::MaterializeInDestinationOp, Value>>
        outputs;
    for (auto [value, t] : llvm::zip(ret.getOperands(), fn.getResultTypes())) {
      Value output =
          body.addArgument(callerType(cast<RankedTensorType>(t)), fn.getLoc());
      argTypes.push_back(output.getType());
      auto mat = bufferization::MaterializeInDestinationOp::create(
          b, ret.getLoc(), value, output);
      mat.setRestrict(true);
      mat.setWritable(true);
      outputs.push_back({mat, output});
    }
    ret->setOperands({});
    fn.setType(FunctionType::get(ctx, argTypes, {}));
    fn.setResAttrsAttr(nullptr);

    SymbolTable symbols(module);
    retypeKernels(module, symbols);
    for (auto [mat, output] : outputs)
      forwardOutput(mat, output);
    fn->setAttr(al::AttnLaunchDialect::kPlanAttrName,
                hostPlan(fn, outputs.size()));
  }

  /// One launch of the entry itself on the inputs and the `numOutputs`
  /// outputs after them.
  al::PlanAttr hostPlan(func::FuncOp fn, unsigned numOutputs) {
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    SmallVector<Attribute> args;
    unsigned numInputs = fn.getNumArguments() - numOutputs;
    for (unsigned i = 0; i < numInputs; ++i)
      args.push_back(al::ArgAttr::get(ctx, al::ArgKind::input, i, {}));
    for (unsigned i = 0; i < numOutputs; ++i)
      args.push_back(al::ArgAttr::get(ctx, al::ArgKind::output, i, {}));
    auto one =
        AffineMap::get(0, 0,
                       {b.getAffineConstantExpr(1), b.getAffineConstantExpr(1),
                        b.getAffineConstantExpr(1)},
                       ctx);
    auto kernel = al::KernelAttr::get(
        ctx, FlatSymbolRefAttr::get(fn.getSymNameAttr()), one,
        b.getDenseI64ArrayAttr({1, 1, 1}), 0, b.getArrayAttr(args), false);
    return al::PlanAttr::get(ctx, al::Device::cpu, b.getArrayAttr({}),
                             b.getArrayAttr({}), b.getArrayAttr({}),
                             b.getArrayAttr({kernel}));
  }
};

} // namespace
