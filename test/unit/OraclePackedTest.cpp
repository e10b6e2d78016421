//===- OraclePackedTest.cpp - packed sequences in the oracle --------------===//
//
// cu_seqlens (Oracle.h, packedPositions): a packed batch is the sequences
// computed alone, laid end to end, forward and gradients (a parameter's the
// sum of the sequences'), for every variant (plain, RoPE, FoX, PaTH,
// PaTH-FoX, windows, GQA, MTA's pieces), with
// empty and one-token sequences; the scores' gradient with offsets against
// finite differences. Fresh random data each run; failures print the seed.
//
//===----------------------------------------------------------------------===//

#include "GradCheck.h"
#include "Oracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

using namespace attn::ref;
using namespace attn::grad_test;

namespace {

/// Tokens [lo, hi) of x along axis 2 (x of rank 3 or 4).
Tensor tokens(const Tensor &x, int64_t lo, int64_t hi) {
  std::vector<int64_t> shape = x.shape;
  shape[2] = hi - lo;
  Tensor out = Tensor::zeros(shape);
  const int64_t inner = x.rank() == 4 ? x.shape[3] : 1;
  for (int64_t a = 0; a < x.shape[0]; ++a)
    for (int64_t h = 0; h < x.shape[1]; ++h)
      for (int64_t t = lo; t < hi; ++t)
        for (int64_t e = 0; e < inner; ++e)
          out.data[((a * shape[1] + h) * shape[2] + t - lo) * inner + e] =
              x.data[((a * x.shape[1] + h) * x.shape[2] + t) * inner + e];
  return out;
}

/// max |a - b| over tokens [lo, hi) of `packed` against `alone`.
double tokensDiff(const Tensor &packed, int64_t lo, int64_t hi,
                  const Tensor &alone) {
  Tensor part = tokens(packed, lo, hi);
  EXPECT_EQ(part.shape, alone.shape);
  double worst = 0;
  for (size_t n = 0; n < part.data.size() && n < alone.data.size(); ++n)
    worst = std::fmax(worst, std::fabs(part.data[n] - alone.data[n]));
  return worst;
}

struct PackedCase {
  const char *name;
  Mask mask;
  int64_t window;
  bool rope, path, fox, gateScaled;
  int64_t Hq, Hk;
  /// MTA: both convolutions, both head mixes, the norm and its gate.
  bool mta = false;
};

void PrintTo(const PackedCase &c, std::ostream *os) { *os << c.name; }

class OraclePackedTest : public ::testing::TestWithParam<PackedCase> {};

/// Every input of one case at T tokens.
struct Inputs {
  Tensor q, k, v, w, beta, g;
  /// MTA's parameters (not per token): kernels 3 x 3 pre, 2 x 5 post, a
  /// full pre mix, a post mix in pairs of heads, the norm and its gate.
  Tensor thetaPre, wPre, thetaPost, wPost, gamma, gateW, gateB;
  Inputs(const PackedCase &c, int64_t T, uint64_t seed) {
    const int64_t D = 6, Dv = 5;
    q = randn({1, c.Hq, T, D}, seed + 1);
    k = randn({1, c.Hk, T, D}, seed + 2);
    v = randn({1, c.Hk, T, Dv}, seed + 3);
    w = l2norm(randn({1, c.Hk, T, D}, seed + 4), 0.0);
    beta = randUniform({1, c.Hk, T}, seed + 5, 0.0, 2.0);
    g = randUniform({1, c.Hq, T}, seed + 6, 0.5, 1.0);
    for (double &x : g.data)
      x = std::log(x);
    thetaPre = randn({c.Hq, 3, 3}, seed + 8);
    wPre = randn({c.Hq, c.Hq}, seed + 9);
    thetaPost = randn({c.Hq, 2, 5}, seed + 10);
    wPost = randn({c.Hq, 2}, seed + 11);
    gamma = randn({Dv}, seed + 12);
    gateW = randn({Dv}, seed + 13);
    gateB = randn({1}, seed + 14);
  }
  Inputs(const Inputs &all, int64_t lo, int64_t hi)
      : q(tokens(all.q, lo, hi)), k(tokens(all.k, lo, hi)),
        v(tokens(all.v, lo, hi)), w(tokens(all.w, lo, hi)),
        beta(tokens(all.beta, lo, hi)), g(tokens(all.g, lo, hi)),
        thetaPre(all.thetaPre), wPre(all.wPre), thetaPost(all.thetaPost),
        wPost(all.wPost), gamma(all.gamma), gateW(all.gateW), gateB(all.gateB) {
  }
};

AttentionConfig configOf(const PackedCase &c) {
  AttentionConfig cfg;
  cfg.scale = 0.45;
  cfg.mask = c.mask;
  cfg.window = c.window;
  cfg.rope = c.rope;
  cfg.ropeTheta = 50;
  cfg.ropeOffset = 3;
  cfg.gateScaled = c.gateScaled;
  cfg.postGroup = 2;
  return cfg;
}

Tensor run(const PackedCase &c, const AttentionConfig &cfg, const Inputs &in) {
  auto mta = [&](const Tensor &x) { return c.mta ? &x : nullptr; };
  return attention(cfg, in.q, in.k, in.v, c.path ? &in.w : nullptr,
                   c.path ? &in.beta : nullptr, c.fox ? &in.g : nullptr,
                   mta(in.thetaPre), mta(in.wPre), mta(in.thetaPost),
                   mta(in.wPost), mta(in.gamma), mta(in.gateW), mta(in.gateB));
}

AttentionGrad runGrad(const PackedCase &c, const AttentionConfig &cfg,
                      const Inputs &in, const Tensor &dO) {
  auto mta = [&](const Tensor &x) { return c.mta ? &x : nullptr; };
  return attentionGrad(dO, cfg, in.q, in.k, in.v, c.path ? &in.w : nullptr,
                       c.path ? &in.beta : nullptr, c.fox ? &in.g : nullptr,
                       mta(in.thetaPre), mta(in.wPre), mta(in.thetaPost),
                       mta(in.wPost), mta(in.gamma), mta(in.gateW),
                       mta(in.gateB));
}

/// The MTA parameters' gradients of `grad`, in a fixed order.
std::vector<const Tensor *> mtaGrads(const AttentionGrad &grad) {
  return {&grad.thetaPre, &grad.wPre,  &grad.thetaPost, &grad.wPost,
          &grad.gamma,    &grad.gateW, &grad.gateB};
}

} // namespace

