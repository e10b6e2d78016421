//===- CudaKernel.cpp - kernels compiled for and launched on a CUDA GPU ---===//
//
// Compile: attn-to-gpu down to the NVVM dialect (buildGPUPipeline with
// format "none"), then the gpu.module serialized by its #nvvm.target: a
// cubin through ptxas when the toolkit has one, else PTX that the driver
// compiles at load. Images are cached on disk (DiskCache.h) keyed by the
// NVVM-level IR and, for a cubin, ptxas's version (gpuImageKey), so a
// cache hit skips LLVM's NVPTX backend and ptxas.
// Launch: the entry's launch plan (attn_launch.plan, LaunchPlan.h) run on
// the caller's device views: scratch reserved per stream, each kernel's
// grid and arguments evaluated, the kernels enqueued in the plan's order.
//
//===----------------------------------------------------------------------===//

#include "DiskCache.h"
#include "GpuOptions.h"
#include "KernelSupport.h"
#include "LaunchPlan.h"

#include "attn/CudaDriver.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <deque>
#include <map>

using llvm::createStringError;
using llvm::Error;
using llvm::Expected;

namespace attn::detail {
namespace {

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

/// A memref<?xT> argument as the kernel ABI passes it (BlockGpuAbi.h): five
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
  Expected<std::vector<HostArray>>
  runAll(llvm::ArrayRef<HostArray> inputs) override;
  Expected<std::vector<double>> benchmark(llvm::ArrayRef<HostArray> inputs,
                                          unsigned runs) override;
  using ProgramKernel::launch;
  Error launch(llvm::ArrayRef<TensorView> inputs,
               llvm::ArrayRef<TensorView> outputs, void *stream) override;

private:
  /// Scratch of one stream: the plan's buffers, then contiguous copies of
  /// strided views (one per input, one per output). Grown
  /// stream-ordered, kept across launches, freed with the kernel. The mutex
  /// is held while a launch enqueues, so two threads on one stream never
  /// hand the same scratch to interleaved kernels.
  struct Scratch {
    struct Buf {
      uint64_t ptr = 0;
      size_t bytes = 0;
    };
    std::mutex mutex;
    std::vector<Buf> bufs;
  };
  Scratch &scratchFor(void *stream);
  Expected<uint64_t> reserve(Scratch::Buf &buf, size_t bytes, void *stream);
  /// Copies `src` into `dst` (same shape, innermost stride 1) on `stream`.
  Error copyView(const TensorView &src, const TensorView &dst, void *stream);
  /// launch(); with `wait`, synchronizes after each kernel (faults then
  /// name it).
  Error launchOn(llvm::ArrayRef<TensorView> inputs,
                 llvm::ArrayRef<TensorView> outputs, void *stream, bool wait);
  /// Enqueues the plan's kernels on dense device views.
  Error enqueue(llvm::ArrayRef<TensorView> views,
                llvm::ArrayRef<TensorView> outViews,
                llvm::ArrayRef<uint64_t> inputs, llvm::ArrayRef<uint64_t> outs,
                llvm::ArrayRef<int64_t> symbols, Scratch &s, void *stream,
                bool wait);

  LaunchPlan plan;
  /// Whether a plan kernel marked dependent starts while the one before it
  /// runs (GpuKernelOptions::dependentLaunch; else after it ends).
  bool dependentLaunch = false;
  std::shared_ptr<cuda::Device> dev;
  std::unique_ptr<cuda::Module> module;
  std::mutex scratchMutex;
  std::map<void *, std::unique_ptr<Scratch>> scratch;
};

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
  const cuda::DeviceInfo &info = kernel->dev->info();
  auto resolved =
      detail::resolveGpuOptions(options.gpu, info.smMajor, info.smMinor);
  if (!resolved)
    return resolved.takeError();
  const mlir::attn::GPUPipelineOptions &gpuOpts = resolved->pipeline;
  const std::string &chip = gpuOpts.chip;
  PassManager pm(ctx);
  mlir::attn::buildGPUPipeline(pm, gpuOpts);
  if (failed(pm.run(*lowered)))
    return diags.error("compiling " + bufferName.str() + " for " + info.name +
                       " (" + chip + ") failed");

