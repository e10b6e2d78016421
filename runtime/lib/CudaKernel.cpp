//===- CudaKernel.cpp - kernels compiled for and launched on a CUDA GPU ---===//
//
// Compile: attn-to-gpu down to the NVVM dialect (buildGPUPipeline with
// format "none"), then the gpu.module serialized by its #nvvm.target: a
// cubin through ptxas when the toolkit has one, else PTX that the driver
// compiles at load. Images are cached on disk (DiskCache.h) keyed by the
// NVVM-level IR, so a cache hit skips LLVM's NVPTX backend and ptxas.
// Run: host arrays copied to the device, the plan's kernels launched in
// order (rope, gate, attention), the output copied back.
//
//===----------------------------------------------------------------------===//

#include "DiskCache.h"
#include "KernelSupport.h"

#include "attn/CudaDriver.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/GpuPlan.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn::detail {
namespace {

/// Bumped whenever generated code changes meaning, to invalidate caches.
constexpr const char *kCodegenVersion = "attn-gpu-11";

/// Device memory freed when the owner goes away.
struct DeviceBuffer {
  cuda::Device *dev = nullptr;
  uint64_t ptr = 0;
  size_t bytes = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (dev && ptr)
      llvm::consumeError(dev->free(ptr));
  }
};

/// A memref<?xT> argument as the kernel ABI passes it (GpuPlan.h): five
/// words, {allocated, aligned, offset, size, stride}.
struct MemRefArg {
  uint64_t allocated, aligned;
  int64_t offset, size, stride;
  MemRefArg(uint64_t p, int64_t n)
      : allocated(p), aligned(p), offset(0), size(n), stride(1) {}
  void push(std::vector<void *> &args) {
    args.push_back(&allocated);
    args.push_back(&aligned);
    args.push_back(&offset);
    args.push_back(&size);
    args.push_back(&stride);
  }
};

class CudaKernel : public ProgramKernel {
public:
  static Expected<std::shared_ptr<Kernel>>
  create(llvm::StringRef source, const CompileOptions &options,
         llvm::StringRef bufferName, std::shared_ptr<cuda::Device> device);
  Expected<HostArray> run(llvm::ArrayRef<HostArray> inputs) override;
  Expected<std::vector<double>> benchmark(llvm::ArrayRef<HostArray> inputs,
                                          unsigned runs) override;

private:
  /// Everything one call needs on the device.
  struct Launch {
    int64_t B, Hq, Hk, T, S;
    DeviceBuffer q, k, v, o, g, gsum, qr, kr, cosT, sinT;
    int64_t qPos0 = 0, tableStart = 0, tableRows = 0; // RoPE positions
  };
  Expected<std::unique_ptr<Launch>> upload(llvm::ArrayRef<HostArray> inputs);
  /// Enqueues the plan's kernels; with `wait`, synchronizes after each.
  Error enqueue(Launch &l, bool wait);

  mlir::attn::GpuPlan plan;
  /// Attention launches with programmatic stream serialization after the
  /// rope or gate kernel (GpuPlan::dependentLaunch).
  bool dependentLaunch = false;
  std::shared_ptr<cuda::Device> dev;
  std::unique_ptr<cuda::Module> module;
  int argQ = 0, argK = 1, argV = 2, argG = -1;
};

namespace {

/// The kernel shape CompileOptions::gpu asks for, unset fields from the
/// environment, then the device's defaults.
struct KernelShape {
  std::string chip;
  int warps, mTiles, blockN;
  bool overlap;
  bool dependentLaunch;
};

/// The integer in environment variable `name`, `fallback` when unset or
/// empty; anything but a decimal integer in [lo, hi] is an error naming the
/// variable (std::atoi would read "8x" as 8 and "abc" as 0).
Expected<int> envInt(const char *name, int fallback, int lo, int hi) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  int value = 0;
  if (llvm::StringRef(v).getAsInteger(10, value) || value < lo || value > hi)
    return createStringError(std::string(name) + "='" + v +
                             "' is not an integer in [" + std::to_string(lo) +
                             ", " + std::to_string(hi) + "]");
  return value;
}

