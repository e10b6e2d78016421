//===- BlockLaunchPlan.cpp - attn-block-launch-plan -----------------------===//
//
// The launch plan of a block program, read off its host function: what
// attn-to-block{target=<chip>} writes as attn_block.launch ops over
// memref.alloc scratch, with grids and sizes as index arithmetic on the
// arguments' dims, becomes an #attn_launch.plan (docs/launch-plan.md) and
// the launched GPU-form kernels move into a gpu.module for the chip, so
// that attn-block-to-gpu lowers them and the runtime's one plan executor
// (runtime/lib/LaunchPlan.cpp) runs them. The kernels' parameters follow
// the flat-pointer ABI of attn/Codegen/BlockGpuAbi.h, the definition
// attn-block-to-gpu builds the gpu.funcs from.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/BlockGpuAbi.h"
#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "attn/Passes/GpuTarget.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBLOCKLAUNCHPLAN
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
namespace al = mlir::attn_launch;
namespace blk = mlir::attn_block;

namespace {

constexpr llvm::StringLiteral kPass = "attn-block-launch-plan: ";

/// Whether `fn` uses wgmma layouts (an mma version 3 tile), which only a
/// wgmma chip (sm_90a) runs.
bool usesWgmma(func::FuncOp fn) {
  bool found = false;
  fn.walk([&](Operation *op) {
    for (Type t :
         llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto r = dyn_cast<RankedTensorType>(t))
        if (auto m = dyn_cast_or_null<blk::MmaLayoutAttr>(r.getEncoding()))
          found |= m.getVersion() == 3;
  });
  return found;
}

/// The plan of one host function: its dims are the dynamic dims of its
/// arguments (in argument order), its values the maxima and minima its
/// index arithmetic takes, its buffers the memref.allocs the launches
/// pass (in order of first use; the allocs returned as results are the
/// outputs, in result order), its kernels the launches in order.
class PlanBuilder {
public:
  PlanBuilder(func::FuncOp fn, const TargetDesc &target)
      : fn(fn), ctx(fn.getContext()), target(target) {}

  /// The plan, with the kernels named in gpu.module `gmName`; the kernel
  /// functions it launches, in order, are appended to `kernels`.
  FailureOr<al::PlanAttr> build(StringRef gmName,
                                SetVector<func::FuncOp> &kernels);

private:
  LogicalResult checkHostOps();
  LogicalResult findOutputs();
  FailureOr<AffineExpr> expr(Value v);
  FailureOr<AffineExpr> binary(Operation *op);
  FailureOr<AffineExpr> sizeOf(Value buffer, int64_t dim, Operation *user);
  FailureOr<AffineExpr> elementsOf(Value buffer, Operation *user);
  /// An argument or a kernel before the plan's symbol count is known.
  struct Arg {
    al::ArgKind kind;
    int64_t index;
    std::optional<AffineExpr> value;
  };
  struct Kernel {
    SymbolRefAttr name;
    AffineExpr grid[2];
    int64_t threads, smem;
    SmallVector<Arg> args;
    /// The kernel waits for the kernels before it (attn_block.griddep_wait
    /// in its body), so it may be launched while they run.
    bool waits = false;
  };
  struct Buffer {
    std::string name;
    AffineExpr bytes;
  };
  FailureOr<Arg> bufferArg(Value v, blk::LaunchOp launch);
  FailureOr<Kernel> kernelOf(blk::LaunchOp launch, StringRef gmName,
                             SetVector<func::FuncOp> &kernels);
  AffineMap map(ArrayRef<AffineExpr> results) const {
    return AffineMap::get(0, numSymbols(), results, ctx);
  }
  unsigned numSymbols() const { return dims.size() + values.size(); }
  AffineExpr newValue(SmallVector<AffineExpr, 2> results) {
    values.push_back(std::move(results));
    return getAffineSymbolExpr(dims.size() + values.size() - 1, ctx);
  }

