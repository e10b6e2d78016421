//===- CpuKernel.cpp - kernels JIT-compiled for the host CPU --------------===//

#include "JitAlloc.h"
#include "KernelSupport.h"
#include "LaunchPlan.h"

#include "attn/Memory.h"

#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn::detail {
namespace {

/// A memref descriptor of any rank as MLIR's C interface lays it out:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
struct Descriptor {
  llvm::SmallVector<int64_t, 11> words;
  /// The caller's view, where it lies: its own strides, offset 0.
  explicit Descriptor(const TensorView &v) : words(3 + 2 * v.shape.size(), 0) {
    words[0] = words[1] = reinterpret_cast<int64_t>(v.data);
    size_t rank = v.shape.size();
    for (size_t i = 0; i < rank; ++i) {
      words[3 + i] = v.shape[i];
      words[3 + rank + i] = v.stride(i);
    }
  }
};

/// Whether the entry can take `v` where it lies: the entry's memrefs have a
/// static unit innermost stride (rows are vector loads), any outer strides.
bool unitInnermost(const TensorView &v) {
  size_t r = v.shape.size();
  return r == 0 || v.shape[r - 1] <= 1 || v.stride(r - 1) == 1;
}

/// libomp for multi-threaded kernels: $ATTN_LIBOMP, else the one found at
/// configure time; "" when neither exists (kernels then run on one thread).
/// An ATTN_LIBOMP naming no file is an error, not a silent single thread.
Expected<std::string> openMPLibrary() {
  if (const char *env = std::getenv("ATTN_LIBOMP"); env && *env) {
    if (!llvm::sys::fs::exists(env))
      return createStringError(std::string("ATTN_LIBOMP='") + env +
                               "' does not exist");
    return std::string(env);
  }
#ifdef ATTN_LIBOMP_PATH
  if (llvm::sys::fs::exists(ATTN_LIBOMP_PATH))
    return ATTN_LIBOMP_PATH;
#endif
  return "";
}

/// MLIR's C runner utilities (memrefCopy for strided copies): found at
/// configure time; "" when absent (programs needing them then fail to JIT
/// with a message naming the symbol).
std::string runnerUtilsLibrary() {
#ifdef ATTN_RUNNER_UTILS_PATH
  if (llvm::sys::fs::exists(ATTN_RUNNER_UTILS_PATH))
    return ATTN_RUNNER_UTILS_PATH;
#endif
  return "";
}

class CpuKernel : public ProgramKernel {
public:
  static Expected<std::shared_ptr<Kernel>> create(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName);
  Expected<std::vector<HostArray>>
  runAll(llvm::ArrayRef<HostArray> inputs) override;
  using ProgramKernel::launch;
  Error launch(llvm::ArrayRef<TensorView> inputs,
               llvm::ArrayRef<TensorView> outputs, void *stream) override;
  Error probeReferencePart(Pipeline pipeline);

private:
  /// Calls the entry function on checked host views: inputs read and the
  /// outputs written where they lie, except a view with a non-unit
  /// innermost stride (packed into a contiguous copy first) and an output
  /// whose bytes overlap an input's (computed into a temporary, then
  /// copied).
  Error invoke(llvm::ArrayRef<TensorView> inputs,
               llvm::ArrayRef<TensorView> outputs);
  /// Fails when a run on `inputs` needs more memory than can be allocated.
  Error checkMemory(llvm::ArrayRef<TensorView> inputs);

  std::unique_ptr<ExecutionEngine> engine;
  /// How the JIT'd code is called (attn-caller-buffers' plan).
  LaunchPlan plan;
  /// The program after attn-fuse and attn-to-block: the attn ops left in
  /// it are those the reference lowering materializes (score maps).
  OwningOpRef<ModuleOp> referencePart;
  std::mutex memoryMutex;
  std::map<std::vector<std::vector<int64_t>>, uint64_t> workBytes;
};

/// LLVM's O3 pipeline for the host target machine, without loop unrolling:
/// with the host's cost model the unroller fully unrolls every small
/// fixed-trip tile loop, which made both the JIT and the kernels slower
/// (bench/history/runs-to-05a9f8e.md, "CPU: fused Multi-Token Attention vs
/// the reference lowering"); the dot and stencil loops, where unrolling
/// pays, come unrolled from attn-block-to-cpu (RegisterLoops.h).
static std::function<llvm::Error(llvm::Module *)>
hostOptimizer(llvm::TargetMachine *tm) {
  return [tm](llvm::Module *m) -> llvm::Error {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = false;
    llvm::PassBuilder pb(tm, tuning);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*m, mam);
    return llvm::Error::success();
  };
}

