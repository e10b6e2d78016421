//===- HostApiTest.cpp - Kernel::launch on caller-owned host memory -------===//
//
// The host-program API on the CPU: one compile for every shape, BHSD and
// BSHD views (inputs read in place, output written in place), 8 threads
// compiling and launching at once, and every bad view reported naming the
// argument. The same bodies run on the GPU in attn-gpu-tests
// (HostApiGpuTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "HostApiSupport.h"

using namespace attn;
using namespace attn::hostapi;

namespace {

MemoryFactory hostMemory() {
  return [] { return std::make_unique<HostMemory>(); };
}

TEST(HostApiCpu, OneCompileServesEveryShape) {
  anyShapeOneKernel(cpuEngine(), hostMemory(), "f32", 1e-5);
}

TEST(HostApiCpu, StridedViewsInAndOut) {
  stridedLayouts(cpuEngine(), hostMemory(), "f32", 1e-5);
}

TEST(HostApiCpu, EightThreadsCompileAndLaunch) {
  concurrentCompileAndLaunch("cpu", hostMemory(), "f32", 1e-5);
}

/// The message of launch() on these views, "" when it succeeds.
std::string launchError(Kernel &k, std::vector<TensorView> in, TensorView out,
                        void *stream = nullptr) {
  llvm::Error e = k.launch(in, out, stream);
  return e ? llvm::toString(std::move(e)) : "";
}

TEST(HostApiCpu, BadViewsNameTheArgument) {
  std::string src = attentionProgram("plain", 16, "f32");
  auto kernel = cpuEngine().compile(src);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  Kernel &k = **kernel;
  const int64_t n = 2 * 3 * 5 * 16;
  std::vector<float> q(n, 0.5f), kk(n, 0.25f), v(n, 1.0f), o(n + 1, -1.0f);
  auto view = [](float *p, std::vector<int64_t> shape) {
    return TensorView(p, DType::F32, shape);
  };
  std::vector<int64_t> s{2, 3, 5, 16};
  TensorView vq = view(q.data(), s), vk = view(kk.data(), s),
             vv = view(v.data(), s), vo = view(o.data(), s);
  ASSERT_EQ(launchError(k, {vq, vk, vv}, vo), "");
  // Every output element written (v = 1 everywhere: the average is 1).
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(o[i], 1.0f) << i;
  EXPECT_EQ(o[n], -1.0f) << "wrote past the output";

  auto expectError = [&](std::string got, const std::string &want) {
    EXPECT_NE(got.find(want), std::string::npos)
        << "expected '" << want << "' in: " << got;
  };
  expectError(launchError(k, {vq, vk}, vo), "takes 3 inputs, got 2");
  TensorView f16 = vk;
  f16.dtype = DType::F16;
  expectError(launchError(k, {vq, f16, vv}, vo),
              "input 1 (tensor<?x?x?x16xf32>): element type f16, expected f32");
  TensorView wrongD = view(v.data(), {2, 3, 5, 8});
  expectError(launchError(k, {vq, vk, wrongD}, vo),
              "input 2 (tensor<?x?x?x16xf32>): got shape tensor<2x3x5x8xf32>");
  TensorView gpu = vq;
  gpu.device = Device::CUDA;
  expectError(launchError(k, {gpu, vk, vv}, vo),
              "input 0 (tensor<?x?x?x16xf32>): memory on the cuda");
  TensorView misaligned = vq;
  misaligned.data = reinterpret_cast<char *>(q.data()) + 2;
  expectError(launchError(k, {misaligned, vk, vv}, vo),
              "input 0 (tensor<?x?x?x16xf32>): data pointer not aligned");
  TensorView null = vv;
  null.data = nullptr;
  expectError(launchError(k, {vq, vk, null}, vo), "input 2");
  TensorView negative = vq;
  negative.strides = {-240, 80, 16, 1};
  expectError(launchError(k, {negative, vk, vv}, vo), "negative stride");
  expectError(launchError(k, {vq, vk, vv}, view(o.data(), {2, 3, 4, 16})),
              "the output must be tensor<2x3x5x16xf32> for these inputs");
  TensorView overlapping = vo;
  overlapping.strides = {80, 16, 16, 1};
  expectError(launchError(k, {vq, vk, vv}, overlapping),
              "the output's strides make elements overlap");
  int dummy;
  expectError(launchError(k, {vq, vk, vv}, vo, &dummy),
              "a stream was given to a kernel that runs on the CPU");
  // Shape relations between inputs go through the op verifiers.
  TensorView shortK = view(kk.data(), {2, 3, 4, 16});
  expectError(launchError(k, {vq, shortK, shortK}, vo), "T <= S");
  // None of the failures touched the output.
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(o[i], 1.0f) << i;
}

TEST(HostApiCpu, ProgramReturningItsArgument) {
  // Its result is the caller's own buffer: copied out, never freed.
  const char *src = R"(
    func.func @main(%x: tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32> {
      return %x : tensor<?x?x?x8xf32>
    })";
  auto kernel = cpuEngine().compile(src);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  std::vector<float> x(2 * 3 * 4 * 8), o(x.size(), NAN);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) * 0.5f - 7;
  std::vector<int64_t> s{2, 3, 4, 8};
  // A BSHD output view: the copy goes through its strides.
  std::vector<int64_t> bshd{4 * 3 * 8, 8, 3 * 8, 1};
  TensorView out(o.data(), DType::F32, s, bshd);
  ASSERT_EQ(launchError(**kernel, {TensorView(x.data(), DType::F32, s)}, out),
            "");
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t t = 0; t < 4; ++t)
        for (int64_t d = 0; d < 8; ++d)
          ASSERT_EQ(o[b * 96 + t * 24 + h * 8 + d],
                    x[b * 96 + h * 32 + t * 8 + d]);
  auto again = (*kernel)->run({ref::toHost(
      ref::Tensor({1, 1, 2, 8}, std::vector<double>(16, 3)), DType::F32)});
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->get(15), 3);
}

TEST(HostApiCpu, ResultShapeFollowsTheInputs) {
  std::string src = attentionProgram("plain", 16, "f32");
  auto kernel = cpuEngine().compile(src);
  ASSERT_TRUE(static_cast<bool>(kernel));
  std::vector<int64_t> qs{3, 4, 7, 16}, ks{3, 4, 9, 16};
  TensorView q(nullptr, DType::F32, qs), k(nullptr, DType::F32, ks);
  auto shape = (*kernel)->resultShape({q, k, k});
  ASSERT_TRUE(static_cast<bool>(shape)) << llvm::toString(shape.takeError());
  EXPECT_EQ(*shape, (std::vector<int64_t>{3, 4, 7, 16}));
}

} // namespace