  func::FuncOp fn;
  MLIRContext *ctx;
  const TargetDesc &target;
  SmallVector<Attribute> dims;
  /// (argument, dim) -> symbol position.
  DenseMap<std::pair<unsigned, int64_t>, unsigned> dimSymbol;
  SmallVector<SmallVector<AffineExpr, 2>> values;
  SmallVector<Buffer> buffers;
  DenseMap<Value, int64_t> scratch;
  DenseMap<Value, AffineExpr> memo;
  /// The result each returned buffer is.
  DenseMap<Value, int64_t> outputs;
};

LogicalResult PlanBuilder::checkHostOps() {
  for (Operation &op : fn.getBody().front()) {
    if (isa<arith::ArithDialect>(op.getDialect()) ||
        isa<tensor::DimOp, memref::DimOp, memref::AllocOp, memref::DeallocOp,
            bufferization::ToBufferOp, bufferization::ToTensorOp, blk::LaunchOp,
            func::ReturnOp>(op))
      continue;
    return op.emitError(kPass)
           << "'" << op.getName() << "' in @" << fn.getSymName()
           << " is not a launch, a scratch allocation or index arithmetic; "
              "a launch plan cannot run it on the host";
  }
  if (fn.getBody().getBlocks().size() != 1)
    return fn.emitError(kPass) << "@" << fn.getSymName()
                               << " has control flow; a launch plan is a "
                                  "straight sequence of launches";
  return success();
}

LogicalResult PlanBuilder::findOutputs() {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (ret.getNumOperands() == 0)
    return ret.emitError(kPass) << "@" << fn.getSymName()
                                << " returns nothing; a launch plan writes "
                                   "at least one output";
  for (auto [i, result] : llvm::enumerate(ret.getOperands())) {
    auto toTensor = result.getDefiningOp<bufferization::ToTensorOp>();
    if (!toTensor || !toTensor.getBuffer().getDefiningOp<memref::AllocOp>())
      return ret.emitError(kPass)
             << "result " << i << " of @" << fn.getSymName()
             << " must be a buffer a launch writes "
                "(bufferization.to_tensor of a memref.alloc)";
    // Each output is a view of its own: one buffer cannot be two of them.
    auto [it, fresh] = outputs.try_emplace(toTensor.getBuffer(), i);
    if (!fresh)
      return ret.emitError(kPass)
             << "@" << fn.getSymName() << " returns one buffer as results "
             << it->second << " and " << i;
  }
  return success();
}

FailureOr<AffineExpr> PlanBuilder::sizeOf(Value buffer, int64_t dim,
                                          Operation *user) {
  auto shaped = cast<ShapedType>(buffer.getType());
  if (!shaped.isDynamicDim(dim))
    return getAffineConstantExpr(shaped.getDimSize(dim), ctx);
  if (auto arg = dyn_cast<BlockArgument>(buffer);
      arg && arg.getOwner()->getParentOp() == fn)
    return getAffineSymbolExpr(dimSymbol.lookup({arg.getArgNumber(), dim}),
                               ctx);
  Operation *def = buffer.getDefiningOp();
  if (auto toBuffer = dyn_cast_or_null<bufferization::ToBufferOp>(def))
    return sizeOf(toBuffer.getTensor(), dim, user);
  if (auto alloc = dyn_cast_or_null<memref::AllocOp>(def))
    return expr(alloc.getDynamicSizes()[shaped.getDynamicDimIndex(dim)]);
  return user->emitError(kPass)
         << "the size of dim " << dim << " of " << buffer
         << " is not a dim of an argument or of a memref.alloc";
}

FailureOr<AffineExpr> PlanBuilder::elementsOf(Value buffer, Operation *user) {
  AffineExpr n = getAffineConstantExpr(1, ctx);
  for (int64_t d = 0; d < cast<ShapedType>(buffer.getType()).getRank(); ++d) {
    auto s = sizeOf(buffer, d, user);
    if (failed(s))
      return failure();
    n = n * *s;
  }
  return n;
}

FailureOr<AffineExpr> PlanBuilder::binary(Operation *op) {
  auto l = expr(op->getOperand(0));
  if (failed(l))
    return failure();
  auto r = expr(op->getOperand(1));
  if (failed(r))
    return failure();
  // Sizes are non-negative, so the signed and unsigned forms agree and
  // truncating division is floordiv.
  return TypeSwitch<Operation *, FailureOr<AffineExpr>>(op)
      .Case<arith::AddIOp>([&](auto) { return *l + *r; })
      .Case<arith::SubIOp>([&](auto) { return *l - *r; })
      .Case<arith::MulIOp>([&](auto) { return *l * *r; })
      .Case<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp>(
          [&](auto) { return l->floorDiv(*r); })
      .Case<arith::CeilDivUIOp, arith::CeilDivSIOp>(
          [&](auto) { return l->ceilDiv(*r); })
      .Case<arith::RemUIOp, arith::RemSIOp>([&](auto) { return *l % *r; })
      // A value is the maximum of its results (AttnLaunch.td).
      .Case<arith::MaxSIOp, arith::MaxUIOp>([&](auto) {
        return newValue({*l, *r});
      })
      .Case<arith::MinSIOp, arith::MinUIOp>([&](auto) {
        return -newValue({-*l, -*r});
      })
      .Default([](Operation *) -> FailureOr<AffineExpr> { return failure(); });
}

FailureOr<AffineExpr> PlanBuilder::expr(Value v) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Operation *op = v.getDefiningOp();
  auto unsupported = [&]() -> FailureOr<AffineExpr> {
    InFlightDiagnostic d = op ? op->emitError(kPass) : fn.emitError(kPass);
    d << "cannot state ";
    if (op)
      d << "'" << op->getName() << "'";
    else
      d << v;
    d << " in a launch plan: grids and sizes are index arithmetic of "
         "arith.constant, tensor.dim / memref.dim of the arguments and "
         "allocations, addi, subi, muli, divui / divsi, ceildivui, remui, "
         "maxsi / minsi";
    return d;
  };
  if (!op || !v.getType().isIndex())
    return unsupported();
  FailureOr<AffineExpr> e = failure();
  if (auto c = dyn_cast<arith::ConstantIndexOp>(op)) {
    e = getAffineConstantExpr(c.value(), ctx);
  } else if (isa<tensor::DimOp, memref::DimOp>(op)) {
    Value src = op->getOperand(0);
    auto idx = getConstantIntValue(op->getOperand(1));
    if (!idx)
      return unsupported();
    e = sizeOf(src, *idx, op);
    if (failed(e))
      return failure();
  } else if (op->getNumOperands() == 2 &&
             isa<arith::ArithDialect>(op->getDialect())) {
    // An operand's own error has been reported: stop there.
    for (Value x : op->getOperands())
      if (failed(expr(x)))
        return failure();
    e = binary(op);
  }
  if (failed(e))
    return unsupported();
  memo[v] = *e;
  return e;
}

