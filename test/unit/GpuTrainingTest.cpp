//===- GpuTrainingTest.cpp - the fused backward on the GPU vs the oracle --===//
//
// Training pairs (Engine::compileTraining on a "cuda" engine) of plain,
// RoPE, FoX and RoPE+FoX attention in bf16/f16: the forward's output and
// LSE, then the backward's gradients, each compared with the fp64 oracle's
// (ref::evaluateGrad) on the same rounded inputs and cotangent: relative
// RMS within fla's criteria (dq, dk, dv 8e-3, dg 2e-2) and the worst row
// within 5e-2 (ref::kGradRowFloor), dQ by reducing stores and by the second
// walk. The runtime poisons every output, so an
// unwritten row fails. Fresh inputs per run (ATTN_SEED replays one); without a
// GPU every case skips with a message.
//
//===----------------------------------------------------------------------===//

#include "GpuAttentionCases.h"
#include "GpuEngine.h"
#include "GradChecks.h"

namespace {

using namespace attn::gpu_test;
using attn::test_util::expectClose;

/// The output's bounds: a 16-bit forward's.
const attn::ref::ErrorBound kOutput{true, attn::ref::kHalfRmsBound,
                                    attn::ref::kHalfRowBound};

class GpuTraining : public ::testing::TestWithParam<Case> {};

TEST_P(GpuTraining, GradientsMatchOracle) {
  const Case &c = GetParam();
  std::string src = programFor(c);
  Parsed p(src);
  ASSERT_TRUE(p.module) << src;
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  const uint64_t seed = attn::ref::freshSeed();
  std::ostringstream name;
  PrintTo(c, &name);
  SCOPED_TRACE(name.str() + ", seed " + std::to_string(seed));

  std::vector<HostArray> host;
  Tensor out;
  ASSERT_NO_FATAL_FAILURE(randomCase(c, p, seed, host, out));
  // The oracle's inputs: the values the kernels take.
  std::vector<Tensor> exact;
  for (const HostArray &h : host) {
    auto t = attn::ref::fromHost(h);
    ASSERT_TRUE(static_cast<bool>(t));
    exact.push_back(std::move(*t));
  }
  HostArray dOHost =
      attn::ref::toHost(attn::ref::randomCotangent(out.shape, seed), c.dtype);
  auto dO = attn::ref::fromHost(dOHost);
  ASSERT_TRUE(static_cast<bool>(dO));
  auto want = attn::ref::evaluateGrad(p.main(), exact, *dO);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());

  // dQ (and FoX's row sums of dS) by reducing stores and by the second
  // walk (the default).
  const std::vector<std::string> gradDqs = {"reduce", "walk"};
  for (const std::string &chip : blockChipsOf(*engine))
    for (const std::string &gradDq : gradDqs) {
      SCOPED_TRACE("chip " + (chip.empty() ? engine->gpuArch() : chip) +
                   ", grad-dq=" + gradDq);
      attn::CompileOptions opts;
      opts.gpu.chip = chip;
      opts.gpu.gradDq = gradDq;
      auto pair = engine->compileTraining(src, opts);
      ASSERT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());
      ASSERT_EQ(pair->forward->device(), attn::Device::CUDA);
      ASSERT_EQ(pair->backward->device(), attn::Device::CUDA);
      auto fwd = pair->forward->runAll(host);
      ASSERT_TRUE(static_cast<bool>(fwd)) << llvm::toString(fwd.takeError());
      ASSERT_EQ(fwd->size(), 2u) << "the output and its LSE";
      expectClose((*fwd)[0], out, kOutput, name.str() + " output", "gpu");
      std::vector<HostArray> args = host;
      args.insert(args.end(), fwd->begin(), fwd->end());
      args.push_back(dOHost);
      auto grads = pair->backward->runAll(args);
      ASSERT_TRUE(static_cast<bool>(grads))
          << llvm::toString(grads.takeError());
      ASSERT_EQ(grads->size(), pair->gradArgs.size());
      const char *names[] = {"dq", "dk", "dv", "dg"};
      for (auto [i, n] : llvm::enumerate(pair->gradArgs)) {
        ASSERT_TRUE((*want)[n].has_value());
        expectClose((*grads)[i], *(*want)[n],
                    n == 3 ? attn::test_util::kGateGrad16
                           : attn::test_util::kGrad16,
                    name.str() + " " + names[n], "gpu");
      }
    }
}

// Tile edges (63, 64, 65), a long sequence, GQA, head dims 64 and 128 and
// ones the tiles pad, f16, the three masks (FoX always has one), one
// decoding query over 65 keys, packed sequences.
std::vector<Case> cases() {
  auto bf16 = [](const char *variant, int64_t h, int64_t hk, int64_t t,
                 int64_t d, std::string mask = "") {
    return Case{variant, 1, h, hk, t, d, DType::BF16, std::move(mask)};
  };
  std::vector<Case> v = {
      bf16("plain", 4, 2, 63, 64),
      bf16("plain", 4, 2, 64, 64),
      bf16("plain", 4, 2, 65, 64),
      bf16("plain", 4, 2, 1000, 64),
      bf16("plain", 2, 2, 1000, 128),
      bf16("plain", 1, 1, 4096, 128),
      {"plain", 1, 2, 1, 1000, 64, DType::F16, "mask none"},
      bf16("plain", 2, 2, 1000, 128, "mask sliding_window window 100"),
      bf16("rope", 4, 2, 1000, 64),
      bf16("rope", 2, 2, 65, 128),
      bf16("fox", 4, 2, 1000, 64),
      bf16("fox", 1, 1, 4096, 128),
      {"fox", 1, 2, 2, 1000, 64, DType::F16, "mask sliding_window window 100"},
      bf16("rope_fox", 2, 2, 1000, 128),
      {"rope_fox", 1, 4, 2, 513, 64, DType::F16},
      // Head dims the tiles pad (gpuTileHeadDim).
      bf16("plain", 4, 2, 300, 96),
      bf16("fox", 2, 1, 300, 32),
      bf16("rope", 2, 2, 257, 96, "mask sliding_window window 70"),
  };
  Case decode = bf16("plain", 2, 2, 1, 64);
  decode.S = 65;
  v.push_back(decode);
  // Packed sequences (3 random cuts): both walks bounded and masked by
  // them, RoPE's positions restarting, every mask.
  for (Case c :
       {bf16("plain", 4, 2, 1000, 64), bf16("fox", 4, 2, 4096, 128),
        bf16("rope_fox", 2, 2, 1000, 128),
        bf16("rope", 4, 2, 1000, 64, "mask none"),
        bf16("fox", 2, 1, 1000, 64, "mask sliding_window window 100")}) {
    c.packed = true;
    v.push_back(c);
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Variants, GpuTraining, ::testing::ValuesIn(cases()));

} // namespace