/// The kernel shape CompileOptions::gpu asks for, unset fields from the
/// environment, then the device's defaults; every value is checked with
/// the pipeline's own option checks before anything is compiled.
Expected<KernelShape> resolveShape(const GpuKernelOptions &o, int major,
                                   int minor) {
  KernelShape s;
  s.chip = o.chip;
  if (s.chip.empty())
    if (const char *c = std::getenv("ATTN_GPU_CHIP"))
      s.chip = c;
  if (s.chip.empty())
    s.chip = "sm_" + std::to_string(major) + std::to_string(minor) +
             (major == 9 && minor == 0 ? "a" : "");
  auto pick = [](int set, const char *name, int fallback, int lo, int hi,
                 int &out) -> Error {
    if (set) {
      out = set;
      return Error::success();
    }
    auto v = envInt(name, fallback, lo, hi);
    if (!v)
      return v.takeError();
    out = *v;
    return Error::success();
  };
  int overlap = 0, pdl = 1;
  // 0 in CompileOptions means "unset" for the shape fields; -1 for the
  // booleans.
  if (Error e = pick(o.warps, "ATTN_GPU_WARPS", 4, 1, 1024, s.warps))
    return std::move(e);
  if (Error e = pick(o.mTiles, "ATTN_GPU_M_TILES", 1, 1, 1024, s.mTiles))
    return std::move(e);
  if (Error e = pick(o.blockN, "ATTN_GPU_BLOCK_N", 64, 1, 1 << 20, s.blockN))
    return std::move(e);
  if (o.overlap >= 0)
    overlap = o.overlap;
  else if (Error e = pick(0, "ATTN_GPU_OVERLAP", 0, 0, 1, overlap))
    return std::move(e);
  if (o.dependentLaunch >= 0)
    pdl = o.dependentLaunch;
  else if (Error e = pick(0, "ATTN_GPU_PDL", 1, 0, 1, pdl))
    return std::move(e);
  s.overlap = overlap != 0;
  s.dependentLaunch = pdl != 0;
  mlir::attn::GPUPipelineOptions check;
  check.chip = s.chip;
  check.warps = s.warps;
  check.mTiles = s.mTiles;
  check.blockN = s.blockN;
  check.overlap = s.overlap;
  check.format = "none";
  if (std::string bad = mlir::attn::checkGPUPipelineOptions(check);
      !bad.empty())
    return createStringError(
        bad + " (from CompileOptions::gpu or ATTN_GPU_CHIP, ATTN_GPU_WARPS, "
              "ATTN_GPU_M_TILES, ATTN_GPU_BLOCK_N, ATTN_GPU_OVERLAP)");
  return s;
}

} // namespace