FailureOr<PlanBuilder::Arg> PlanBuilder::bufferArg(Value v,
                                                   blk::LaunchOp launch) {
  Value src = v;
  if (auto toBuffer = v.getDefiningOp<bufferization::ToBufferOp>())
    src = toBuffer.getTensor();
  if (auto arg = dyn_cast<BlockArgument>(src);
      arg && arg.getOwner()->getParentOp() == fn)
    return Arg{al::ArgKind::input, arg.getArgNumber(), std::nullopt};
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return launch.emitError(kPass)
           << "a launch argument must be an argument of @" << fn.getSymName()
           << " or a memref.alloc, got " << v;
  if (auto it = outputs.find(v); it != outputs.end())
    return Arg{al::ArgKind::output, it->second, std::nullopt};
  auto elems = elementsOf(v, launch);
  if (failed(elems))
    return failure();
  auto [it, fresh] = scratch.try_emplace(v, buffers.size());
  if (fresh) {
    unsigned bits = alloc.getType().getElementTypeBitWidth();
    if (bits % 8 != 0)
      return alloc.emitError(kPass) << "scratch of sub-byte elements";
    // Named after its first use: kernel.argument.
    int64_t pos = llvm::find(launch.getArgs(), v) - launch.getArgs().begin();
    buffers.push_back({(launch.getKernel() + "." + Twine(pos)).str(),
                       *elems * static_cast<int64_t>(bits / 8)});
  }
  return Arg{al::ArgKind::scratch, it->second, *elems};
}

