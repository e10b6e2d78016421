//===- HostApiGpuTest.cpp - Kernel::launch on caller-owned device memory --===//
//
// The host-program API on the GPU, with the bodies the CPU runs in
// HostApiTest.cpp: device buffers the test owns, each Memory with its own
// non-blocking stream (launch returns without waiting; the test waits on
// the stream), BHSD and BSHD views, one compile for every shape, 8 threads
// compiling and launching at once; bf16, relative RMS error <= 5e-3. Also
// the host time of one launch at small T. Without a GPU every case skips.
//
//===----------------------------------------------------------------------===//

#include "GpuEngine.h"
#include "HostApiSupport.h"
#include "attn/CudaDriver.h"

#include <algorithm>

using namespace attn;
using namespace attn::hostapi;

namespace {

/// The test's own handle on the GPU (the engine's is private): the same
/// primary context, so its pointers are valid for the kernels.
cuda::Device *testDevice(std::string &why) {
  static std::unique_ptr<cuda::Device> dev;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    auto d = cuda::Device::open();
    if (d)
      dev = std::move(*d);
    else
      error = llvm::toString(d.takeError());
  }
  why = error;
  return dev.get();
}

using attn::gpu_test::gpuEngine;

/// Fails the running test on a driver error.
void ok(llvm::Error e) {
  if (e)
    ADD_FAILURE() << llvm::toString(std::move(e));
}

class DeviceMemory : public Memory {
public:
  explicit DeviceMemory(cuda::Device &dev) : dev(dev) {
    auto s = dev.createStream();
    if (s)
      own = *s;
    else
      ADD_FAILURE() << llvm::toString(s.takeError());
  }
  ~DeviceMemory() override {
    ok(dev.synchronize(own));
    for (uint64_t p : blocks)
      ok(dev.free(p));
    ok(dev.destroyStream(own));
  }
  Device device() const override { return Device::CUDA; }
  void *alloc(size_t bytes) override {
    auto p = dev.alloc(std::max<size_t>(bytes, 16));
    if (!p) {
      ADD_FAILURE() << llvm::toString(p.takeError());
      return nullptr;
    }
    blocks.push_back(*p);
    return reinterpret_cast<void *>(*p);
  }
  void upload(void *dst, const void *src, size_t bytes) override {
    ok(dev.copyToDevice(reinterpret_cast<uint64_t>(dst), src, bytes));
  }
  void download(void *dst, const void *src, size_t bytes) override {
    ok(dev.copyToHost(dst, reinterpret_cast<uint64_t>(src), bytes));
  }
  void fill(void *dst, unsigned char byte, size_t bytes) override {
    ok(dev.fill(reinterpret_cast<uint64_t>(dst), byte, bytes));
    // cuMemsetD8 may still run on the legacy stream, which a non-blocking
    // stream does not wait for: finish it before a kernel writes there.
    ok(dev.synchronize());
  }
  void *stream() override { return own; }
  void wait(void *stream) override { ok(dev.synchronize(stream)); }

private:
  cuda::Device &dev;
  void *own = nullptr;
  std::vector<uint64_t> blocks;
};

#define REQUIRE_GPU(engine, device)                                            \
  std::string why;                                                             \
  Engine *engine = gpuEngine(why);                                             \
  cuda::Device *device = engine ? testDevice(why) : nullptr;                   \
  if (!engine || !device)                                                      \
  GTEST_SKIP() << "no GPU: " << why

MemoryFactory deviceMemory(cuda::Device *dev) {
  return [dev] { return std::make_unique<DeviceMemory>(*dev); };
}

TEST(HostApiGpu, OneCompileServesEveryShape) {
  REQUIRE_GPU(engine, dev);
  anyShapeOneKernel(*engine, deviceMemory(dev), "bf16", 5e-3);
}

