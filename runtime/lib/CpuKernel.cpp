//===- CpuKernel.cpp - kernels JIT-compiled for the host CPU --------------===//

#include "KernelSupport.h"

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
  explicit Descriptor(size_t rank) : words(3 + 2 * rank, 0) {}
  void set(void *data, llvm::ArrayRef<int64_t> shape) {
    words[0] = words[1] = reinterpret_cast<int64_t>(data);
    size_t rank = shape.size();
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      words[3 + i] = shape[i];
      words[3 + rank + i] = stride;
      stride *= shape[i];
    }
  }
};

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
  Expected<HostArray> run(llvm::ArrayRef<HostArray> inputs) override;
  Error launch(llvm::ArrayRef<TensorView> inputs, const TensorView &output,
               void *stream) override;
  Error probeReferencePart(Pipeline pipeline);

private:
  /// The entry function's result: a buffer the program allocated (freed
  /// with the Result), viewed contiguously.
  struct Result {
    TensorView view;
    void *allocated = nullptr;
    Result() = default;
    Result(Result &&o) : view(o.view), allocated(o.allocated) {
      o.allocated = nullptr;
    }
    ~Result() { std::free(allocated); }
  };
  /// Calls the entry function on checked host views. Contiguous views are
  /// read in place; others are packed into a contiguous copy first (the
  /// lowered functions take identity-layout memrefs).
  Expected<Result> invoke(llvm::ArrayRef<TensorView> inputs);
  /// Fails when a run on `inputs` needs more memory than can be allocated.
  Error checkMemory(llvm::ArrayRef<TensorView> inputs);

  std::unique_ptr<ExecutionEngine> engine;
  /// The program after attn-fuse and attn-to-block: the attn ops left in
  /// it are those the reference lowering materializes (score maps).
  OwningOpRef<ModuleOp> referencePart;
  std::mutex memoryMutex;
  std::map<std::vector<std::vector<int64_t>>, uint64_t> workBytes;
};

/// LLVM's O3 pipeline for the host target machine, without loop unrolling:
/// with the host's cost model the unroller fully unrolls every small
/// fixed-trip tile loop, which tripled the JIT time (examples/path.mlir:
/// 1.4 -> 4.2 s) and made the kernels slower (mta at T = 1024, one thread:
/// 169 ms with it, 144 ms without); the dot and stencil loops, where
/// unrolling pays, come unrolled from attn-block-to-cpu (RegisterLoops.h).
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
  // Inputs are the caller's memory (launch reads them in place): the
  // program must never write into them.
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    fn.setArgAttr(i, "bufferization.writable", BoolAttr::get(ctx, false));
  // Program instances run on OpenMP threads when libomp can be loaded.
  auto ompLib = openMPLibrary();
  if (!ompLib)
    return ompLib.takeError();
  std::string omp = *ompLib;
  if (Error e = kernel->probeReferencePart(options.pipeline))
    return std::move(e);
  PassManager pm(ctx);
  if (options.pipeline == Pipeline::Reference)
    mlir::attn::buildReferenceToLLVMPipeline(pm);
  else
    mlir::attn::buildCPUPipeline(pm, /*threads=*/!omp.empty());
  if (failed(pm.run(*lowered)))
    return diags.error("compiling " + bufferName.str() + " failed");

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
  // and the largest input again for a fused kernel's output ([B, Hq, T, Dv]
  // is at most that of q or v).
  uint64_t inBytes = 0, largest = 0;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    uint64_t b = checkedBytes(in.shape, dtypeSize(args[i].dtype)).value_or(0);
    inBytes = addBytes(inBytes, b);
    largest = std::max(largest, b);
  }
  return checkAllocatable(addBytes(addBytes(inBytes, work), largest),
                          "running @" + entry + " on the CPU");
}

