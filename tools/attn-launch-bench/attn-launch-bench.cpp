//===- attn-launch-bench.cpp - host time of Kernel::launch ----------------===//
//
// Measures what a host program pays per launch on caller-owned memory at a
// small shape, where the kernels themselves take microseconds: the host
// time of launch() (on the GPU: enqueue only, nothing waits), the time
// per launch when the program waits after each one, and the same for the
// run() convenience (host arrays in and out). Inputs are random; the
// output is not checked here (the tests do that).
//
//   attn-launch-bench [--device=cpu|cuda] [--variant=plain|rope|fox]
//                     [--shape=BxHxT] [--head-dim=D] [--launches=N]
//
//===----------------------------------------------------------------------===//

#include "attn/CudaDriver.h"
#include "attn/Runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

using namespace llvm;

static cl::opt<std::string> deviceOpt("device", cl::desc("cpu, cuda or auto"),
                                      cl::init("auto"));
static cl::opt<std::string> variant("variant", cl::desc("plain, rope or fox"),
                                    cl::init("plain"));
static cl::opt<std::string> shapeOpt("shape", cl::desc("BxHxT"),
                                     cl::init("1x8x16"));
static cl::opt<int> headDim("head-dim", cl::desc("D (64 or 128 on the GPU)"),
                            cl::init(64));
static cl::opt<int> launches("launches", cl::desc("timed launches"),
                             cl::init(1000));

namespace {

using Clock = std::chrono::steady_clock;

double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Stats {
  double median, p90;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[v.size() * 9 / 10]};
}

std::string program(const std::string &elt) {
  std::string t = "tensor<?x?x?x" + std::to_string(headDim) + "x" + elt + ">";
  bool gate = variant == "fox";
  std::string g = "tensor<?x?x?xf32>";
  return "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
         (gate ? ", %g: " + g : "") + ") -> " + t +
         " {\n  %o = attn.attention %q, %k, %v" +
         (variant == "rope" ? " rope(1.000000e+04)" : "") +
         (gate ? " gate(%g)" : "") + " : (" + t + ", " + t + ", " + t +
         (gate ? ", " + g : "") + ") -> " + t + "\n  return %o : " + t +
         "\n}\n";
}