Expected<std::shared_ptr<Kernel>>
CudaKernel::create(llvm::StringRef source, const CompileOptions &options,
                   llvm::StringRef bufferName,
                   std::shared_ptr<cuda::Device> device) {
  auto kernel = std::make_shared<CudaKernel>();
  if (Error e = kernel->load(source, options.entry, bufferName))
    return std::move(e);
  kernel->dev = std::move(device);
  MLIRContext *ctx = kernel->ctx.get();
  DiagnosticCollector diags(ctx);

  OwningOpRef<ModuleOp> lowered = kernel->program->clone();
  // Other functions of the module are not compiled for the GPU.
  for (auto fn : llvm::make_early_inc_range(lowered->getOps<func::FuncOp>()))
    if (fn.getSymName() != options.entry)
      fn.erase();
  mlir::attn::GPUPipelineOptions gpuOpts;
  const cuda::DeviceInfo &info = kernel->dev->info();
  // sm_90 devices get the sm_90a (wgmma) kernel: arch-specific code, built
  // for exactly this device; sm_90 (mma.sync) stays selectable.
  auto resolved = resolveShape(options.gpu, info.smMajor, info.smMinor);
  if (!resolved)
    return resolved.takeError();
  const KernelShape shape = *resolved;
  const std::string &chip = shape.chip;
  gpuOpts.chip = chip;
  gpuOpts.warps = shape.warps;
  gpuOpts.mTiles = shape.mTiles;
  gpuOpts.blockN = shape.blockN;
  gpuOpts.overlap = shape.overlap;
  gpuOpts.format = "none";
  PassManager pm(ctx);
  mlir::attn::buildGPUPipeline(pm, gpuOpts);
  if (failed(pm.run(*lowered)))
    return diags.error("compiling " + bufferName.str() + " for " + info.name +
                       " (" + chip + ") failed");

  auto fn = lowered->lookupSymbol<func::FuncOp>(options.entry);
  auto att = *fn.getOps<mlir::attn::AttentionOp>().begin();
  for (auto [slot, operand] :
       {std::pair<int *, Value>{&kernel->argQ, att.getQ()},
        {&kernel->argK, att.getK()},
        {&kernel->argV, att.getV()},
        {&kernel->argG, att.getG()}})
    if (operand)
      *slot = cast<BlockArgument>(operand).getArgNumber();
  auto gm = lowered->lookupSymbol<gpu::GPUModuleOp>((options.entry + "_gpu"));
  auto plan = mlir::attn::GpuPlan::fromAttr(
      gm ? gm->getAttrOfType<DictionaryAttr>("attn.plan") : DictionaryAttr());
  if (!gm || failed(plan))
    return createStringError("internal error: no GPU plan for @" +
                             options.entry);
  kernel->plan = *plan;
  kernel->dependentLaunch =
      shape.dependentLaunch && plan->attentionOverlapsPrologue();
  kernel->notes.push_back(
      "GPU kernel: " + chip +
      (plan->wgmma ? (plan->overlap ? " wgmma overlapped" : " wgmma")
                   : " mma.sync") +
      ", " + std::to_string(plan->warps) + " warps, block " +
      std::to_string(plan->blockM()) + " x " + std::to_string(plan->blockN) +
      (kernel->dependentLaunch ? ", dependent launch" : ""));

  // Serialize (or take from the disk cache).
  std::string toolkit = mlir::attn::cudaToolkitPath();
  llvm::SmallString<256> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  bool binary = llvm::sys::fs::can_execute(ptxas);
  std::string key;
  {
    llvm::raw_string_ostream os(key);
    os << kCodegenVersion << '\0' << chip << '\0' << (binary ? "cubin" : "ptx")
       << '\0';
    gm->print(os);
  }
  std::vector<char> image;
  if (auto cached = cacheLoad(key)) {
    image = std::move(*cached);
    kernel->notes.push_back("GPU image from the disk cache (" +
                            cacheDirectory() + ")");
  } else {
    auto target = cast<gpu::TargetAttrInterface>(gm.getTargetsAttr()[0]);
    gpu::TargetOptions targetOpts(toolkit, {}, {}, {},
                                  binary ? gpu::CompilationTarget::Binary
                                         : gpu::CompilationTarget::Assembly);
    std::optional<SmallVector<char, 0>> obj =
        target.serializeToObject(gm, targetOpts);
    if (!obj)
      return diags.error("generating " +
                         std::string(binary ? "a cubin" : "PTX") + " for " +
                         chip + " failed");
    image.assign(obj->begin(), obj->end());
    if (!binary) {
      image.push_back('\0');
      kernel->notes.push_back("no ptxas under " + toolkit +
                              ": the driver compiles the PTX at load");
    }
    cacheStore(key, image);
  }
  auto mod = kernel->dev->load(image);
  if (!mod)
    return mod.takeError();
  kernel->module = std::move(*mod);
  for (std::string &r : diags.remarks)
    kernel->notes.push_back(r);
  return std::shared_ptr<Kernel>(std::move(kernel));
}