TEST(HostApiGpu, StridedViewsInAndOut) {
  REQUIRE_GPU(engine, dev);
  stridedLayouts(*engine, deviceMemory(dev), "bf16", 5e-3);
}

TEST(HostApiGpu, EightThreadsCompileAndLaunch) {
  REQUIRE_GPU(engine, dev);
  concurrentCompileAndLaunch("cuda", deviceMemory(dev), "bf16", 5e-3);
}

// ATTN_GPU_* values are checked before anything is compiled: a bad one
// is an error naming the variable (or the option's own check), and the
// same program compiles once the variable is gone.
TEST(HostApiGpu, EnvironmentOptionsAreChecked) {
  REQUIRE_GPU(engine, dev);
  struct Bad {
    const char *name, *value, *message;
  } cases[] = {
      {"ATTN_GPU_WARPS", "four", "ATTN_GPU_WARPS='four' is not an integer"},
      {"ATTN_GPU_BLOCK_N", "0", "ATTN_GPU_BLOCK_N='0' is not an integer"},
      // The direct builder's variables, removed with it: an error, not
      // silently ignored.
      {"ATTN_GPU_OVERLAP", "1",
       "ATTN_GPU_OVERLAP='1' is set, but it was removed"},
      {"ATTN_GPU_LOWERING", "direct",
       "ATTN_GPU_LOWERING='direct' is set, but it was removed"},
      {"ATTN_GPU_M_TILES", "2",
       "ATTN_GPU_M_TILES='2' is set, but it was removed"},
      {"ATTN_GPU_PDL", "yes", "ATTN_GPU_PDL='yes' is not an integer"},
      {"ATTN_GPU_CHIP", "sm_75", "sm_75"},
      {"ATTN_GPU_CHIP", "SM_90", "SM_90"},
      {"ATTN_GPU_WARPS", "3", "ATTN_GPU_WARPS"},
      {"ATTN_GPU_PATH_TRANSPORT", "bf16",
       "path-transport must be f16 or split, got 'bf16'"},
      {"ATTN_GPU_PATH_CHUNK_WGMMA", "on",
       "ATTN_GPU_PATH_CHUNK_WGMMA='on' is not an integer"},
      {"ATTN_GPU_PATH_ATTENTION_WGMMA", "2",
       "ATTN_GPU_PATH_ATTENTION_WGMMA='2' is not an integer"},
  };
  int n = 0;
  for (const Bad &c : cases) {
    // A text of its own per case: compiles are cached by text.
    std::string src = attentionProgram("plain", 64, "bf16") + "// env " +
                      std::to_string(n++) + "\n";
    ASSERT_EQ(setenv(c.name, c.value, 1), 0);
    auto k = engine->compile(src);
    unsetenv(c.name);
    ASSERT_FALSE(static_cast<bool>(k)) << c.name << "=" << c.value;
    std::string msg = llvm::toString(k.takeError());
    EXPECT_NE(msg.find(c.message), std::string::npos)
        << c.name << "=" << c.value << ": " << msg;
    auto again = engine->compile(src);
    EXPECT_TRUE(static_cast<bool>(again))
        << c.name << " unset: " << llvm::toString(again.takeError());
  }
}