int fail(Error e) {
  errs() << "attn-launch-bench: " << toString(std::move(e)) << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "attn launch overhead\n");
  int64_t B, H, T;
  if (std::sscanf(shapeOpt.c_str(), "%ldx%ldx%ld", &B, &H, &T) != 3 || B < 1 ||
      H < 1 || T < 1) {
    errs() << "attn-launch-bench: --shape must be BxHxT, got '" << shapeOpt
           << "'\n";
    return 1;
  }
  if (launches < 10) {
    errs() << "attn-launch-bench: --launches must be at least 10\n";
    return 1;
  }
  if (variant != "plain" && variant != "rope" && variant != "fox") {
    errs() << "attn-launch-bench: unknown --variant '" << variant << "'\n";
    return 1;
  }
  auto engine = attn::Engine::create(deviceOpt);
  if (!engine)
    return fail(engine.takeError());
  bool gpu = (*engine)->device() == attn::Device::CUDA;
  attn::DType dt = gpu ? attn::DType::BF16 : attn::DType::F32;
  auto t0 = Clock::now();
  auto kernel = (*engine)->compile(program(gpu ? "bf16" : "f32"));
  if (!kernel)
    return fail(kernel.takeError());
  double compileMs = us(t0, Clock::now()) / 1000;
  if ((*kernel)->device() != (*engine)->device()) {
    errs() << "attn-launch-bench: the kernel fell back to the CPU\n";
    return 1;
  }

  // Host arrays for run() and as the source of the device copies.
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  std::vector<attn::HostArray> host;
  for (const attn::TensorSig &sig : (*kernel)->arguments()) {
    std::vector<int64_t> shape = {B, H, T};
    if (sig.shape.size() == 4)
      shape.push_back(headDim);
    attn::HostArray a{attn::DType::F32, shape, {}};
    a.bytes.resize(a.numel() * 4);
    for (size_t i = 0; i < a.numel(); ++i)
      a.set(i, sig.shape.size() == 4 ? normal(gen) : -0.05);
    host.push_back(std::move(a));
  }
  std::vector<attn::HostArray> converted;
  std::vector<attn::TensorView> views;
  for (auto [i, a] : llvm::enumerate(host)) {
    attn::HostArray c{(*kernel)->arguments()[i].dtype, a.shape, {}};
    c.bytes.resize(c.numel() * attn::dtypeSize(c.dtype));
    for (size_t j = 0; j < a.numel(); ++j)
      c.set(j, a.get(j));
    converted.push_back(std::move(c));
  }
  std::vector<int64_t> outShape = {B, H, T, headDim};
  attn::HostArray out{dt, outShape, {}};
  out.bytes.resize(out.numel() * attn::dtypeSize(dt));

  std::unique_ptr<attn::cuda::Device> dev;
  void *stream = nullptr;
  std::vector<uint64_t> buffers;
  if (gpu) {
    auto d = attn::cuda::Device::open();
    if (!d)
      return fail(d.takeError());
    dev = std::move(*d);
    auto s = dev->createStream();
    if (!s)
      return fail(s.takeError());
    stream = *s;
    for (attn::HostArray *a :
         {&converted[0], &converted[1], &converted[2],
          converted.size() > 3 ? &converted[3] : nullptr, &out}) {
      if (!a)
        continue;
      auto p = dev->alloc(std::max<size_t>(a->bytes.size(), 16));
      if (!p)
        return fail(p.takeError());
      if (Error e = dev->copyToDevice(*p, a->bytes.data(), a->bytes.size()))
        return fail(std::move(e));
      buffers.push_back(*p);
      views.emplace_back(reinterpret_cast<void *>(*p), a->dtype, a->shape,
                         ArrayRef<int64_t>{}, attn::Device::CUDA);
    }
  } else {
    for (attn::HostArray &a : converted)
      views.push_back(attn::TensorView::of(a));
    views.push_back(attn::TensorView::of(out));
  }
  attn::TensorView outView = views.back();
  views.pop_back();
  auto wait = [&]() -> Error {
    return gpu ? dev->synchronize(stream) : Error::success();
  };

  // Warm-up: first launches verify the shapes and grow the scratch.
  for (int i = 0; i < 10; ++i)
    if (Error e = (*kernel)->launch(views, outView, stream))
      return fail(std::move(e));
  if (Error e = wait())
    return fail(std::move(e));

  std::vector<double> enqueue, synced, runs;
  for (int i = 0; i < launches; ++i) {
    auto a = Clock::now();
    if (Error e = (*kernel)->launch(views, outView, stream))
      return fail(std::move(e));
    enqueue.push_back(us(a, Clock::now()));
    // Drain now and then so the queue stays short.
    if (i % 64 == 63)
      if (Error e = wait())
        return fail(std::move(e));
  }
  if (Error e = wait())
    return fail(std::move(e));
  for (int i = 0; i < launches; ++i) {
    auto a = Clock::now();
    if (Error e = (*kernel)->launch(views, outView, stream))
      return fail(std::move(e));
    if (Error e = wait())
      return fail(std::move(e));
    synced.push_back(us(a, Clock::now()));
  }
  for (int i = 0; i < std::min<int>(launches, 200); ++i) {
    auto a = Clock::now();
    auto r = (*kernel)->run(host);
    if (!r)
      return fail(r.takeError());
    runs.push_back(us(a, Clock::now()));
  }
  Stats e = stats(enqueue), s = stats(synced), r = stats(runs);
  std::printf("%s %s B=%lld H=%lld T=%lld D=%d %s, compile %.1f ms\n",
              gpu ? (*engine)->gpuArch().c_str() : "cpu", variant.c_str(),
              (long long)B, (long long)H, (long long)T, headDim.getValue(),
              gpu ? "bf16" : "f32", compileMs);
  std::printf("  launch(), host time%s: median %.2f us, p90 %.2f us (%d)\n",
              gpu ? " (enqueue only)" : "", e.median, e.p90,
              launches.getValue());
  std::printf("  launch() + wait:       median %.2f us, p90 %.2f us (%d)\n",
              s.median, s.p90, launches.getValue());
  std::printf("  run() on host arrays:  median %.2f us, p90 %.2f us (%zu)\n",
              r.median, r.p90, runs.size());
  if (gpu) {
    for (uint64_t p : buffers)
      consumeError(dev->free(p));
    consumeError(dev->destroyStream(stream));
  }
  return 0;
}