Expected<std::unique_ptr<CudaKernel::Launch>>
CudaKernel::upload(llvm::ArrayRef<HostArray> inputs) {
  auto shapes = checkInputs(inputs);
  if (!shapes)
    return shapes.takeError();
  auto l = std::make_unique<Launch>();
  const auto &qs = (*shapes)[argQ], &ks = (*shapes)[argK];
  l->B = qs[0];
  l->Hq = qs[1];
  l->T = qs[2];
  l->Hk = ks[1];
  l->S = ks[2];
  if (l->B * l->Hq > 65535)
    return createStringError("B * H = " + std::to_string(l->B * l->Hq) +
                             " exceeds the grid limit of 65535");
  auto make = [&](DeviceBuffer &buf, size_t bytes) -> Error {
    buf.dev = dev.get();
    buf.bytes = bytes;
    auto p = dev->alloc(std::max<size_t>(bytes, 16));
    if (!p)
      return p.takeError();
    buf.ptr = *p;
    return Error::success();
  };
  auto put = [&](DeviceBuffer &buf, size_t idx) -> Error {
    auto bytes = convertTo(inputs[idx], args[idx].dtype, idx);
    if (!bytes)
      return bytes.takeError();
    if (Error e = make(buf, bytes->size()))
      return e;
    return dev->copyToDevice(buf.ptr, bytes->data(), buf.bytes);
  };
  if (Error e = put(l->q, argQ))
    return std::move(e);
  if (Error e = put(l->k, argK))
    return std::move(e);
  if (Error e = put(l->v, argV))
    return std::move(e);
  if (Error e = make(l->o, l->B * l->Hq * l->T * plan.valueDim * 2))
    return std::move(e);
  // Poisoned (all-ones bytes: NaN in f16/bf16): a row the kernel fails to
  // write cannot pass a comparison.
  if (Error e = dev->fill(l->o.ptr, 0xFF, l->o.bytes))
    return std::move(e);
  if (plan.gate) {
    if (Error e = put(l->g, argG))
      return std::move(e);
    if (Error e = make(l->gsum, l->B * l->Hq * plan.gateRowFloats(l->S) * 4))
      return std::move(e);
  }
  if (plan.rope) {
    if (!plan.ropeQInKernel())
      if (Error e = make(l->qr, l->q.bytes))
        return std::move(e);
    if (Error e = make(l->kr, l->k.bytes))
      return std::move(e);
    // Tables cover every position a query or key takes; queries may sit
    // below the keys' offset (rope_q_offset, or T > S without a mask).
    l->qPos0 = plan.ropeQOffset ? plan.ropeQOffsetValue
                                : plan.ropeOffset + l->S - l->T;
    l->tableStart = std::min(plan.ropeOffset, l->qPos0);
    l->tableRows =
        std::max(plan.ropeOffset + l->S, l->qPos0 + l->T) - l->tableStart;
    size_t tableBytes = l->tableRows * (plan.ropeDim / 2) * 4;
    if (Error e = make(l->cosT, tableBytes))
      return std::move(e);
    if (Error e = make(l->sinT, tableBytes))
      return std::move(e);
  }
  return std::move(l);
}