  auto fn = lowered->lookupSymbol<func::FuncOp>(options.entry);
  auto gm = lowered->lookupSymbol<gpu::GPUModuleOp>((options.entry + "_gpu"));
  if (!gm)
    return createStringError("internal error: no gpu.module @" + options.entry +
                             "_gpu");
  auto launchPlan =
      LaunchPlan::read(fn, options.entry, mlir::attn_launch::Device::cuda);
  if (!launchPlan)
    return launchPlan.takeError();
  kernel->plan = std::move(*launchPlan);
  kernel->dependentLaunch = resolved->dependentLaunch;
  bool dependent =
      kernel->dependentLaunch &&
      llvm::any_of(kernel->plan.kernels(), [](auto &k) { return k.dependent; });
  kernel->notes.push_back(
      "GPU kernel: " + chip + ", the block program's launch plan (" +
      std::to_string(kernel->plan.kernels().size()) + " kernels)" +
      (dependent ? ", dependent launch" : ""));
  // Which forms PaTH's kernels took: on sm_90a the default depends on the
  // toolkit's ptxas (GpuOptions.cpp), so it is said.
  if (llvm::any_of(kernel->plan.kernels(), [](auto &k) {
        return llvm::StringRef(k.name).ends_with(
            mlir::attn::kPathAttentionKernelSuffix);
      })) {
    auto form = [](bool wgmma) { return wgmma ? "wgmma" : "mma.sync"; };
    kernel->notes.push_back(std::string("PaTH: chunk kernel in the ") +
                            form(resolved->pipeline.pathChunkWgmma) +
                            " form, attention kernel in the " +
                            form(resolved->pipeline.pathAttentionWgmma) +
                            " form");
  }

  // Serialize (or take from the disk cache).
  std::string toolkitNote;
  std::string toolkit = detail::runtimeToolkit(&toolkitNote);
  if (!toolkitNote.empty())
    kernel->notes.push_back(toolkitNote);
  llvm::SmallString<256> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  bool binary = llvm::sys::fs::can_execute(ptxas);
  // The driver's own PTX compiler is as old as the driver: only a ptxas
  // known to be fixed assembles the register-A wgmma of this form.
  if (resolved->pipeline.pathAttentionWgmma)
    if (std::string bad = mlir::attn::checkPtxasForRegisterWgmma(
            resolved->pipeline.ptxas,
            "PaTH's attention kernel in the wgmma form "
            "(path-attention-wgmma)");
        !bad.empty())
      return diags.error(bad);
  std::string ir;
  {
    llvm::raw_string_ostream os(ir);
    gm->print(os);
  }
  std::string key = gpuImageKey(chip, binary, toolkit, ir);
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
    for (Scratch::Buf &b : s->bufs)
      if (b.ptr)
        llvm::consumeError(dev->free(b.ptr));
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
                         llvm::ArrayRef<TensorView> outputs, void *stream) {
  return launchOn(inputs, outputs, stream, /*wait=*/false);
}