TEST(HostApiGpu, HostMemoryIsRefused) {
  REQUIRE_GPU(engine, dev);
  auto kernel = engine->compile(attentionProgram("plain", 64, "bf16"));
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  alignas(16) static uint16_t aligned[64 * 4];
  TensorView h(aligned, DType::BF16, {1, 1, 4, 64}, {}, Device::CUDA);
  llvm::Error e = (*kernel)->launch({h, h, h}, h, nullptr);
  ASSERT_TRUE(static_cast<bool>(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("input 0: not device memory"), std::string::npos) << msg;
}

// A backward the GPU backend has no form of (PaTH's): an engine asked for
// "cuda" returns the backend's error; an automatic one runs the whole pair
// on the CPU (the backward takes the forward's results) and says why.
// GpuTrainingTest.cpp runs the pairs the GPU has.
TEST(HostApiGpu, TrainingWithoutGpuBackward) {
  REQUIRE_GPU(engine, dev);
  std::string t = "tensor<?x?x?x64xbf16>", w = "tensor<?x?x?x64xf32>",
              beta = "tensor<?x?x?xf32>";
  std::string src = "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
                    ", %w: " + w + ", %beta: " + beta + ") -> " + t +
                    " {\n  %o = attn.attention %q, %k, %v path(%w, %beta) : (" +
                    t + ", " + t + ", " + t + ", " + w + ", " + beta + ") -> " +
                    t + "\n  return %o : " + t + "\n}\n";
  auto pair = engine->compileTraining(src);
  ASSERT_FALSE(static_cast<bool>(pair));
  std::string msg = llvm::toString(pair.takeError());
  EXPECT_NE(msg.find("no fused backward for PaTH and MTA yet"),
            std::string::npos)
      << msg;
  auto autoEngine = Engine::create("auto");
  ASSERT_TRUE(static_cast<bool>(autoEngine));
  auto cpuPair = (*autoEngine)->compileTraining(src);
  ASSERT_TRUE(static_cast<bool>(cpuPair))
      << llvm::toString(cpuPair.takeError());
  EXPECT_EQ(cpuPair->forward->device(), Device::CPU);
  EXPECT_EQ(cpuPair->backward->device(), Device::CPU);
  ASSERT_FALSE(cpuPair->forward->remarks().empty());
  EXPECT_NE(cpuPair->forward->remarks().front().find(
                "runs on the CPU because @main_grad does"),
            std::string::npos)
      << cpuPair->forward->remarks().front();
}

/// Host time of launch() at small T, where it is all overhead: the median
/// of 200 enqueues on one stream (printed; bench/history/runs-to-05a9f8e.md,
/// "GPU: host API, Python path and compute-sanitizer on the H200", records
/// it).
TEST(HostApiGpu, LaunchHostTime) {
  REQUIRE_GPU(engine, dev);
  for (const char *variant : {"plain", "fox", "rope"}) {
    std::string src = attentionProgram(variant, 64, "bf16");
    auto kernel = engine->compile(src);
    ASSERT_TRUE(static_cast<bool>(kernel));
    DeviceMemory mem(*dev);
    Parsed p(src);
    ref::RandomSpec spec;
    spec.batch = 1;
    spec.heads = 8;
    spec.seqLen = 16;
    spec.seed = freshSeed();
    auto ins = ref::randomInputs(p.main(), spec);
    ASSERT_TRUE(static_cast<bool>(ins));
    std::vector<TensorView> views;
    for (size_t i = 0; i < ins->size(); ++i)
      views.push_back(place(mem, (*ins)[i], (*kernel)->arguments()[i].dtype,
                            Layout::BHSD, false));
    auto shape = (*kernel)->resultShape(views);
    ASSERT_TRUE(static_cast<bool>(shape));
    TensorView out = placeOutput(mem, *shape, DType::BF16, Layout::BHSD, 0);
    std::vector<double> us;
    for (int i = 0; i < 220; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      llvm::Error e = (*kernel)->launch(views, out, mem.stream());
      auto t1 = std::chrono::steady_clock::now();
      ASSERT_FALSE(static_cast<bool>(e)) << llvm::toString(std::move(e));
      if (i >= 20)
        us.push_back(
            std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (i % 50 == 49)
        mem.wait(mem.stream()); // keep the queue short
    }
    mem.wait(mem.stream());
    std::sort(us.begin(), us.end());
    std::printf("[ gpu ] launch host time, %s B=1 H=8 T=16 D=64 bf16: median "
                "%.2f us, p90 %.2f us (200 launches)\n",
                variant, us[us.size() / 2], us[us.size() * 9 / 10]);
  }
}

} // namespace
