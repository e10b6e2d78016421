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
#include <map>

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
  ~CudaKernel() override;
  Expected<HostArray> run(llvm::ArrayRef<HostArray> inputs) override;
  Expected<std::vector<double>> benchmark(llvm::ArrayRef<HostArray> inputs,
                                          unsigned runs) override;
  Error launch(llvm::ArrayRef<TensorView> inputs, const TensorView &output,
               void *stream) override;

private:
  /// Scratch of one stream: rope tables, rotated q/k, the gate's prefix
  /// sums, contiguous copies of strided views. Grown stream-ordered, kept
  /// across launches, freed with the kernel. The mutex is held while a
  /// launch enqueues, so two threads on one stream never hand the same
  /// scratch to interleaved kernels.
  struct Scratch {
    struct Buf {
      uint64_t ptr = 0;
      size_t bytes = 0;
    };
    std::mutex mutex;
    Buf qr, kr, cosT, sinT, gsum, packed[5];
  };
  /// Device pointers and sizes of one launch.
  struct Problem {
    int64_t B, Hq, Hk, T, S;
    uint64_t q = 0, k = 0, v = 0, o = 0, g = 0;
    int64_t qPos0 = 0, tableStart = 0, tableRows = 0; // RoPE positions
  };
  Scratch &scratchFor(void *stream);
  Expected<uint64_t> reserve(Scratch::Buf &buf, size_t bytes, void *stream);
  /// Copies `src` into `dst` (same shape, innermost stride 1) on `stream`.
  Error copyView(const TensorView &src, const TensorView &dst, void *stream);
  /// launch(); with `wait`, synchronizes after each kernel (faults then
  /// name it).
  Error launchOn(llvm::ArrayRef<TensorView> inputs, const TensorView &output,
                 void *stream, bool wait);
  /// Enqueues the plan's kernels.
  Error enqueue(Problem &p, Scratch &s, void *stream, bool wait);

  mlir::attn::GpuPlan plan;
  /// Attention launches with programmatic stream serialization after the
  /// rope or gate kernel (GpuPlan::dependentLaunch).
  bool dependentLaunch = false;
  std::shared_ptr<cuda::Device> dev;
  std::unique_ptr<cuda::Module> module;
  int argQ = 0, argK = 1, argV = 2, argG = -1;
  std::mutex scratchMutex;
  std::map<void *, std::unique_ptr<Scratch>> scratch;
};