Expected<std::shared_ptr<Kernel>>
CpuKernel::create(llvm::StringRef source, const CompileOptions &options,
                  llvm::StringRef bufferName) {
  static std::once_flag nativeInit;
  std::call_once(nativeInit, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });

  auto kernel = std::make_shared<CpuKernel>();
  if (Error e = kernel->load(source, options.entry, bufferName))
    return std::move(e);
  MLIRContext *ctx = kernel->ctx.get();
  DiagnosticCollector diags(ctx);

  OwningOpRef<ModuleOp> lowered = kernel->program->clone();
  auto fn = lowered->lookupSymbol<func::FuncOp>(options.entry);
  fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), UnitAttr::get(ctx));
  // Program instances run on OpenMP threads when libomp can be loaded.
  auto ompLib = openMPLibrary();
  if (!ompLib)
    return ompLib.takeError();
  std::string omp = *ompLib;
  if (Error e = kernel->probeReferencePart(options.pipeline))
    return std::move(e);
  PassManager pm(ctx);
  if (options.pipeline == Pipeline::Reference)
    mlir::attn::buildReferenceToLLVMPipeline(pm, options.entry);
  else
    mlir::attn::buildCPUPipeline(pm, /*threads=*/!omp.empty(), options.entry);
  if (failed(pm.run(*lowered)))
    return diags.error("compiling " + bufferName.str() + " failed");
  auto plan =
      LaunchPlan::read(SymbolTable::lookupSymbolIn(*lowered, options.entry),
                       options.entry, mlir::attn_launch::Device::cpu);
  if (!plan)
    return plan.takeError();
  kernel->plan = std::move(*plan);

  ExecutionEngineOptions eeOptions;
  // The optimizer needs the host's target machine: without it LLVM's cost
  // model knows no vector registers and leaves the tile loops that
  // linalg-to-loops produced (masks, exp2, scaling) scalar.
  auto hostMachine = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostMachine)
    return createStringError("no host target for the JIT: " +
                             llvm::toString(hostMachine.takeError()));
  auto targetMachine = hostMachine->createTargetMachine();
  if (!targetMachine)
    return createStringError("no host target machine for the JIT: " +
                             llvm::toString(targetMachine.takeError()));
  // ExecutionEngineOptions holds a function_ref: keep the callee alive.
  std::function<llvm::Error(llvm::Module *)> optimize =
      hostOptimizer(targetMachine->get());
  eeOptions.transformer = optimize;
  eeOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  SmallVector<StringRef> libs;
  if (!omp.empty())
    libs.push_back(omp);
  // memrefCopy & co., which lowered code calls for strided copies.
  std::string runnerUtils = runnerUtilsLibrary();
  if (!runnerUtils.empty())
    libs.push_back(runnerUtils);
  eeOptions.sharedLibPaths = libs;
  auto ee = ExecutionEngine::create(*lowered, eeOptions);
  if (!ee)
    return createStringError("JIT compilation of " + bufferName.str() +
                             " failed: " + llvm::toString(ee.takeError()));
  kernel->engine = std::move(*ee);
  // Allocations of the generated code are checked (JitAlloc.h).
  kernel->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("malloc")] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(&::attn::jit::attnJitCheckedMalloc),
        llvm::JITSymbolFlags::Exported);
    return symbols;
  });
  kernel->notes = diags.remarks;
  return std::shared_ptr<Kernel>(std::move(kernel));
}

/// Which attn ops the pipeline leaves to the reference lowering: those
/// still present after attn-fuse and attn-to-block (all of them on the
/// reference pipeline).
Error CpuKernel::probeReferencePart(Pipeline pipeline) {
  referencePart = program->clone();
  if (pipeline == Pipeline::Reference)
    return Error::success();
  // Its remarks are the real compile's too: drop them here.
  ScopedDiagnosticHandler quiet(ctx.get(), [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  PassManager pm(ctx.get());
  pm.addPass(mlir::attn::createAttnFuse());
  pm.addPass(mlir::attn::createAttnToBlock());
  if (failed(pm.run(*referencePart)))
    return createStringError("attn-fuse/attn-to-block failed on @" + entry);
  return Error::success();
}

Error CpuKernel::checkMemory(llvm::ArrayRef<TensorView> inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorView &in : inputs)
    shapes.emplace_back(in.shape.begin(), in.shape.end());
  uint64_t work;
  {
    std::lock_guard<std::mutex> lock(memoryMutex);
    auto it = workBytes.find(shapes);
    if (it == workBytes.end()) {
      auto fn = referencePart->lookupSymbol<func::FuncOp>(entry);
      it = workBytes.emplace(shapes, materializedBytes(fn, shapes, 0)).first;
    }
    work = it->second;
  }
  // Inputs converted to the argument types, the reference part's tensors,
  // and the largest input again for each fused kernel's output ([B, Hq, T,
  // Dv] is at most that of q or v).
  uint64_t inBytes = 0, largest = 0;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    uint64_t b = checkedBytes(in.shape, dtypeSize(args[i].dtype)).value_or(0);
    inBytes = addBytes(inBytes, b);
    largest = std::max(largest, b);
  }
  uint64_t outBytes = 0;
  for (size_t i = 0; i < ress.size(); ++i)
    outBytes = addBytes(outBytes, largest);
  return checkAllocatable(addBytes(addBytes(inBytes, work), outBytes),
                          "running @" + entry + " on the CPU");
}