FailureOr<PlanBuilder::Kernel>
PlanBuilder::kernelOf(blk::LaunchOp launch, StringRef gmName,
                      SetVector<func::FuncOp> &kernels) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      launch, launch.getKernelAttr());
  if (!kernel || !kernel->hasAttr("attn_block.kernel"))
    return launch.emitError(kPass)
           << "@" << launch.getKernel() << " is not a block kernel";
  auto warps = kernel->getAttrOfType<IntegerAttr>("attn_block.num_warps");
  if (!warps || warps.getInt() < 1)
    return launch.emitError(kPass)
           << "kernel @" << kernel.getSymName()
           << " is in the CPU form (no attn_block.num_warps); "
              "attn-to-block{target=<chip>} builds the GPU form";
  if (TypeRange(launch.getArgs()) != kernel.getArgumentTypes())
    return launch.emitError(kPass)
           << "the launch passes (" << launch.getArgs().getTypes() << ") to @"
           << kernel.getSymName() << ", which takes ("
           << kernel.getArgumentTypes() << ")";
  if (std::string bad = blockgpu::flatAbiUnsupported(kernel.getArgumentTypes());
      !bad.empty())
    return launch.emitError(kPass)
           << "kernel @" << kernel.getSymName() << ": " << bad;
  if (usesWgmma(kernel) && target.mma != MmaKind::Wgmma)
    return launch.emitError(kPass)
           << "kernel @" << kernel.getSymName()
           << " uses wgmma (mma version 3 layouts), which " << target.name
           << " lacks (attn-to-block{target=sm_90a} made it for sm_90a)";
  Kernel k;
  k.smem = blockgpu::sharedMemoryBytes(kernel);
  if (k.smem > target.sharedBytes)
    return launch.emitError(kPass)
           << "kernel @" << kernel.getSymName() << " takes " << k.smem
           << " bytes of shared memory, " << target.name << " offers "
           << target.sharedBytes;
  k.threads = 32 * warps.getInt();
  k.waits = !kernel.getBody().getOps<blk::GriddepWaitOp>().empty();
  k.name = SymbolRefAttr::get(StringAttr::get(ctx, gmName),
                              {FlatSymbolRefAttr::get(kernel.getNameAttr())});
  Value grid[2] = {launch.getGridX(), launch.getGridY()};
  for (auto [i, g] : llvm::enumerate(grid)) {
    auto e = expr(g);
    if (failed(e))
      return failure();
    k.grid[i] = *e;
  }
  for (blockgpu::FlatAbiParam p :
       blockgpu::flatAbiParams(kernel.getArgumentTypes())) {
    Value v = launch.getArgs()[p.arg];
    if (p.dim < 0) {
      auto arg = bufferArg(v, launch);
      if (failed(arg))
        return failure();
      k.args.push_back(*arg);
      continue;
    }
    auto size = sizeOf(v, p.dim, launch);
    if (failed(size))
      return failure();
    k.args.push_back({al::ArgKind::scalar, 0, *size});
  }
  kernels.insert(kernel);
  return k;
}

FailureOr<al::PlanAttr> PlanBuilder::build(StringRef gmName,
                                           SetVector<func::FuncOp> &kernels) {
  if (failed(checkHostOps()) || failed(findOutputs()))
    return failure();
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
    auto shaped = dyn_cast<ShapedType>(t);
    if (!shaped || !shaped.hasRank())
      return fn.emitError(kPass)
             << "argument " << i << " of @" << fn.getSymName()
             << " is not a ranked tensor or memref";
    for (int64_t d = 0; d < shaped.getRank(); ++d)
      if (shaped.isDynamicDim(d)) {
        dimSymbol[{static_cast<unsigned>(i), d}] = dims.size();
        dims.push_back(al::DimAttr::get(
            ctx, ("arg" + Twine(i) + "." + Twine(d)).str(), i, d));
      }
  }
  SmallVector<Kernel> launches;
  for (auto launch : fn.getBody().front().getOps<blk::LaunchOp>()) {
    auto k = kernelOf(launch, gmName, kernels);
    if (failed(k))
      return failure();
    launches.push_back(std::move(*k));
  }
  if (launches.empty())
    return fn.emitError(kPass) << "@" << fn.getSymName() << " has no launch";

  // Every map over all the symbols (a value's only over those before it).
  Builder b(ctx);
  SmallVector<Attribute> valueAttrs, bufferAttrs, kernelAttrs;
  for (auto [i, v] : llvm::enumerate(values))
    valueAttrs.push_back(
        AffineMapAttr::get(AffineMap::get(0, dims.size() + i, v, ctx)));
  for (const Buffer &buf : buffers)
    bufferAttrs.push_back(al::BufferAttr::get(ctx, buf.name, map(buf.bytes)));
  for (auto [i, k] : llvm::enumerate(launches)) {
    SmallVector<Attribute> args;
    for (const Arg &a : k.args)
      args.push_back(al::ArgAttr::get(ctx, a.kind, a.index,
                                      a.value ? map(*a.value) : AffineMap()));
    kernelAttrs.push_back(al::KernelAttr::get(
        ctx, k.name, map({k.grid[0], k.grid[1], b.getAffineConstantExpr(1)}),
        b.getDenseI64ArrayAttr({k.threads, 1, 1}), k.smem, b.getArrayAttr(args),
        // A kernel after the first that waits (griddep_wait at the top
        // level of its body, so that every program waits and the grid's
        // end implies the end of every kernel before it) starts while the
        // one before it runs. The first kernel follows whatever the caller
        // queued, which never lets it start early.
        /*dependent=*/i > 0 && k.waits));
  }
  return al::PlanAttr::get(
      ctx, al::Device::cuda, b.getArrayAttr(dims), b.getArrayAttr(valueAttrs),
      b.getArrayAttr(bufferAttrs), b.getArrayAttr(kernelAttrs));
}