/// Offsets with an empty sequence, a one-token one and longer ones.
TEST_P(OraclePackedTest, IsEachSequenceAlone) {
  const PackedCase &c = GetParam();
  const uint64_t seed = freshSeed();
  const std::vector<int64_t> cu = {0, 4, 4, 5, 13, 20};
  const int64_t T = cu.back();
  Inputs all(c, T, seed);
  AttentionConfig packedCfg = configOf(c);
  packedCfg.cuSeqlens = cu;
  const Tensor out = run(c, packedCfg, all);
  const Tensor dO = randn(out.shape, seed + 7);
  const AttentionGrad grad = runGrad(c, packedCfg, all, dO);
  // A parameter's gradient is the sum of the sequences' (MTA).
  std::vector<Tensor> paramSums;
  for (const Tensor *x : mtaGrads(grad))
    paramSums.push_back(Tensor::zeros(x->shape));
  for (size_t n = 0; n + 1 < cu.size(); ++n) {
    const int64_t lo = cu[n], hi = cu[n + 1];
    if (lo == hi)
      continue;
    const std::string what = std::string(c.name) + ", sequence " +
                             std::to_string(n) + ", seed " +
                             std::to_string(seed);
    Inputs alone(all, lo, hi);
    const AttentionConfig cfg = configOf(c);
    EXPECT_LE(tokensDiff(out, lo, hi, run(c, cfg, alone)), 1e-12) << what;
    const AttentionGrad want = runGrad(c, cfg, alone, tokens(dO, lo, hi));
    EXPECT_LE(tokensDiff(grad.q, lo, hi, want.q), 1e-12) << what << " dq";
    EXPECT_LE(tokensDiff(grad.k, lo, hi, want.k), 1e-12) << what << " dk";
    EXPECT_LE(tokensDiff(grad.v, lo, hi, want.v), 1e-12) << what << " dv";
    if (c.path) {
      EXPECT_LE(tokensDiff(grad.w, lo, hi, want.w), 1e-12) << what << " dw";
      EXPECT_LE(tokensDiff(grad.beta, lo, hi, want.beta), 1e-12)
          << what << " dbeta";
    }
    if (c.fox) {
      EXPECT_LE(tokensDiff(grad.g, lo, hi, want.g), 1e-12) << what << " dg";
    }
    const std::vector<const Tensor *> parts = mtaGrads(want);
    for (size_t i = 0; c.mta && i < parts.size(); ++i)
      for (size_t e = 0; e < paramSums[i].data.size(); ++e)
        paramSums[i].data[e] += parts[i]->data[e];
  }
  if (!c.mta)
    return;
  const char *names[] = {"dthetaPre", "dwPre",  "dthetaPost", "dwPost",
                         "dgamma",    "dgateW", "dgateB"};
  const std::vector<const Tensor *> packed = mtaGrads(grad);
  for (size_t i = 0; i < packed.size(); ++i)
    for (size_t e = 0; e < paramSums[i].data.size(); ++e)
      EXPECT_NEAR(packed[i]->data[e], paramSums[i].data[e],
                  1e-10 * (1 + std::fabs(paramSums[i].data[e])))
          << c.name << " " << names[i] << " [" << e << "], seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(
    Oracle, OraclePackedTest,
    ::testing::Values(
        PackedCase{"plain", Mask::Causal, 0, false, false, false, false, 2, 2},
        PackedCase{"ropeGqa", Mask::Causal, 0, true, false, false, false, 4, 2},
        PackedCase{"ropeNoMask", Mask::None, 0, true, false, false, false, 2,
                   1},
        PackedCase{"foxWindow", Mask::SlidingWindow, 3, false, false, true,
                   false, 2, 1},
        PackedCase{"path", Mask::Causal, 0, false, true, false, false, 2, 1},
        PackedCase{"pathFoxRope", Mask::Causal, 0, true, true, true, true, 2,
                   2},
        PackedCase{"mta", Mask::Causal, 0, false, false, false, false, 4, 4,
                   true},
        PackedCase{"mtaRopeFoxGqa", Mask::Causal, 0, true, false, true, false,
                   4, 2, true}),
    [](const ::testing::TestParamInfo<PackedCase> &info) {
      return std::string(info.param.name);
    });

