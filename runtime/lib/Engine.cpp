//===- Engine.cpp - device selection, compilation cache, CPU kernels ------===//

#include "attn/Runtime.h"

#include "attn/CudaDriver.h"

#include "ShapeSpecialize.h"
#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <set>

using namespace mlir;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn {

llvm::StringRef deviceName(Device d) {
  return d == Device::CPU ? "cpu" : "cuda";
}

Expected<Pipeline> parsePipeline(llvm::StringRef name) {
  if (name == "auto" || name.empty())
    return Pipeline::Auto;
  if (name == "reference")
    return Pipeline::Reference;
  if (name == "fused")
    return Pipeline::Fused;
  return createStringError("unknown pipeline '" + name.str() +
                           "' (expected auto, fused or reference)");
}

std::string TensorSig::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtypeName(dtype).str() + ">";
}

Kernel::~Kernel() = default;

namespace {

/// Collects the diagnostics emitted while it lives, for error values.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx)
      : os(text), handler(ctx, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Remark) {
            std::string r;
            llvm::raw_string_ostream ros(r);
            ros << diag.getLocation() << ": " << diag.str();
            remarks.push_back(r);
            return success();
          }
          os << diag.getLocation() << ": " << diag.str() << "\n";
          for (Diagnostic &note : diag.getNotes())
            os << "  note: " << note.str() << "\n";
          return success();
        }) {}
  /// Remarks the compilation made (e.g. what was not fused), in order.
  std::vector<std::string> remarks;
  Error error(llvm::StringRef what) {
    return createStringError(what.str() + ":\n" +
                             llvm::StringRef(text).rtrim().str());
  }

private:
  std::string text;
  llvm::raw_string_ostream os;
  ScopedDiagnosticHandler handler;
};

Expected<DType> dtypeOf(Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isInteger(64))
    return DType::I64;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return createStringError("unsupported element type " + s);
}

Expected<TensorSig> sigOf(Type t, llvm::StringRef what) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked)
    return createStringError(what.str() + " must be a ranked tensor");
  auto dtype = dtypeOf(ranked.getElementType());
  if (!dtype)
    return createStringError(what.str() + ": " +
                             llvm::toString(dtype.takeError()));
  TensorSig sig{*dtype, {}};
  for (int64_t d : ranked.getShape())
    sig.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return sig;
}