Error CudaKernel::launchOn(llvm::ArrayRef<TensorView> inputs,
                           llvm::ArrayRef<TensorView> outputs, void *stream,
                           bool wait) {
  // cp.async and vector accesses read 16-byte chunks.
  auto shape = checkLaunch(inputs, outputs, /*alignment=*/16);
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
  for (size_t i = 0; i < outputs.size(); ++i)
    if (Error e = onDevice(outputs[i], "output " + std::to_string(i)))
      return e;

  auto symbols = plan.symbols(inputs);
  if (!symbols)
    return symbols.takeError();
  // The plan writes the outputs: nothing to do when they are all empty.
  if (llvm::all_of(outputs, [](const TensorView &v) { return !v.numel(); }))
    return Error::success();

  Scratch &s = scratchFor(stream);
  std::lock_guard<std::mutex> lock(s.mutex);
  const size_t nPlan = plan.buffers().size();
  s.bufs.resize(nPlan + inputs.size() + outputs.size());
  // The kernels take flattened row-major buffers (BlockGpuAbi.h): contiguous
  // views are used in place, strided ones packed first (cuMemcpy2DAsync).
  auto dense = [&](const TensorView &v, Scratch::Buf &buf, uint64_t &ptr,
                   bool copy) -> Error {
    if (v.isContiguous()) {
      ptr = reinterpret_cast<uint64_t>(v.data);
      return Error::success();
    }
    auto at = reserve(buf, v.numel() * dtypeSize(v.dtype), stream);
    if (!at)
      return at.takeError();
    ptr = *at;
    if (!copy)
      return Error::success();
    TensorView packedView(reinterpret_cast<void *>(*at), v.dtype, v.shape, {},
                          Device::CUDA);
    return copyView(v, packedView, stream);
  };
  llvm::SmallVector<uint64_t, 8> in(inputs.size(), 0), out(outputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (plan.readsInput(i))
      if (Error e = dense(inputs[i], s.bufs[nPlan + i], in[i], /*copy=*/true))
        return e;
  Scratch::Buf *outBufs = s.bufs.data() + nPlan + inputs.size();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (Error e = dense(outputs[i], outBufs[i], out[i], /*copy=*/false))
      return e;
  if (Error e = enqueue(inputs, outputs, in, out, *symbols, s, stream, wait))
    return e;
  // Strided outputs were written packed: copy them into place.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].isContiguous())
      continue;
    TensorView packed(reinterpret_cast<void *>(out[i]), outputs[i].dtype,
                      outputs[i].shape, {}, Device::CUDA);
    if (Error e = copyView(packed, outputs[i], stream))
      return e;
  }
  return Error::success();
}

Error CudaKernel::enqueue(llvm::ArrayRef<TensorView> views,
                          llvm::ArrayRef<TensorView> outViews,
                          llvm::ArrayRef<uint64_t> inputs,
                          llvm::ArrayRef<uint64_t> outs,
                          llvm::ArrayRef<int64_t> symbols, Scratch &s,
                          void *stream, bool wait) {
  llvm::SmallVector<uint64_t, 8> bufs;
  for (auto [i, b] : llvm::enumerate(plan.buffers())) {
    int64_t bytes = LaunchPlan::eval(b.bytes, symbols);
    if (bytes < 0)
      return createStringError("internal error: scratch " + b.name +
                               " of negative size");
    auto p = reserve(s.bufs[i], static_cast<size_t>(bytes), stream);
    if (!p)
      return p.takeError();
    bufs.push_back(*p);
  }
  for (const LaunchPlan::Kernel &k : plan.kernels()) {
    auto grid = plan.grid(k, symbols);
    if (!grid)
      return grid.takeError();
    if (llvm::is_contained(*grid, 0u))
      continue;
    // Parameters live until the launch returns: memrefs are five words,
    // scalars one (std::deque keeps addresses stable).
    std::deque<MemRefArg> memrefs;
    std::deque<int64_t> scalars;
    std::vector<void *> a;
    for (const LaunchPlan::Arg &arg : k.args) {
      // A view's size defaults to its element count.
      int64_t n = arg.value ? LaunchPlan::eval(arg.value, symbols)
                  : arg.kind == LaunchPlan::ArgKind::input
                      ? views[arg.index].numel()
                      : outViews[arg.index].numel();
      uint64_t ptr = 0;
      switch (arg.kind) {
      case LaunchPlan::ArgKind::scalar:
        a.push_back(&scalars.emplace_back(n));
        continue;
      case LaunchPlan::ArgKind::input:
        ptr = inputs[arg.index];
        break;
      case LaunchPlan::ArgKind::output:
        ptr = outs[arg.index];
        break;
      case LaunchPlan::ArgKind::scratch:
        ptr = bufs[arg.index];
        break;
      }
      memrefs.emplace_back(ptr, n).push(a);
    }
    if (Error e = dev->launch(*module, k.name, *grid, k.block, k.smem, a, wait,
                              k.dependent && dependentLaunch, stream))
      return e;
  }
  return Error::success();
}