Error CpuKernel::invoke(llvm::ArrayRef<TensorView> inputs,
                        llvm::ArrayRef<TensorView> outputs) {
  if (Error e = checkMemory(inputs))
    return std::move(e);
  std::vector<std::vector<uint8_t>> copies;
  auto contiguousCopy = [&](const TensorView &v) {
    copies.emplace_back(std::max<size_t>(v.numel() * dtypeSize(v.dtype), 1));
    return TensorView(copies.back().data(), v.dtype, v.shape);
  };
  llvm::SmallVector<Descriptor, 8> descs;
  for (const TensorView &in : inputs) {
    if (unitInnermost(in)) {
      descs.emplace_back(in);
      continue;
    }
    TensorView dense = contiguousCopy(in);
    copyStrided(in, dense);
    descs.emplace_back(dense);
  }
  // An output the entry cannot write where it lies gets a temporary,
  // copied out after the kernels ran.
  llvm::SmallVector<TensorView, 2> targets;
  llvm::SmallVector<Descriptor, 2> outs;
  for (const TensorView &output : outputs) {
    bool direct = unitInnermost(output) &&
                  llvm::none_of(inputs, [&](const TensorView &in) {
                    return viewsOverlap(output, in);
                  });
    targets.push_back(direct ? output : contiguousCopy(output));
    outs.emplace_back(targets.back());
  }
  // The plan's kernels in order, each called through its C interface with
  // pointers to the descriptors its arguments name.
  for (const LaunchPlan::Kernel &k : plan.kernels()) {
    llvm::SmallVector<void *, 9> argPtrs, packed;
    for (const LaunchPlan::Arg &a : k.args) {
      if (a.kind == LaunchPlan::ArgKind::input &&
          a.index < static_cast<int64_t>(descs.size()))
        argPtrs.push_back(descs[a.index].words.data());
      else if (a.kind == LaunchPlan::ArgKind::output &&
               a.index < static_cast<int64_t>(outs.size()))
        argPtrs.push_back(outs[a.index].words.data());
      else
        return createStringError(
            "internal error: the CPU executor passes views only, kernel " +
            k.name + " asks for " +
            mlir::attn_launch::stringifyArgKind(a.kind).str() + " " +
            std::to_string(a.index));
    }
    for (void *&p : argPtrs)
      packed.push_back(&p);
    auto fnPtr = engine->lookupPacked("_mlir_ciface_" + k.name);
    if (!fnPtr)
      return fnPtr.takeError();
    if (Error e = ::attn::jit::guardAllocations(
            *fnPtr, packed.data(), "running @" + entry + " on the CPU"))
      return e;
  }
  for (auto [target, output] : llvm::zip(targets, outputs))
    if (target.data != output.data)
      copyStrided(target, output);
  return Error::success();
}

Expected<std::vector<HostArray>>
CpuKernel::runAll(llvm::ArrayRef<HostArray> inputs) {
  auto host = convertInputs(inputs);
  if (!host)
    return host.takeError();
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorView &v : host->views)
    shapes.emplace_back(v.shape.begin(), v.shape.end());
  auto resultShapes = resultShapeAt(shapes);
  if (!resultShapes)
    return resultShapes.takeError();
  std::vector<HostArray> outs(ress.size());
  std::vector<TensorView> views;
  for (auto [i, out] : llvm::enumerate(outs)) {
    out.dtype = ress[i].dtype;
    out.shape = (*resultShapes)[i];
    auto bytes = checkedBytes(out.shape, dtypeSize(out.dtype));
    if (!bytes)
      return createStringError("result " + std::to_string(i) + " of @" + entry +
                               " would exceed 2^62 bytes");
    out.bytes.resize(*bytes);
  }
  // Views only once every array has its final storage.
  for (HostArray &out : outs)
    views.push_back(TensorView::of(out));
  if (Error e = invoke(host->views, views))
    return std::move(e);
  return outs;
}

Error CpuKernel::launch(llvm::ArrayRef<TensorView> inputs,
                        llvm::ArrayRef<TensorView> outputs, void *stream) {
  if (stream)
    return createStringError("a stream was given to a kernel that runs on "
                             "the CPU (pass nullptr)");
  auto shapes = checkLaunch(inputs, outputs, /*alignment=*/0);
  if (!shapes)
    return shapes.takeError();
  return invoke(inputs, outputs);
}

} // namespace

Expected<std::shared_ptr<Kernel>> createCpuKernel(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName) {
  return CpuKernel::create(source, options, bufferName);
}

} // namespace attn::detail
