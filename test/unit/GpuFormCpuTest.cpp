//===- GpuFormCpuTest.cpp - the GPU form of the block program on the CPU --===//
//
// How the GPU form of the block program is tested without a GPU: a flash
// kernel written as an sm_80 kernel states it (layouts, shared buffers, a
// two-stage cp.async pipeline, barriers; test/passes/Inputs/
// flash-gpu-form.mlir) goes through attn-to-cpu, whose
// attn-block-strip-gpu gives every GPU op its sequential meaning, and runs;
// the result is checked against the fp64 oracle of the attn.attention the
// kernel implements, on fresh random inputs (seeds in the messages). The
// same for the sm_90a (wgmma) form attn-to-block generates.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"

#include "attn/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace {

using namespace attn::exec_test;

/// What the kernel computes: causal attention, scale 1/sqrt(64), GQA.
const char *kAttention = R"(
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";

std::string gpuFormKernel() {
  std::ifstream f(std::string(ATTN_SOURCE_DIR) +
                  "/test/passes/Inputs/flash-gpu-form.mlir");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The flash kernel attn-to-block builds for `target` from kAttention (the
/// sm_90a one: wgmma layouts, nvmma_shared buffers, proxy fences), as text.
std::string generatedGpuForm(const std::string &target) {
  Program p(kAttention);
  if (!p.module)
    return "";
  mlir::PassManager pm(&p.ctx);
  mlir::attn::AttnToBlockOptions options;
  options.target = target;
  pm.addPass(mlir::attn::createAttnToBlock(options));
  if (mlir::failed(pm.run(*p.module)))
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  p.module->print(os);
  return text;
}

std::shared_ptr<attn::Kernel>
compileGpuForm(const std::string &src = gpuFormKernel(),
               const std::string &name = "flash-gpu-form.mlir") {
  EXPECT_FALSE(src.empty()) << name;
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  auto kernel = engine().compile(src, options, name);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return *kernel;
}

/// q, k, v rounded to bf16 (so only the kernel's own rounding is measured).
std::vector<Tensor> inputs(int64_t b, int64_t hq, int64_t hk, int64_t t,
                           int64_t s, uint64_t seed) {
  std::vector<Tensor> ins = qkv(b, hq, hk, t, s, 64, 64, seed);
  for (Tensor &x : ins)
    x = *attn::ref::fromHost(attn::ref::toHost(x, attn::DType::BF16));
  return ins;
}

Tensor runBf16(attn::Kernel &kernel, const std::vector<Tensor> &ins) {
  auto out = kernel.run(toHost(ins, attn::DType::BF16));
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  EXPECT_EQ(out->dtype, attn::DType::BF16);
  return *attn::ref::fromHost(*out);
}

struct Shape {
  int64_t b, hq, hk, t, s;
};

void expectMatchesOracle(attn::Kernel &kernel, uint64_t seed) {
  Program reference(kAttention);
  ASSERT_TRUE(reference.module);
  // One tile and a partial one, GQA over several tiles, T < S (queries are
  // the last T positions, the first query tile starts mid-way), one tile.
  for (Shape c : std::vector<Shape>{{1, 2, 2, 100, 100},
                                    {2, 4, 2, 130, 130},
                                    {1, 2, 1, 37, 150},
                                    {1, 1, 1, 64, 64}}) {
    ++seed;
    std::vector<Tensor> ins = inputs(c.b, c.hq, c.hk, c.t, c.s, seed);
    auto ref = attn::ref::evaluate(reference.main(), ins);
    ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
    Tensor got = runBf16(kernel, ins);
    ASSERT_EQ(got.shape, ref->shape);
    std::string what = "B " + std::to_string(c.b) + " Hq " +
                       std::to_string(c.hq) + " Hk " + std::to_string(c.hk) +
                       " T " + std::to_string(c.t) + " S " +
                       std::to_string(c.s) + " seed " + std::to_string(seed);
    // bf16 output and bf16 P (the mma operand): about 2^-9 relative each.
    EXPECT_LE(attn::ref::relRmsError(got, *ref), 5e-3) << what;
    EXPECT_LE(attn::ref::relError(got, *ref), 2e-2) << what;
  }
}

TEST(GpuFormOnCpu, FlashKernelMatchesOracle) {
  std::shared_ptr<attn::Kernel> kernel = compileGpuForm();
  ASSERT_TRUE(kernel);
  expectMatchesOracle(*kernel, 2600);
}

/// attn-to-block's own sm_90a (wgmma) form of the same attention: its
/// in-place shared operands, accumulator layouts and row-slice conversions
/// mean the same on the CPU.
TEST(GpuFormOnCpu, GeneratedWgmmaKernelMatchesOracle) {
  std::string src = generatedGpuForm("sm_90a");
  ASSERT_NE(src.find("#attn_block.nvmma_shared"), std::string::npos) << src;
  ASSERT_NE(src.find("attn_block.fence_async_shared"), std::string::npos);
  std::shared_ptr<attn::Kernel> kernel =
      compileGpuForm(src, "attn-to-block{target=sm_90a}");
  ASSERT_TRUE(kernel);
  expectMatchesOracle(*kernel, 2800);
}

/// The last key reaches the last query only: changing it changes the last
/// output row and leaves every earlier row bit for bit as it was.
TEST(GpuFormOnCpu, FlashKernelIsCausal) {
  std::shared_ptr<attn::Kernel> kernel = compileGpuForm();
  ASSERT_TRUE(kernel);
  const int64_t t = 100, d = 64;
  const uint64_t seed = 2700;
  std::vector<Tensor> ins = inputs(1, 1, 1, t, t, seed);
  Tensor before = runBf16(*kernel, ins);
  for (int64_t e = 0; e < d; ++e) {
    ins[1].data[(t - 1) * d + e] = 2.0 * (e % 2 ? 1 : -1); // k, bf16-exact
    ins[2].data[(t - 1) * d + e] = 3.0;                    // v
  }
  Tensor after = runBf16(*kernel, ins);
  ASSERT_EQ(before.data.size(), after.data.size());
  bool lastChanged = false;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t e = 0; e < d; ++e) {
      double x = before.data[i * d + e], y = after.data[i * d + e];
      if (i < t - 1)
        ASSERT_EQ(x, y) << "row " << i << " saw a later key (seed " << seed
                        << ")";
      else
        lastChanged |= x != y;
    }
  EXPECT_TRUE(lastChanged) << "the last row ignored its own key (seed " << seed
                           << ")";
}

} // namespace