namespace {

/// The kernel shape CompileOptions::gpu asks for, unset fields from the
/// environment, then the device's defaults.
struct KernelShape {
  std::string chip;
  int warps, mTiles, blockN;
  bool overlap;
  bool dependentLaunch;
  /// $ATTN_GPU_LOWERING: direct (default) or block (the block program
  /// through attn-block-to-gpu; GPUPipelineOptions::lowering).
  std::string lowering;
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
  const char *lowering = std::getenv("ATTN_GPU_LOWERING");
  s.lowering = !o.lowering.empty()     ? o.lowering
               : lowering && *lowering ? lowering
                                       : "direct";
  mlir::attn::GPUPipelineOptions check;
  check.chip = s.chip;
  check.warps = s.warps;
  check.mTiles = s.mTiles;
  check.blockN = s.blockN;
  check.overlap = s.overlap;
  check.lowering = s.lowering;
  check.format = "none";
  if (std::string bad = mlir::attn::checkGPUPipelineOptions(check);
      !bad.empty())
    return createStringError(
        bad + " (from CompileOptions::gpu or ATTN_GPU_CHIP, ATTN_GPU_WARPS, "
              "ATTN_GPU_M_TILES, ATTN_GPU_BLOCK_N, ATTN_GPU_OVERLAP, "
              "ATTN_GPU_LOWERING)");
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
  gpuOpts.lowering = shape.lowering;
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
      (shape.lowering == "block" ? " (block program)" : "") + ", " +
      std::to_string(plan->warps) + " warps, block " +
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

CudaKernel::~CudaKernel() {
  // Scratch may still be in use by enqueued work; the context must be
  // current for the frees and the module's unload.
  llvm::consumeError(dev->synchronize());
  for (auto &[stream, s] : scratch)
    for (Scratch::Buf *b :
         {&s->qr, &s->kr, &s->cosT, &s->sinT, &s->gsum, &s->packed[0],
          &s->packed[1], &s->packed[2], &s->packed[3], &s->packed[4]})
      if (b->ptr)
        llvm::consumeError(dev->free(b->ptr));
}

CudaKernel::Scratch &CudaKernel::scratchFor(void *stream) {
  std::lock_guard<std::mutex> lock(scratchMutex);
  std::unique_ptr<Scratch> &s = scratch[stream];
  if (!s)
    s = std::make_unique<Scratch>();
  return *s;
}

Expected<uint64_t> CudaKernel::reserve(Scratch::Buf &buf, size_t bytes,
                                       void *stream) {
  bytes = std::max<size_t>(bytes, 16);
  if (buf.bytes >= bytes)
    return buf.ptr;
  // Stream-ordered: work enqueued before still reads the old buffer.
  if (buf.ptr)
    if (Error e = dev->freeAsync(buf.ptr, stream))
      return std::move(e);
  buf = {};
  auto p = dev->allocAsync(bytes, stream);
  if (!p)
    return p.takeError();
  buf = {*p, bytes};
  return *p;
}

Error CudaKernel::copyView(const TensorView &src, const TensorView &dst,
                           void *stream) {
  // Rows of the innermost dim are contiguous; one 2-D copy covers the
  // longest outer dim, a loop the two others.
  size_t rank = src.shape.size(), esz = dtypeSize(src.dtype);
  int64_t n[4] = {1, 1, 1, 1}, ss[4] = {0, 0, 0, 1}, ds[4] = {0, 0, 0, 1};
  for (size_t d = 0; d < rank; ++d) {
    n[4 - rank + d] = src.shape[d];
    ss[4 - rank + d] = src.stride(d);
    ds[4 - rank + d] = dst.stride(d);
  }
  int y = 0;
  for (int d = 1; d < 3; ++d)
    if (n[d] >= n[y])
      y = d;
  int a = y == 0 ? 1 : 0, b = y == 2 ? 1 : 2;
  size_t width = n[3] * esz;
  size_t spitch = n[y] > 1 ? ss[y] * esz : width,
         dpitch = n[y] > 1 ? ds[y] * esz : width;
  if (spitch < width || dpitch < width)
    return createStringError("strided view with overlapping rows (stride " +
                             std::to_string(ss[y]) + " < " +
                             std::to_string(n[3]) + ")");
  auto base = [](const TensorView &v) {
    return reinterpret_cast<uint64_t>(v.data);
  };
  for (int64_t i = 0; i < n[a]; ++i)
    for (int64_t j = 0; j < n[b]; ++j)
      if (Error e =
              dev->copy2D(base(dst) + (i * ds[a] + j * ds[b]) * esz, dpitch,
                          base(src) + (i * ss[a] + j * ss[b]) * esz, spitch,
                          width, n[y], stream))
        return e;
  return Error::success();
}

Error CudaKernel::launch(llvm::ArrayRef<TensorView> inputs,
                         const TensorView &output, void *stream) {
  return launchOn(inputs, output, stream, /*wait=*/false);
}

Error CudaKernel::launchOn(llvm::ArrayRef<TensorView> inputs,
                           const TensorView &output, void *stream, bool wait) {
  // cp.async and vector accesses read 16-byte chunks.
  auto shape = checkLaunch(inputs, output, /*alignment=*/16);
  if (!shape)
    return shape.takeError();
  auto onDevice = [&](const TensorView &v, const std::string &what) -> Error {
    size_t r = v.shape.size();
    if (r && v.shape[r - 1] > 1 && v.stride(r - 1) != 1)
      return createStringError(what +
                               ": on the GPU the innermost stride "
                               "must be 1, got " +
                               std::to_string(v.stride(r - 1)));
    if (v.numel() && !dev->isDeviceMemory(reinterpret_cast<uint64_t>(v.data)))
      return createStringError(what + ": not device memory of " +
                               dev->info().name);
    return Error::success();
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    if (Error e = onDevice(inputs[i], "input " + std::to_string(i)))
      return e;
  if (Error e = onDevice(output, "the output"))
    return e;

  Problem p;
  const TensorView &q = inputs[argQ], &k = inputs[argK];
  p.B = q.shape[0];
  p.Hq = q.shape[1];
  p.T = q.shape[2];
  p.Hk = k.shape[1];
  p.S = k.shape[2];
  if (p.B * p.Hq > 65535)
    return createStringError("B * H = " + std::to_string(p.B * p.Hq) +
                             " exceeds the grid limit of 65535");
  if (p.T == 0 || p.B * p.Hq == 0)
    return Error::success();

  Scratch &s = scratchFor(stream);
  std::lock_guard<std::mutex> lock(s.mutex);
  // Contiguous views are used in place, strided ones packed first.
  auto dense = [&](const TensorView &v, Scratch::Buf &buf,
                   uint64_t &ptr) -> Error {
    if (v.isContiguous()) {
      ptr = reinterpret_cast<uint64_t>(v.data);
      return Error::success();
    }
    auto at = reserve(buf, v.numel() * dtypeSize(v.dtype), stream);
    if (!at)
      return at.takeError();
    ptr = *at;
    TensorView packedView(reinterpret_cast<void *>(*at), v.dtype, v.shape, {},
                          Device::CUDA);
    return copyView(v, packedView, stream);
  };
  if (Error e = dense(q, s.packed[0], p.q))
    return e;
  if (Error e = dense(k, s.packed[1], p.k))
    return e;
  if (Error e = dense(inputs[argV], s.packed[2], p.v))
    return e;
  if (plan.gate)
    if (Error e = dense(inputs[argG], s.packed[3], p.g))
      return e;
  bool outDense = output.isContiguous();
  if (outDense) {
    p.o = reinterpret_cast<uint64_t>(output.data);
  } else {
    auto at =
        reserve(s.packed[4], output.numel() * dtypeSize(output.dtype), stream);
    if (!at)
      return at.takeError();
    p.o = *at;
  }
  if (Error e = enqueue(p, s, stream, wait))
    return e;
  if (outDense)
    return Error::success();
  TensorView packedOut(reinterpret_cast<void *>(p.o), output.dtype,
                       output.shape, {}, Device::CUDA);
  return copyView(packedOut, output, stream);
}

Error CudaKernel::enqueue(Problem &l, Scratch &s, void *stream, bool wait) {
  const int64_t D = plan.headDim;
  auto blocksFor = [](int64_t n, int64_t per) {
    return static_cast<unsigned>((n + per - 1) / per);
  };
  const int64_t qElems = l.B * l.Hq * l.T * D, kElems = l.B * l.Hk * l.S * D,
                vElems = l.B * l.Hk * l.S * plan.valueDim,
                oElems = l.B * l.Hq * l.T * plan.valueDim;
  uint64_t q = l.q, k = l.k, cosPtr = 0, sinPtr = 0;
  int64_t tableFloats = 0;
  if (plan.rope) {
    // Tables cover every position a query or key takes; queries may sit
    // below the keys' offset (rope_q_offset, or T > S without a mask).
    l.qPos0 =
        plan.ropeQOffset ? plan.ropeQOffsetValue : plan.ropeOffset + l.S - l.T;
    l.tableStart = std::min(plan.ropeOffset, l.qPos0);
    l.tableRows = std::max(plan.ropeOffset + l.S, l.qPos0 + l.T) - l.tableStart;
    tableFloats = l.tableRows * (plan.ropeDim / 2);
    auto c = reserve(s.cosT, tableFloats * 4, stream);
    if (!c)
      return c.takeError();
    auto sn = reserve(s.sinT, tableFloats * 4, stream);
    if (!sn)
      return sn.takeError();
    cosPtr = *c;
    sinPtr = *sn;
    MemRefArg cosT(cosPtr, tableFloats), sinT(sinPtr, tableFloats);
    {
      int64_t count = tableFloats, start = l.tableStart;
      std::vector<void *> a;
      cosT.push(a);
      sinT.push(a);
      a.push_back(&count);
      a.push_back(&start);
      if (Error e =
              dev->launch(*module, "rope_table", {blocksFor(count, 256), 1, 1},
                          {256, 1, 1}, 0, a, wait, false, stream))
        return e;
    }
    // The attention kernel rotates q itself when it can.
    if (!plan.ropeQInKernel()) {
      auto qr = reserve(s.qr, qElems * 2, stream);
      if (!qr)
        return qr.takeError();
      q = *qr;
    }
    auto kr = reserve(s.kr, kElems * 2, stream);
    if (!kr)
      return kr.takeError();
    k = *kr;
    struct Job {
      uint64_t x, y;
      int64_t elems, rows, len, pos0;
    } jobs[] = {{l.q, q, qElems, l.B * l.Hq * l.T, l.T, l.qPos0 - l.tableStart},
                {l.k, k, kElems, l.B * l.Hk * l.S, l.S,
                 plan.ropeOffset - l.tableStart}};
    for (Job &j : jobs) {
      if (j.rows == 0 || j.x == j.y)
        continue;
      MemRefArg x(j.x, j.elems), y(j.y, j.elems);
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
              {256, 1, 1}, 0, a, wait, false, stream))
        return e;
    }
  }
  uint64_t gsum = 0;
  int64_t gsumFloats = 0;
  if (plan.gate) {
    gsumFloats = l.B * l.Hq * plan.gateRowFloats(l.S);
    auto G = reserve(s.gsum, gsumFloats * 4, stream);
    if (!G)
      return G.takeError();
    gsum = *G;
    MemRefArg g(l.g, l.B * l.Hq * l.S), Gm(gsum, gsumFloats);
    int64_t S = l.S;
    std::vector<void *> a;
    g.push(a);
    Gm.push(a);
    a.push_back(&S);
    if (Error e = dev->launch(
            *module, "gate", {static_cast<unsigned>(l.B * l.Hq), 1, 1},
            {static_cast<unsigned>(mlir::attn::GpuPlan::kGateThreads), 1, 1}, 0,
            a, wait, false, stream))
      return e;
  }
  MemRefArg mq(q, qElems), mk(k, kElems), mv(l.v, vElems), mo(l.o, oElems);
  MemRefArg mg(plan.gate ? gsum : l.o, plan.gate ? gsumFloats : 0);
  int64_t Hq = l.Hq, Hk = l.Hk, T = l.T, S = l.S;
  int64_t qPos0 = l.qPos0 - l.tableStart;
  std::vector<void *> a;
  for (MemRefArg *m : {&mq, &mk, &mv, &mo, &mg})
    m->push(a);
  for (int64_t *x : {&Hq, &Hk, &T, &S})
    a.push_back(x);
  MemRefArg mcos(cosPtr, tableFloats), msin(sinPtr, tableFloats);
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
      static_cast<unsigned>(plan.smemBytes()), a, wait, dependentLaunch,
      stream);
}

