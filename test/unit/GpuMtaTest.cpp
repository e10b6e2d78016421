//===- GpuMtaTest.cpp - Multi-Token Attention on CUDA vs the fp64 oracle --===//
//
// MTA (key-query convolutions, head mixing, the head norm and its gate,
// with FoX) through the runtime on a CUDA device:
// attn-to-block{target=chip} builds MTA's GPU form
// (MtaToBlockGpu.cpp), attn-block-launch-plan its launch plan,
// attn-block-to-gpu the PTX. Fresh random inputs (the seed is printed), q,
// k, v rounded to bf16/f16 first; the runtime poisons the output before
// each run. Bounds: relative RMS <= kHalfRmsBound (5e-3) and the worst row
// <= kHalfRowBound (2e-2). Without a GPU every case skips with a message.
//
//===----------------------------------------------------------------------===//

#include "GpuEngine.h"
#include "MtaSources.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace {

using namespace attn::exec_test;
using attn::gpu_test::gpuEngine;

struct MtaCase {
  MtaForm f;
  int64_t B, Hq, Hk, T, S;
};

void PrintTo(const MtaCase &c, std::ostream *os) {
  *os << describe(c.f) << " B=" << c.B << " Hq=" << c.Hq << " Hk=" << c.Hk
      << " T=" << c.T << " S=" << c.S;
}

std::shared_ptr<attn::Kernel> compileMta(attn::Engine &engine,
                                         const std::string &src,
                                         const std::string &chip) {
  return attn::gpu_test::compileBlockPlan(engine, src, chip, "MTA");
}

Tensor runOn(attn::Kernel &kernel, const MtaForm &f,
             const std::vector<Tensor> &ins) {
  auto out = kernel.run(mtaHostInputs(f, ins));
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  EXPECT_EQ(out->dtype, dtypeOf(f.elt));
  auto got = attn::ref::fromHost(*out);
  EXPECT_TRUE(static_cast<bool>(got));
  return got ? *got : Tensor();
}

class GpuMta : public ::testing::TestWithParam<MtaCase> {};

TEST_P(GpuMta, MatchesOracle) {
  const MtaCase &c = GetParam();
  std::string src = mtaSource(c.f);
  Program p(src);
  ASSERT_TRUE(p.module) << src;
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  const uint64_t seed = attn::ref::freshSeed();
  std::vector<Tensor> ins = mtaInputs(c.f, c.B, c.Hq, c.Hk, c.T, c.S, seed);
  auto ref = attn::ref::evaluate(p.main(), ins);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  for (const std::string &chip : attn::gpu_test::blockChipsOf(*engine)) {
    SCOPED_TRACE("chip '" + chip + "', seed " + std::to_string(seed));
    std::shared_ptr<attn::Kernel> kernel = compileMta(*engine, src, chip);
    ASSERT_TRUE(kernel);
    Tensor got = runOn(*kernel, c.f, ins);
    ASSERT_EQ(got.shape, ref->shape);
    size_t bad = 0;
    for (double x : got.data)
      bad += !std::isfinite(x);
    EXPECT_EQ(bad, 0u) << "non-finite outputs (unwritten rows?)";
    double rms = attn::ref::relRmsError(got, *ref);
    int64_t row = -1;
    double worst = attn::ref::worstRowRelError(got, *ref, &row);
    EXPECT_LE(rms, attn::ref::kHalfRmsBound) << src;
    EXPECT_LE(worst, attn::ref::kHalfRowBound) << "worst row " << row << "\n"
                                               << src;
    std::printf("[ gpu mta ] %s chip '%s' seed %llu: relative RMS %.3e, "
                "worst row %.3e (row %lld)\n",
                ::testing::PrintToString(c).c_str(), chip.c_str(),
                static_cast<unsigned long long>(seed), rms, worst,
                static_cast<long long>(row));
  }
}

