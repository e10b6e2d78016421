//===- CpuKernel.cpp - kernels JIT-compiled for the host CPU --------------===//

#include "KernelSupport.h"

#include "attn/Memory.h"

#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
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
  std::vector<int64_t> words;
  explicit Descriptor(size_t rank) : words(3 + 2 * rank, 0) {}
  void set(void *data, const std::vector<int64_t> &shape) {
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
  Error probeReferencePart(Pipeline pipeline);

private:
  /// Fails when a run at `shapes` needs more memory than can be allocated.
  Error checkMemory(llvm::ArrayRef<HostArray> inputs,
                    const std::vector<std::vector<int64_t>> &shapes);

  std::unique_ptr<ExecutionEngine> engine;
  /// The program after attn-fuse and attn-to-block: the attn ops left in
  /// it are those the reference lowering materializes (score maps).
  OwningOpRef<ModuleOp> referencePart;
  std::mutex memoryMutex;
  std::map<std::vector<std::vector<int64_t>>, uint64_t> workBytes;
};

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
  lowered->lookupSymbol<func::FuncOp>(options.entry)
      ->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(ctx));
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
  // ExecutionEngineOptions holds a function_ref: keep the callee alive.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(3, 0, nullptr);
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

Error CpuKernel::checkMemory(llvm::ArrayRef<HostArray> inputs,
                             const std::vector<std::vector<int64_t>> &shapes) {
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

Expected<HostArray> CpuKernel::run(llvm::ArrayRef<HostArray> inputs) {
  auto shapes = checkInputs(inputs);
  if (!shapes)
    return shapes.takeError();
  if (Error e = checkMemory(inputs, *shapes))
    return std::move(e);

  std::vector<std::vector<uint8_t>> storage;
  std::vector<Descriptor> descs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto bytes = convertTo(inputs[i], args[i].dtype, i);
    if (!bytes)
      return bytes.takeError();
    storage.push_back(std::move(*bytes));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    descs.emplace_back((*shapes)[i].size());
    descs.back().set(storage[i].data(), (*shapes)[i]);
  }
  Descriptor result(res.shape.size());
  void *resultPtr = result.words.data();
  std::vector<void *> argPtrs(inputs.size());
  std::vector<void *> packed;
  packed.push_back(&resultPtr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    argPtrs[i] = descs[i].words.data();
    packed.push_back(&argPtrs[i]);
  }
  if (Error e = engine->invokePacked("_mlir_ciface_" + entry, packed))
    return std::move(e);

  HostArray out;
  out.dtype = res.dtype;
  size_t rank = res.shape.size();
  size_t n = 1;
  for (size_t d = 0; d < rank; ++d) {
    out.shape.push_back(result.words[3 + d]);
    n *= result.words[3 + d];
  }
  // Function results use the identity layout (one-shot-bufferize's
  // function-boundary option); refuse anything else rather than misread it.
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (out.shape[d] > 1 && result.words[3 + rank + d] != stride) {
      std::free(reinterpret_cast<void *>(result.words[0]));
      return createStringError("the result of @" + entry +
                               " is not a contiguous row-major buffer");
    }
    stride *= out.shape[d];
  }
  size_t esz = dtypeSize(res.dtype);
  auto *base =
      reinterpret_cast<uint8_t *>(result.words[1]) + result.words[2] * esz;
  out.bytes.assign(base, base + n * esz);
  // The program allocated its result with malloc (finalize-memref-to-llvm).
  std::free(reinterpret_cast<void *>(result.words[0]));
  return out;
}

} // namespace

Expected<std::shared_ptr<Kernel>> createCpuKernel(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName) {
  return CpuKernel::create(source, options, bufferName);
}

} // namespace attn::detail