/// Host arrays on the device for run() and benchmark(): inputs uploaded,
/// the output allocated and poisoned (all-ones bytes: NaN in f16/bf16, so
/// a row the kernel fails to write cannot pass a comparison).
struct DeviceArgs {
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<TensorView> inputs;
  TensorView output;
};

static Expected<DeviceArgs> uploadArgs(cuda::Device &dev,
                                       llvm::ArrayRef<TensorView> host,
                                       const TensorSig &res,
                                       const std::vector<int64_t> &outShape) {
  DeviceArgs d;
  auto make = [&](const TensorView &like) -> Expected<TensorView> {
    auto buf = std::make_unique<DeviceBuffer>();
    buf->dev = &dev;
    buf->bytes = like.numel() * dtypeSize(like.dtype);
    auto p = dev.alloc(std::max<size_t>(buf->bytes, 16));
    if (!p)
      return p.takeError();
    buf->ptr = *p;
    TensorView v(reinterpret_cast<void *>(*p), like.dtype, like.shape, {},
                 Device::CUDA);
    d.buffers.push_back(std::move(buf));
    return v;
  };
  for (const TensorView &h : host) {
    auto v = make(h);
    if (!v)
      return v.takeError();
    if (Error e = dev.copyToDevice(reinterpret_cast<uint64_t>(v->data), h.data,
                                   d.buffers.back()->bytes))
      return std::move(e);
    d.inputs.push_back(*v);
  }
  auto out = make(TensorView(nullptr, res.dtype, outShape));
  if (!out)
    return out.takeError();
  if (Error e = dev.fill(reinterpret_cast<uint64_t>(out->data), 0xFF,
                         d.buffers.back()->bytes))
    return std::move(e);
  d.output = *out;
  return std::move(d);
}