Expected<CpuKernel::Result>
CpuKernel::invoke(llvm::ArrayRef<TensorView> inputs) {
  if (Error e = checkMemory(inputs))
    return std::move(e);
  std::vector<std::vector<uint8_t>> packedCopies;
  llvm::SmallVector<Descriptor, 8> descs;
  for (const TensorView &in : inputs) {
    void *data = in.data;
    if (!in.isContiguous()) {
      packedCopies.emplace_back(in.numel() * dtypeSize(in.dtype));
      TensorView dense(packedCopies.back().data(), in.dtype, in.shape);
      copyStrided(in, dense);
      data = dense.data;
    }
    descs.emplace_back(in.shape.size());
    descs.back().set(data, in.shape);
  }
  Descriptor result(res.shape.size());
  void *resultPtr = result.words.data();
  llvm::SmallVector<void *, 8> argPtrs(inputs.size());
  llvm::SmallVector<void *, 9> packed;
  packed.push_back(&resultPtr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    argPtrs[i] = descs[i].words.data();
    packed.push_back(&argPtrs[i]);
  }
  if (Error e = engine->invokePacked("_mlir_ciface_" + entry, packed))
    return std::move(e);

  // The program allocated its result with malloc (finalize-memref-to-llvm).
  Result out;
  out.allocated = reinterpret_cast<void *>(result.words[0]);
  // A program that returns (a view of) an argument hands back the caller's
  // buffer or a packed copy: never free it, and copy it out (below).
  bool aliased = llvm::any_of(descs, [&](const Descriptor &d) {
    return d.words[0] == result.words[0];
  });
  if (aliased)
    out.allocated = nullptr;
  size_t rank = res.shape.size();
  out.view.dtype = res.dtype;
  for (size_t d = 0; d < rank; ++d)
    out.view.shape.push_back(result.words[3 + d]);
  // Function results use the identity layout (one-shot-bufferize's
  // function-boundary option); refuse anything else rather than misread it.
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (out.view.shape[d] > 1 && result.words[3 + rank + d] != stride)
      return createStringError("the result of @" + entry +
                               " is not a contiguous row-major buffer");
    stride *= out.view.shape[d];
  }
  out.view.data = reinterpret_cast<uint8_t *>(result.words[1]) +
                  result.words[2] * dtypeSize(res.dtype);
  if (aliased) {
    size_t bytes = out.view.numel() * dtypeSize(res.dtype);
    out.allocated = std::malloc(std::max<size_t>(bytes, 1));
    if (!out.allocated)
      return createStringError("out of memory for the result of @" + entry);
    std::memcpy(out.allocated, out.view.data, bytes);
    out.view.data = out.allocated;
  }
  return std::move(out);
}

Expected<HostArray> CpuKernel::run(llvm::ArrayRef<HostArray> inputs) {
  auto host = convertInputs(inputs);
  if (!host)
    return host.takeError();
  auto result = invoke(host->views);
  if (!result)
    return result.takeError();
  HostArray out;
  out.dtype = res.dtype;
  out.shape.assign(result->view.shape.begin(), result->view.shape.end());
  auto *base = static_cast<uint8_t *>(result->view.data);
  out.bytes.assign(base, base + result->view.numel() * dtypeSize(res.dtype));
  return out;
}

Error CpuKernel::launch(llvm::ArrayRef<TensorView> inputs,
                        const TensorView &output, void *stream) {
  if (stream)
    return createStringError("a stream was given to a kernel that runs on "
                             "the CPU (pass nullptr)");
  if (auto shape = checkLaunch(inputs, output, /*alignment=*/0); !shape)
    return shape.takeError();
  auto result = invoke(inputs);
  if (!result)
    return result.takeError();
  if (!llvm::equal(result->view.shape, output.shape)) {
    TensorSig got{res.dtype, {}};
    got.shape.assign(result->view.shape.begin(), result->view.shape.end());
    return createStringError("the result of @" + entry + " is " + got.str() +
                             ", which does not fit the output");
  }
  // The result lives in a buffer the program allocates: one copy into the
  // caller's view (O(B*H*T*Dv), next to the O(T*S) attention itself).
  copyStrided(result->view, output);
  return Error::success();
}

} // namespace

Expected<std::shared_ptr<Kernel>> createCpuKernel(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName) {
  return CpuKernel::create(source, options, bufferName);
}

} // namespace attn::detail