std::vector<MtaCase> mtaCases() {
  std::vector<MtaCase> v;
  const int kernels[][2] = {{1, 1}, {2, 3}, {3, 5}, {6, 11}};
  // Kernel sizes x group sizes, pre-only and the released composition
  // (without RoPE), H = 4, across the row-tile boundary.
  for (bool post : {false, true})
    for (auto [cq, ck] : kernels)
      for (int ch : {1, 2, 0}) {
        MtaForm f;
        f.cq = cq;
        f.ck = ck;
        f.ch = ch;
        f.post = f.mixPost = f.norm = f.gate = post;
        v.push_back({f, 1, 4, 4, 65, 65});
        if (cq == 6)
          v.push_back({f, 1, 4, 4, 1000, 1000});
      }
  for (bool post : {false, true}) {
    MtaForm f;
    f.post = f.mixPost = post;
    // D = 128 (the released head dim), Dv != D, f16, batch > 1.
    MtaForm d128 = f;
    d128.d = d128.dv = 128;
    v.push_back({d128, 2, 4, 4, 300, 300});
    MtaForm narrowV = f;
    narrowV.d = 128;
    v.push_back({narrowV, 1, 2, 2, 200, 200});
    MtaForm half = f;
    half.elt = "f16";
    v.push_back({half, 1, 4, 4, 257, 257});
    // FoX, GQA with T < S, the largest kernel of the form.
    MtaForm fox = f;
    fox.fox = true;
    v.push_back({fox, 1, 4, 4, 500, 500});
    MtaForm gqa = f;
    gqa.cq = 3;
    gqa.ck = 5;
    v.push_back({gqa, 1, 4, 2, 100, 700});
    MtaForm wide = f;
    wide.cq = 65;
    wide.ck = 17;
    v.push_back({wide, 1, 2, 2, 300, 300});
    // RoPE (the released configuration), with FoX too.
    MtaForm rope = f;
    rope.rope = true;
    v.push_back({rope, 1, 4, 4, 1000, 1000});
    MtaForm ropeFox = d128;
    ropeFox.rope = ropeFox.fox = true;
    v.push_back({ropeFox, 1, 2, 1, 200, 333});
    // 16 heads mixed in groups of 16 (the released configuration's c_h) and
    // of 8: the head mixes' blocked path (c_h a multiple of 8).
    MtaForm heads16 = rope;
    heads16.d = heads16.dv = 128;
    v.push_back({heads16, 1, 16, 16, 300, 300});
    MtaForm groups8 = f;
    groups8.ch = 8;
    v.push_back({groups8, 1, 16, 16, 200, 200});
    // Long sequences on few heads (the oracle is O(H T^2 c_q c_k)).
    v.push_back({d128, 1, 2, 2, 4096, 4096});
    MtaForm small = f;
    small.cq = 2;
    small.ck = 3;
    small.ch = 1;
    v.push_back({small, 1, 1, 1, 8192, 8192});
    // Packed sequences (random cuts): halos stop at each sequence's start.
    MtaForm packed = d128;
    packed.packed = true;
    v.push_back({packed, 1, 4, 4, 1000, 1000});
    MtaForm packedRope = rope;
    packedRope.packed = packedRope.fox = true;
    v.push_back({packedRope, 1, 4, 2, 300, 300});
  }
  return v;
}

std::string caseName(const ::testing::TestParamInfo<MtaCase> &info) {
  const MtaCase &c = info.param;
  const MtaForm &f = c.f;
  return llvm::formatv(
             "{0}_k{1}x{2}_ch{3}_D{4}_{5}_{6}{7}{8}_B{9}Hq{10}Hk{11}_T{12}"
             "_S{13}_{14}",
             f.post ? "full" : "pre", f.cq, f.ck, f.ch, f.d, f.dv, f.elt,
             f.fox ? "_fox" : "", f.packed ? "_packed" : "", c.B, c.Hq, c.Hk,
             c.T, c.S, info.index)
      .str();
}

INSTANTIATE_TEST_SUITE_P(All, GpuMta, ::testing::ValuesIn(mtaCases()),
                         caseName);