Error CudaKernel::enqueue(Launch &l, bool wait) {
  if (l.T == 0 || l.B * l.Hq == 0)
    return Error::success();
  const int64_t D = plan.headDim;
  auto elems = [](const DeviceBuffer &b) {
    return static_cast<int64_t>(b.bytes / 2);
  };
  auto blocksFor = [](int64_t n, int64_t per) {
    return static_cast<unsigned>((n + per - 1) / per);
  };
  uint64_t q = l.q.ptr, k = l.k.ptr;
  if (plan.rope) {
    MemRefArg cosT(l.cosT.ptr, l.cosT.bytes / 4),
        sinT(l.sinT.ptr, l.sinT.bytes / 4);
    {
      int64_t count = l.tableRows * (plan.ropeDim / 2), start = l.tableStart;
      std::vector<void *> a;
      cosT.push(a);
      sinT.push(a);
      a.push_back(&count);
      a.push_back(&start);
      if (Error e =
              dev->launch(*module, "rope_table", {blocksFor(count, 256), 1, 1},
                          {256, 1, 1}, 0, a, wait))
        return e;
    }
    struct Job {
      const DeviceBuffer &x, &y;
      int64_t rows, len, pos0;
    } jobs[] = {
        {l.q, l.qr, l.B * l.Hq * l.T, l.T, l.qPos0 - l.tableStart},
        {l.k, l.kr, l.B * l.Hk * l.S, l.S, plan.ropeOffset - l.tableStart}};
    for (Job &j : jobs) {
      // The attention kernel rotates q itself when it can.
      if (j.rows == 0 || (&j.x == &l.q && plan.ropeQInKernel()))
        continue;
      MemRefArg x(j.x.ptr, elems(j.x)), y(j.y.ptr, elems(j.y));
      int64_t rows = j.rows, len = j.len, pos0 = j.pos0;
      std::vector<void *> a;
      x.push(a);
      y.push(a);
      cosT.push(a);
      sinT.push(a);
      a.push_back(&rows);
      a.push_back(&len);
      a.push_back(&pos0);
      if (Error e = dev->launch(
              *module, "rope",
              {blocksFor(rows * D / 2 / plan.ropePairsPerThread(), 256), 1, 1},
              {256, 1, 1}, 0, a, wait))
        return e;
    }
    if (!plan.ropeQInKernel())
      q = l.qr.ptr;
    k = l.kr.ptr;
  }
  if (plan.gate) {
    MemRefArg g(l.g.ptr, l.g.bytes / 4), G(l.gsum.ptr, l.gsum.bytes / 4);
    int64_t S = l.S;
    std::vector<void *> a;
    g.push(a);
    G.push(a);
    a.push_back(&S);
    if (Error e = dev->launch(
            *module, "gate", {static_cast<unsigned>(l.B * l.Hq), 1, 1},
            {static_cast<unsigned>(mlir::attn::GpuPlan::kGateThreads), 1, 1}, 0,
            a, wait))
      return e;
  }
  MemRefArg mq(q, elems(l.q)), mk(k, elems(l.k)), mv(l.v.ptr, elems(l.v)),
      mo(l.o.ptr, elems(l.o));
  MemRefArg mg(plan.gate ? l.gsum.ptr : l.o.ptr,
               plan.gate ? static_cast<int64_t>(l.gsum.bytes / 4) : 0);
  int64_t Hq = l.Hq, Hk = l.Hk, T = l.T, S = l.S;
  int64_t qPos0 = l.qPos0 - l.tableStart;
  std::vector<void *> a;
  for (MemRefArg *m : {&mq, &mk, &mv, &mo, &mg})
    m->push(a);
  for (int64_t *x : {&Hq, &Hk, &T, &S})
    a.push_back(x);
  MemRefArg mcos(l.cosT.ptr, l.cosT.bytes / 4),
      msin(l.sinT.ptr, l.sinT.bytes / 4);
  if (plan.ropeQInKernel()) {
    mcos.push(a);
    msin.push(a);
    a.push_back(&qPos0);
  }
  // The attention kernel's prologue overlaps the rope or gate kernel
  // before it (GpuPlan::dependentLaunch; GpuKernelOptions::dependentLaunch
  // = 0 launches it after that kernel's end, as any other).
  return dev->launch(
      *module, "attention",
      {blocksFor(l.T, plan.blockM()), static_cast<unsigned>(l.B * l.Hq), 1},
      {static_cast<unsigned>(plan.threads()), 1, 1},
      static_cast<unsigned>(plan.smemBytes()), a, wait, dependentLaunch);
}

Expected<HostArray> CudaKernel::run(llvm::ArrayRef<HostArray> inputs) {
  auto l = upload(inputs);
  if (!l)
    return l.takeError();
  if (Error e = enqueue(**l, /*wait=*/true))
    return std::move(e);
  HostArray out;
  out.dtype = res.dtype;
  out.shape = {(*l)->B, (*l)->Hq, (*l)->T, plan.valueDim};
  out.bytes.resize((*l)->o.bytes);
  if (Error e = dev->copyToHost(out.bytes.data(), (*l)->o.ptr, (*l)->o.bytes))
    return std::move(e);
  return out;
}

Expected<std::vector<double>>
CudaKernel::benchmark(llvm::ArrayRef<HostArray> inputs, unsigned runs) {
  auto l = upload(inputs);
  if (!l)
    return l.takeError();
  // One checked call first: faults surface with the kernel's name.
  if (Error e = enqueue(**l, /*wait=*/true))
    return std::move(e);
  std::vector<double> ms;
  for (unsigned i = 0; i < runs; ++i) {
    auto t = dev->timeMs([&] { return enqueue(**l, /*wait=*/false); });
    if (!t)
      return t.takeError();
    ms.push_back(*t);
  }
  if (Error e = dev->synchronize())
    return std::move(e);
  return ms;
}

} // namespace

Expected<std::shared_ptr<Kernel>>
createCudaKernel(llvm::StringRef source, const CompileOptions &options,
                 llvm::StringRef bufferName,
                 std::shared_ptr<cuda::Device> device) {
  return CudaKernel::create(source, options, bufferName, std::move(device));
}

} // namespace attn::detail