/// Host arrays on the device for runAll() and benchmark(): inputs
/// uploaded, the outputs allocated and poisoned (all-ones bytes: NaN in
/// every float type, so a row the kernels fail to write cannot pass a
/// comparison).
struct DeviceArgs {
  std::vector<std::unique_ptr<DeviceBuffer>> inBuffers, outBuffers;
  std::vector<TensorView> inputs, outputs;
};

static Expected<DeviceArgs>
uploadArgs(cuda::Device &dev, llvm::ArrayRef<TensorView> host,
           llvm::ArrayRef<TensorSig> results,
           llvm::ArrayRef<std::vector<int64_t>> shapes) {
  DeviceArgs d;
  auto make = [&](const TensorView &like,
                  std::vector<std::unique_ptr<DeviceBuffer>> &owner)
      -> Expected<TensorView> {
    auto buf = std::make_unique<DeviceBuffer>();
    buf->dev = &dev;
    buf->bytes = like.numel() * dtypeSize(like.dtype);
    auto p = dev.alloc(std::max<size_t>(buf->bytes, 16));
    if (!p)
      return p.takeError();
    buf->ptr = *p;
    TensorView v(reinterpret_cast<void *>(*p), like.dtype, like.shape, {},
                 Device::CUDA);
    owner.push_back(std::move(buf));
    return v;
  };
  for (const TensorView &h : host) {
    auto v = make(h, d.inBuffers);
    if (!v)
      return v.takeError();
    if (Error e = dev.copyToDevice(reinterpret_cast<uint64_t>(v->data), h.data,
                                   d.inBuffers.back()->bytes))
      return std::move(e);
    d.inputs.push_back(*v);
  }
  for (auto [res, shape] : llvm::zip(results, shapes)) {
    auto out = make(TensorView(nullptr, res.dtype, shape), d.outBuffers);
    if (!out)
      return out.takeError();
    if (Error e = dev.fill(reinterpret_cast<uint64_t>(out->data), 0xFF,
                           d.outBuffers.back()->bytes))
      return std::move(e);
    d.outputs.push_back(*out);
  }
  return std::move(d);
}

Expected<std::vector<HostArray>>
CudaKernel::runAll(llvm::ArrayRef<HostArray> inputs) {
  auto host = convertInputs(inputs);
  if (!host)
    return host.takeError();
  auto shapes = resultShapes(host->views);
  if (!shapes)
    return shapes.takeError();
  auto d = uploadArgs(*dev, host->views, results(), *shapes);
  if (!d)
    return d.takeError();
  if (Error e = launchOn(d->inputs, d->outputs, nullptr, /*wait=*/true))
    return std::move(e);
  std::vector<HostArray> outs;
  for (auto [res, shape, buf] : llvm::zip(results(), *shapes, d->outBuffers)) {
    HostArray out;
    out.dtype = res.dtype;
    out.shape = shape;
    out.bytes.resize(buf->bytes);
    if (Error e = dev->copyToHost(out.bytes.data(), buf->ptr, buf->bytes))
      return std::move(e);
    outs.push_back(std::move(out));
  }
  return outs;
}

Expected<std::vector<double>>
CudaKernel::benchmark(llvm::ArrayRef<HostArray> inputs, unsigned runs) {
  auto host = convertInputs(inputs);
  if (!host)
    return host.takeError();
  auto shapes = resultShapes(host->views);
  if (!shapes)
    return shapes.takeError();
  auto d = uploadArgs(*dev, host->views, results(), *shapes);
  if (!d)
    return d.takeError();
  // One checked call first: faults surface with the kernel's name.
  if (Error e = launchOn(d->inputs, d->outputs, nullptr, /*wait=*/true))
    return std::move(e);
  std::vector<double> ms;
  for (unsigned i = 0; i < runs; ++i) {
    auto t = dev->timeMs(
        [&] { return launchOn(d->inputs, d->outputs, nullptr, false); });
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