/// Causality on the device: changing token 100's q, k and v leaves every
/// earlier output row of every head bit for bit and changes row 100 and
/// the last row; pre-only and with the post pieces.
TEST(GpuMtaProperties, IsCausal) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  for (bool post : {false, true}) {
    MtaForm f;
    f.post = f.mixPost = post;
    const int64_t h = 4, t = 300, d = 64, at = 100;
    const uint64_t seed = attn::ref::freshSeed();
    SCOPED_TRACE(describe(f) + ", seed " + std::to_string(seed));
    std::string src = mtaSource(f);
    std::vector<Tensor> ins = mtaInputs(f, 1, h, h, t, t, seed);
    for (const std::string &chip : attn::gpu_test::blockChipsOf(*engine)) {
      std::shared_ptr<attn::Kernel> kernel = compileMta(*engine, src, chip);
      ASSERT_TRUE(kernel);
      Tensor before = runOn(*kernel, f, ins);
      std::vector<Tensor> changed = ins;
      for (int64_t g = 0; g < h; ++g)
        for (int64_t e = 0; e < d; ++e)
          for (int i = 0; i < 3; ++i)
            changed[i].data[(g * t + at) * d + e] = e % 2 ? 1.5 : -2.0;
      Tensor after = runOn(*kernel, f, changed);
      ASSERT_EQ(after.data.size(), before.data.size());
      for (int64_t g = 0; g < h; ++g)
        for (int64_t r = 0; r < t; ++r) {
          bool same = true;
          for (int64_t e = 0; e < d; ++e)
            same &= before.data[(g * t + r) * d + e] ==
                    after.data[(g * t + r) * d + e];
          if (r < at) {
            EXPECT_TRUE(same) << chip << " head " << g << " row " << r;
          } else if (r == at || r == t - 1) {
            EXPECT_FALSE(same) << chip << " head " << g << " row " << r;
          }
        }
    }
  }
}

/// examples/mta_bf16.mlir (the released configuration with RoPE, D = 128)
/// and mta_pre_bf16.mlir on the device: what `attn-run <example> --device=cuda
/// --random=1x4x1000 --check` runs.
TEST(GpuMtaProperties, ExamplesRunOnTheDevice) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  for (const char *name : {"mta_bf16.mlir", "mta_pre_bf16.mlir"}) {
    std::string src = readExample(name);
    ASSERT_FALSE(src.empty()) << name;
    Program p(src);
    ASSERT_TRUE(p.module) << name;
    const uint64_t seed = attn::ref::freshSeed();
    SCOPED_TRACE(std::string(name) + ", seed " + std::to_string(seed));
    attn::ref::RandomSpec spec;
    spec.batch = 1;
    spec.heads = 4;
    spec.seqLen = 1000;
    spec.seed = seed;
    auto drawn = attn::ref::randomInputs(p.main(), spec);
    ASSERT_TRUE(static_cast<bool>(drawn)) << llvm::toString(drawn.takeError());
    std::vector<Tensor> ins = std::move(*drawn);
    MtaForm f; // bf16 activations, f32 parameters
    for (size_t i = 0; i < 3; ++i)
      ins[i] =
          *attn::ref::fromHost(attn::ref::toHost(ins[i], attn::DType::BF16));
    auto ref = attn::ref::evaluate(p.main(), ins);
    ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
    for (const std::string &chip : attn::gpu_test::blockChipsOf(*engine)) {
      std::shared_ptr<attn::Kernel> kernel = compileMta(*engine, src, chip);
      ASSERT_TRUE(kernel);
      Tensor got = runOn(*kernel, f, ins);
      ASSERT_EQ(got.shape, ref->shape);
      double rms = attn::ref::relRmsError(got, *ref);
      double worst = attn::ref::worstRowRelError(got, *ref);
      EXPECT_LE(rms, attn::ref::kHalfRmsBound) << chip;
      EXPECT_LE(worst, attn::ref::kHalfRowBound) << chip;
      std::printf("[ gpu mta ] %s chip '%s' seed %llu: relative RMS %.3e, "
                  "worst row %.3e\n",
                  name, chip.c_str(), static_cast<unsigned long long>(seed),
                  rms, worst);
    }
  }
}

} // namespace