struct AttnBlockLaunchPlanPass
    : attn::impl::AttnBlockLaunchPlanBase<AttnBlockLaunchPlanPass> {
  using AttnBlockLaunchPlanBase::AttnBlockLaunchPlanBase;

  /// A bad chip fails even on a module without launches.
  LogicalResult initialize(MLIRContext *ctx) override {
    if (std::string bad = checkGpuChip(chip); !bad.empty())
      return emitError(UnknownLoc::get(ctx), kPass) << bad;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // checkGpuChip passed: the chip has a description.
    const TargetDesc &target = cantFail(getTargetDesc(chip));
    SmallVector<func::FuncOp> hosts;
    bool failedAny = false;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isDeclaration() || fn->hasAttr("attn_block.kernel"))
        continue;
      if (!fn.getBody().front().getOps<blk::LaunchOp>().empty()) {
        hosts.push_back(fn);
        continue;
      }
      // An attn op attn-to-block left (one it does not fuse: PaTH with
      // RoPE or MTA pieces) has no kernel, and the GPU backend has no
      // reference lowering: left here, it would leave the pipeline
      // unlowered and the pipeline would succeed.
      fn.walk([&](Operation *op) {
        if (!isa<mlir::attn::AttnDialect>(op->getDialect()))
          return WalkResult::advance();
        op->emitError(kPass)
            << "'" << op->getName() << "' in @" << fn.getSymName()
            << " was not lowered to GPU kernels (attn-to-block did not fuse "
               "it; its remark says why) and the GPU backend has no "
               "reference lowering; run it on the CPU (--device=cpu)";
        failedAny = true;
        return WalkResult::interrupt();
      });
    }
    SetVector<func::FuncOp> moved;
    SymbolTable symbols(module);
    for (func::FuncOp fn : hosts) {
      std::string name = (fn.getSymName() + "_gpu").str();
      if (symbols.lookup(name)) {
        fn.emitError(kPass) << "@" << name << " exists already";
        failedAny = true;
        continue;
      }
      SetVector<func::FuncOp> kernels;
      auto plan = PlanBuilder(fn, target).build(name, kernels);
      if (failed(plan)) {
        failedAny = true;
        continue;
      }
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      // sm_90's bulk copies need PTX 8.0; LLVM's default for the chip is
      // 7.8 (later chips' defaults are newer).
      auto nvvm = NVVM::NVVMTargetAttr::get(
          ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", chip,
          target.tma && target.sm == 90 ? "+ptx80" : "");
      auto gm = gpu::GPUModuleOp::create(b, fn.getLoc(), name,
                                         b.getArrayAttr({nvvm}));
      OpBuilder kb = OpBuilder::atBlockBegin(gm.getBody());
      for (func::FuncOp k : kernels)
        kb.clone(*k.getOperation());
      moved.insert(kernels.begin(), kernels.end());
      // The launches stay in the host function as the statement of the
      // plan; their kernels now live in the gpu.module it names.
      fn->setAttr("attn.gpu_module", FlatSymbolRefAttr::get(ctx, name));
      fn->setAttr(al::AttnLaunchDialect::kPlanAttrName, *plan);
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      b.getUnitAttr());
    }
    if (failedAny)
      return signalPassFailure();
    for (func::FuncOp k : moved)
      k.erase();
  }
};

} // namespace