Expected<HostArray> CudaKernel::run(llvm::ArrayRef<HostArray> inputs) {
  auto host = convertInputs(inputs);
  if (!host)
    return host.takeError();
  auto shape = resultShape(host->views);
  if (!shape)
    return shape.takeError();
  auto d = uploadArgs(*dev, host->views, res, *shape);
  if (!d)
    return d.takeError();
  if (Error e = launchOn(d->inputs, d->output, nullptr, /*wait=*/true))
    return std::move(e);
  HostArray out;
  out.dtype = res.dtype;
  out.shape = *shape;
  out.bytes.resize(d->buffers.back()->bytes);
  if (Error e = dev->copyToHost(out.bytes.data(), d->buffers.back()->ptr,
                                out.bytes.size()))
    return std::move(e);
  return out;
}

Expected<std::vector<double>>
CudaKernel::benchmark(llvm::ArrayRef<HostArray> inputs, unsigned runs) {
  auto host = convertInputs(inputs);
  if (!host)
    return host.takeError();
  auto shape = resultShape(host->views);
  if (!shape)
    return shape.takeError();
  auto d = uploadArgs(*dev, host->views, res, *shape);
  if (!d)
    return d.takeError();
  // One checked call first: faults surface with the kernel's name.
  if (Error e = launchOn(d->inputs, d->output, nullptr, /*wait=*/true))
    return std::move(e);
  std::vector<double> ms;
  for (unsigned i = 0; i < runs; ++i) {
    auto t = dev->timeMs(
        [&] { return launchOn(d->inputs, d->output, nullptr, false); });
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