/// Converts `in` to the element type `want`, or fails naming argument `idx`.
Expected<std::vector<uint8_t>> convertTo(const HostArray &in, DType want,
                                         size_t idx) {
  if (in.dtype == want)
    return in.bytes;
  auto isInt = [](DType t) { return t == DType::I32 || t == DType::I64; };
  if (isInt(in.dtype) != isInt(want))
    return createStringError("argument " + std::to_string(idx) +
                             ": cannot convert " + dtypeName(in.dtype).str() +
                             " to " + dtypeName(want).str());
  HostArray out{want, in.shape,
                std::vector<uint8_t>(in.numel() * dtypeSize(want))};
  for (size_t i = 0, n = in.numel(); i < n; ++i)
    out.set(i, in.get(i));
  return std::move(out.bytes);
}

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
std::string openMPLibrary() {
  if (const char *env = std::getenv("ATTN_LIBOMP"))
    return llvm::sys::fs::exists(env) ? env : "";
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

class CpuKernel : public Kernel {
public:
  static Expected<std::shared_ptr<Kernel>> create(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName);
  Expected<HostArray> run(llvm::ArrayRef<HostArray> inputs) override;

private:
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> program; // as given, for shape checks at run time
  std::unique_ptr<ExecutionEngine> engine;
  std::string entry;
  std::mutex mutex; // guards diagnostics on ctx during run-time checks
  std::set<std::vector<std::vector<int64_t>>> verifiedShapes;
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
  DialectRegistry registry;
  registry
      .insert<mlir::attn::AttnDialect, mlir::attn_block::AttnBlockDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  kernel->ctx = std::make_unique<MLIRContext>(registry);
  kernel->ctx->loadAllAvailableDialects();
  MLIRContext *ctx = kernel->ctx.get();
  kernel->entry = options.entry;

  DiagnosticCollector diags(ctx);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  kernel->program = parseSourceFile<ModuleOp>(sourceMgr, ctx);
  if (!kernel->program)
    return diags.error("cannot parse " + bufferName.str());

  auto func = kernel->program->lookupSymbol<func::FuncOp>(options.entry);
  if (!func || func.isDeclaration())
    return createStringError("no function @" + options.entry + " in " +
                             bufferName.str());
  for (auto [i, t] : llvm::enumerate(func.getArgumentTypes())) {
    auto sig = sigOf(t, "argument " + std::to_string(i));
    if (!sig)
      return sig.takeError();
    kernel->args.push_back(*sig);
  }
  if (func.getNumResults() != 1)
    return createStringError("@" + options.entry +
                             " must return exactly one tensor, it returns " +
                             std::to_string(func.getNumResults()));
  auto res = sigOf(func.getResultTypes()[0], "the result");
  if (!res)
    return res.takeError();
  kernel->res = *res;

  OwningOpRef<ModuleOp> lowered = kernel->program->clone();
  lowered->lookupSymbol<func::FuncOp>(options.entry)
      ->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(ctx));
  // Program instances run on OpenMP threads when libomp can be loaded.
  std::string omp = openMPLibrary();
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

Expected<HostArray> CpuKernel::run(llvm::ArrayRef<HostArray> inputs) {
  if (inputs.size() != args.size())
    return createStringError("@" + entry + " takes " +
                             std::to_string(args.size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSig &sig = args[i];
    const HostArray &in = inputs[i];
    bool ok = in.shape.size() == sig.shape.size();
    for (size_t d = 0; ok && d < sig.shape.size(); ++d)
      ok =
          in.shape[d] >= 0 && (sig.shape[d] < 0 || sig.shape[d] == in.shape[d]);
    if (!ok) {
      TensorSig got{in.dtype, in.shape};
      return createStringError("input " + std::to_string(i) + " must be " +
                               sig.str() + ", got " + got.str());
    }
    shapes.push_back(in.shape);
  }
  {
    // Verifying clones the function: once per distinct set of input shapes,
    // not on every run.
    std::lock_guard<std::mutex> lock(mutex);
    if (!verifiedShapes.count(shapes)) {
      auto func = program->lookupSymbol<func::FuncOp>(entry);
      if (Error e = verifyAtShapes(func, shapes))
        return std::move(e);
      verifiedShapes.insert(shapes);
    }
  }

  std::vector<std::vector<uint8_t>> storage;
  std::vector<Descriptor> descs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto bytes = convertTo(inputs[i], args[i].dtype, i);
    if (!bytes)
      return bytes.takeError();
    storage.push_back(std::move(*bytes));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    descs.emplace_back(shapes[i].size());
    descs.back().set(storage[i].data(), shapes[i]);
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

Engine::Engine(Device dev) : dev(dev) {}
Engine::~Engine() = default;

Expected<std::unique_ptr<Engine>> Engine::create(llvm::StringRef device) {
  std::string want = device.str();
  if (want.empty())
    if (const char *env = std::getenv("ATTN_DEVICE"))
      want = env;
  if (want.empty() || want == "cpu" || want == "auto")
    return std::unique_ptr<Engine>(new Engine(Device::CPU));
  if (want == "cuda") {
    // Say what is there: no driver, no device, or a device the code
    // generator cannot target yet.
    auto device = cuda::Device::open();
    if (!device)
      return createStringError("device 'cuda' requested: " +
                               llvm::toString(device.takeError()));
    return createStringError(
        "device 'cuda' requested: found " + (*device)->info().name + " (" +
        (*device)->info().chip() +
        "), but this build of attn has no GPU code generator yet; use "
        "--device=cpu (or unset ATTN_DEVICE)");
  }
  return createStringError("unknown device '" + want +
                           "' (expected cpu or cuda)");
}

Expected<std::shared_ptr<Kernel>> Engine::compile(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName) {
  // The buffer name is part of the key: diagnostics and remarks name it.
  std::string key = options.entry + '\0' +
                    std::to_string(static_cast<int>(options.pipeline)) + '\0' +
                    bufferName.str() + '\0' + source.str();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end())
      return it->second;
  }
  auto kernel = CpuKernel::create(source, options, bufferName);
  if (!kernel)
    return kernel.takeError();
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, *kernel);
  return *kernel;
}

} // namespace attn