/// scoresGrad with offsets against central differences of scores().
TEST(OraclePacked, ScoresGradMatchesFiniteDifferences) {
  const uint64_t seed = freshSeed();
  const std::vector<int64_t> cu = {0, 3, 3, 7, 9};
  const int64_t T = cu.back(), D = 4;
  Tensor q = randn({1, 2, T, D}, seed + 1);
  Tensor k = randn({1, 1, T, D}, seed + 2);
  Tensor w = l2norm(randn({1, 1, T, D}, seed + 3), 0.0);
  Tensor beta = randUniform({1, 1, T}, seed + 4, 0.0, 2.0);
  Tensor g = randUniform({1, 2, T}, seed + 5, -0.5, 0.0);
  const Tensor dy = randn({1, 2, T, T}, seed + 6);
  const ScoresGrad grad =
      scoresGrad(dy, q, k, 0.7, &w, &beta, &g, true, Mask::Causal, 0, &cu);
  auto lossFn = [&] {
    return loss(scores(q, k, 0.7, &w, &beta, &g, true, Mask::Causal, 0, &cu),
                dy);
  };
  expectGradMatches("packed scores dq", q, grad.q, lossFn, seed);
  expectGradMatches("packed scores dk", k, grad.k, lossFn, seed);
  expectGradMatches("packed scores dw", w, grad.w, lossFn, seed);
  expectGradMatches("packed scores dbeta", beta, grad.beta, lossFn, seed);
  expectGradMatches("packed scores dg", g, grad.g, lossFn, seed);
  // No logit crosses a sequence: every cross cell is masked.
  const Tensor s = scores(q, k, 0.7, &w, &beta, &g, true, Mask::Causal, 0, &cu);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      bool same = (i < 3) == (j < 3) && (i < 7) == (j < 7);
      if (!same || j > i) {
        EXPECT_EQ(s.at(0, 0, i, j), -INFINITY) << i << ", " << j;
      }
    }
}

TEST(OraclePacked, PositionsRestartAtEachSequence) {
  EXPECT_EQ(packedPositions({0, 2, 2, 5}, 10),
            (std::vector<int64_t>{10, 11, 10, 11, 12}));
  EXPECT_EQ(packedPositions({0, 0}), std::vector<int64_t>{});
}
