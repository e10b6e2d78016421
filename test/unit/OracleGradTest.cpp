//===- OracleGradTest.cpp - the oracle's gradients vs finite differences --===//
//
// Every gradient of reference/Oracle.h (fooGrad) against central differences
// of the oracle's own forward, for every differentiable argument: one random
// direction (<grad, u> against (L(x + hu) - L(x - hu)) / 2h) and single
// entries (the largest and random ones), with L = sum(foo(...) * dy)
// (GradCheck.h). Fresh random shapes and data each run; failures print the
// seed.
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

/// Small random sizes from a seed: B in 1..2, T in 5..9, D in {4, 6, 8}.
struct Dims {
  int64_t B, T, D;
  explicit Dims(uint64_t seed)
      : B(1 + seed % 2), T(5 + (seed >> 3) % 5), D(4 + 2 * ((seed >> 7) % 3)) {}
};

/// Unit-norm rows, as PaTH's w is drawn (the gradient is w.r.t. any w).
Tensor unitRows(const std::vector<int64_t> &shape, uint64_t seed) {
  return l2norm(randn(shape, seed), 0.0);
}

/// log f with f in (0.5, 1): FoX's log forget gates.
Tensor logGates(const std::vector<int64_t> &shape, uint64_t seed) {
  Tensor t = randUniform(shape, seed, 0.5, 1.0);
  for (double &x : t.data)
    x = std::log(x);
  return t;
}

/// A [B, H, T, S] score-like map: random where key j is visible from query
/// i (causal, or within `window` when > 0), `beyond` elsewhere.
Tensor maskedMap(int64_t B, int64_t H, int64_t T, int64_t S, int64_t window,
                 double beyond, uint64_t seed) {
  Tensor x = randn({B, H, T, S}, seed);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < S; ++j) {
          const int64_t p = i + S - T;
          if (j > p || (window > 0 && j <= p - window))
            x.at(b, h, i, j) = beyond;
        }
  return x;
}

const char *maskName(Mask m) {
  return m == Mask::Causal ? "causal" : m == Mask::None ? "none" : "window";
}

} // namespace

TEST(OracleGrad, Rope) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  const std::vector<int64_t> positions = [&] {
    std::vector<int64_t> p;
    for (int64_t t = 0; t < d.T; ++t)
      p.push_back(3 * t + 1 - t % 2); // not increasing by one
    return p;
  }();
  for (RopeStyle style : {RopeStyle::Half, RopeStyle::Interleaved})
    for (int64_t R : {d.D, d.D - 2})
      for (bool explicitPositions : {false, true}) {
        const std::string what =
            std::string(style == RopeStyle::Half ? "half" : "interleaved") +
            ", R " + std::to_string(R) +
            (explicitPositions ? ", positions" : ", offset 3");
        const std::vector<int64_t> *pos =
            explicitPositions ? &positions : nullptr;
        Tensor x = randn({d.B, 2, d.T, d.D}, seed + 1);
        const Tensor dy = randn(x.shape, seed + 2);
        const Tensor dx = ropeGrad(dy, 500.0, R, style, 3, pos);
        expectGradMatches(
            "rope dx, " + what, x, dx,
            [&] { return loss(rope(x, 500.0, R, style, 3, pos), dy); }, seed);
      }
}

namespace {

struct ScoresCase {
  Mask mask;
  int64_t window;
  bool path, fox, gateScaled;
  int64_t Hq, Hk;
  int64_t extraKeys; ///< S - T (negative: more queries than keys)
};

std::string describe(const ScoresCase &c) {
  return std::string(maskName(c.mask)) +
         (c.mask == Mask::SlidingWindow ? " " + std::to_string(c.window) : "") +
         (c.path ? ", PaTH" : "") + (c.fox ? ", FoX" : "") +
         (c.gateScaled ? " scaled" : "") + ", Hq " + std::to_string(c.Hq) +
         ", Hk " + std::to_string(c.Hk) + ", S - T " +
         std::to_string(c.extraKeys);
}

void PrintTo(const ScoresCase &c, std::ostream *os) { *os << describe(c); }

class ScoresGradTest : public ::testing::TestWithParam<ScoresCase> {};

} // namespace

TEST_P(ScoresGradTest, EveryInput) {
  const ScoresCase &c = GetParam();
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  const int64_t T = d.T, S = d.T + c.extraKeys, B = d.B, D = d.D;
  Tensor q = randn({B, c.Hq, T, D}, seed + 1);
  Tensor k = randn({B, c.Hk, S, D}, seed + 2);
  Tensor w = unitRows({B, c.Hk, S, D}, seed + 3);
  Tensor beta = randUniform({B, c.Hk, S}, seed + 4, 0.0, 2.0);
  Tensor g = logGates({B, c.Hq, S}, seed + 5);
  const Tensor dy = randn({B, c.Hq, T, S}, seed + 6);
  const double scale = 0.6;
  Tensor *wp = c.path ? &w : nullptr, *bp = c.path ? &beta : nullptr;
  Tensor *gp = c.fox ? &g : nullptr;

  const ScoresGrad grad =
      scoresGrad(dy, q, k, scale, wp, bp, gp, c.gateScaled, c.mask, c.window);
  auto lossFn = [&] {
    return loss(scores(q, k, scale, wp, bp, gp, c.gateScaled, c.mask, c.window),
                dy);
  };
  const std::string what = describe(c);
  expectGradMatches("scores dq, " + what, q, grad.q, lossFn, seed);
  expectGradMatches("scores dk, " + what, k, grad.k, lossFn, seed);
  if (c.path) {
    expectGradMatches("scores dw, " + what, w, grad.w, lossFn, seed);
    expectGradMatches("scores dbeta, " + what, beta, grad.beta, lossFn, seed);
  } else {
    EXPECT_TRUE(grad.w.data.empty() && grad.beta.data.empty());
  }
  if (c.fox)
    expectGradMatches("scores dg, " + what, g, grad.g, lossFn, seed);
  else
    EXPECT_TRUE(grad.g.data.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Oracle, ScoresGradTest,
    ::testing::Values(
        ScoresCase{Mask::Causal, 0, false, false, false, 2, 2, 0},
        ScoresCase{Mask::None, 0, false, false, false, 2, 1, 2},
        ScoresCase{Mask::None, 0, false, false, false, 2, 2, -2},
        ScoresCase{Mask::SlidingWindow, 3, false, true, true, 2, 1, 0},
        ScoresCase{Mask::Causal, 0, false, true, false, 2, 2, 2},
        ScoresCase{Mask::Causal, 0, true, false, false, 2, 1, 2},
        ScoresCase{Mask::Causal, 0, true, true, true, 2, 2, 0},
        ScoresCase{Mask::Causal, 0, true, true, false, 2, 1, 0},
        ScoresCase{Mask::SlidingWindow, 2, true, true, false, 2, 1, 1},
        ScoresCase{Mask::None, 0, true, true, true, 2, 2, 1}),
    [](const ::testing::TestParamInfo<ScoresCase> &info) {
      return "Case" + std::to_string(info.index);
    });

TEST(OracleGrad, KqConv) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  struct Kernel {
    int64_t cq, ck;
  };
  for (Stage stage : {Stage::Pre, Stage::Post})
    for (Kernel kern : {Kernel{2, 3}, Kernel{3, 5}, Kernel{1, 1}})
      for (int64_t extraKeys : {0, 2})
        for (int64_t window : {0, 3}) {
          const int64_t H = 2, S = d.T + extraKeys;
          const std::string what =
              std::string(stage == Stage::Pre ? "pre " : "post ") +
              std::to_string(kern.cq) + "x" + std::to_string(kern.ck) +
              ", S - T " + std::to_string(extraKeys) + ", window " +
              std::to_string(window);
          // Pre reads logits (-inf where masked), Post probabilities (0).
          Tensor x = maskedMap(d.B, H, d.T, S, window,
                               stage == Stage::Pre ? -kInf : 0.0, seed + 1);
          Tensor theta = randn({H, kern.cq, kern.ck}, seed + 2, 0.5);
          const Tensor dy = randn(x.shape, seed + 3);
          const KqConvGrad grad = kqConvGrad(dy, x, theta, stage);
          auto lossFn = [&] { return loss(kqConv(x, theta, stage), dy); };
          expectGradMatches("kqConv dx, " + what, x, grad.x, lossFn, seed);
          expectGradMatches("kqConv dtheta, " + what, theta, grad.theta, lossFn,
                            seed);
        }
}

TEST(OracleGrad, HeadMix) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  struct Mix {
    int64_t H, ch;
  };
  for (Stage stage : {Stage::Pre, Stage::Post})
    for (Mix mix : {Mix{2, 1}, Mix{2, 2}, Mix{4, 2}})
      for (int64_t extraKeys : {0, 2}) {
        const int64_t S = d.T + extraKeys;
        const std::string what =
            std::string(stage == Stage::Pre ? "pre" : "post") + ", H " +
            std::to_string(mix.H) + ", c_h " + std::to_string(mix.ch) +
            ", S - T " + std::to_string(extraKeys);
        Tensor x = maskedMap(d.B, mix.H, d.T, S, 0,
                             stage == Stage::Pre ? -kInf : 0.0, seed + 1);
        Tensor W = randn({mix.H, mix.ch}, seed + 2);
        const Tensor dy = randn(x.shape, seed + 3);
        const HeadMixGrad grad = headMixGrad(dy, x, W, stage);
        auto lossFn = [&] { return loss(headMix(x, W, stage), dy); };
        expectGradMatches("headMix dx, " + what, x, grad.x, lossFn, seed);
        expectGradMatches("headMix dW, " + what, W, grad.W, lossFn, seed);
      }
}

TEST(OracleGrad, Softmax) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  Tensor x = maskedMap(d.B, 2, d.T, d.T + 1, 3, -kInf, seed + 1);
  for (int64_t j = 0; j < d.T + 1; ++j) // a fully masked row: all zeros
    x.at(0, 1, 0, j) = -kInf;
  const Tensor dy = randn(x.shape, seed + 2);
  const Tensor dx = softmaxGrad(dy, x);
  expectGradMatches(
      "softmax dx", x, dx, [&] { return loss(softmax(x), dy); }, seed);
  for (int64_t j = 0; j < d.T + 1; ++j)
    EXPECT_EQ(dx.at(0, 1, 0, j), 0.0);
}

TEST(OracleGrad, WeightedSum) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  for (int64_t Hk : {1, 2}) {
    const int64_t Hq = 2, S = d.T + 2, Dv = d.D + 1;
    Tensor p = maskedMap(d.B, Hq, d.T, S, 0, 0.0, seed + 1);
    Tensor v = randn({d.B, Hk, S, Dv}, seed + 2);
    const Tensor dO = randn({d.B, Hq, d.T, Dv}, seed + 3);
    const WeightedSumGrad grad = weightedSumGrad(dO, p, v);
    auto lossFn = [&] { return loss(weightedSum(p, v), dO); };
    const std::string what = "Hk " + std::to_string(Hk);
    expectGradMatches("weightedSum dp, " + what, p, grad.p, lossFn, seed);
    expectGradMatches("weightedSum dv, " + what, v, grad.v, lossFn, seed);
  }
}

TEST(OracleGrad, HeadNorm) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  for (int gate = 0; gate < 3; ++gate) { // none, weight only, weight + bias
    Tensor o = randn({d.B, 2, d.T, d.D}, seed + 1);
    Tensor gamma = randn({d.D}, seed + 2, 0.3);
    for (double &x : gamma.data)
      x += 1;
    Tensor gateW = randn({d.D}, seed + 3, 0.5);
    Tensor gateB = randn({1}, seed + 4, 0.5);
    Tensor *gw = gate >= 1 ? &gateW : nullptr;
    Tensor *gb = gate >= 2 ? &gateB : nullptr;
    const Tensor dy = randn(o.shape, seed + 5);
    const double eps = 1e-3;
    const HeadNormGrad grad = headNormGrad(dy, o, gamma, eps, gw, gb);
    auto lossFn = [&] { return loss(headNorm(o, gamma, eps, gw, gb), dy); };
    const std::string what = "gate " + std::to_string(gate);
    expectGradMatches("headNorm do, " + what, o, grad.o, lossFn, seed);
    expectGradMatches("headNorm dgamma, " + what, gamma, grad.gamma, lossFn,
                      seed);
    if (gw)
      expectGradMatches("headNorm dgateW, " + what, gateW, grad.gateW, lossFn,
                        seed);
    if (gb)
      expectGradMatches("headNorm dgateB, " + what, gateB, grad.gateB, lossFn,
                        seed);
  }
}

TEST(OracleGrad, ShortConv) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  for (bool silu : {false, true})
    for (int64_t K : {1, 3, 4}) {
      Tensor x = randn({d.B, 2, d.T, d.D}, seed + 1);
      Tensor kernel = randn({2, d.D, K}, seed + 2, 0.5);
      const Tensor dy = randn(x.shape, seed + 3);
      const ShortConvGrad grad = shortConvGrad(dy, x, kernel, silu);
      auto lossFn = [&] { return loss(shortConv(x, kernel, silu), dy); };
      const std::string what =
          std::string(silu ? "silu" : "linear") + ", K " + std::to_string(K);
      expectGradMatches("shortConv dx, " + what, x, grad.x, lossFn, seed);
      expectGradMatches("shortConv dkernel, " + what, kernel, grad.kernel,
                        lossFn, seed);
    }
}

TEST(OracleGrad, L2Norm) {
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  Tensor x = randn({d.B, 2, d.T, d.D}, seed + 1);
  const Tensor dy = randn(x.shape, seed + 2);
  const double eps = 1e-4;
  expectGradMatches(
      "l2norm dx", x, l2normGrad(dy, x, eps),
      [&] { return loss(l2norm(x, eps), dy); }, seed);
}

namespace {

/// One attention() configuration: which optional inputs it takes.
struct AttentionCase {
  const char *name;
  Mask mask;
  int64_t window;
  bool rope, path, fox;
  int64_t Hq, Hk, extraKeys;
  int64_t preCq, preCk, preGroup;    ///< 0: no pre conv / mix
  int64_t postCq, postCk, postGroup; ///< 0: no post conv / mix
  int norm;                          ///< 0 none, 1 gamma, 2 + gate, 3 + bias
};

void PrintTo(const AttentionCase &c, std::ostream *os) { *os << c.name; }

class AttentionGradTest : public ::testing::TestWithParam<AttentionCase> {};

} // namespace

TEST_P(AttentionGradTest, EveryInput) {
  const AttentionCase &c = GetParam();
  const uint64_t seed = freshSeed();
  const Dims d(seed);
  const int64_t B = d.B, T = d.T, S = d.T + c.extraKeys, D = d.D, Dv = D + 1;
  const int64_t H = c.Hq;
  AttentionConfig cfg;
  cfg.scale = 0.5;
  cfg.mask = c.mask;
  cfg.window = c.window;
  cfg.rope = c.rope;
  cfg.ropeTheta = 100;
  cfg.ropeDim = c.rope && D > 4 ? D - 2 : 0;
  cfg.ropeStyle = D == 6 ? RopeStyle::Interleaved : RopeStyle::Half;
  cfg.ropeOffset = 2;
  cfg.gateScaled = c.fox && c.path;
  cfg.normEps = 1e-3;
  cfg.preGroup = c.preGroup;
  cfg.postGroup = c.postGroup;

  // Every input, and whether this case passes it.
  struct Input {
    const char *name;
    Tensor value;
    bool given;
  };
  auto kernel = [&](int64_t cq, int64_t ck, uint64_t s) {
    Tensor t = randn({H, cq, ck}, s, 0.3);
    for (int64_t h = 0; h < H && cq > 0; ++h) // near identity, as MTA starts
      t.at(h, cq - 1, (ck - 1) / 2) += 1;
    return t;
  };
  std::vector<Input> in = {
      {"q", randn({B, c.Hq, T, D}, seed + 1), true},
      {"k", randn({B, c.Hk, S, D}, seed + 2), true},
      {"v", randn({B, c.Hk, S, Dv}, seed + 3), true},
      {"w", unitRows({B, c.Hk, S, D}, seed + 4), c.path},
      {"beta", randUniform({B, c.Hk, S}, seed + 5, 0.0, 2.0), c.path},
      {"g", logGates({B, c.Hq, S}, seed + 6), c.fox},
      {"thetaPre", kernel(c.preCq, c.preCk, seed + 7), c.preCq > 0},
      {"wPre", randn({H, c.preGroup}, seed + 8, 0.7), c.preGroup > 0},
      {"thetaPost", kernel(c.postCq, c.postCk, seed + 9), c.postCq > 0},
      {"wPost", randn({H, c.postGroup}, seed + 10, 0.7), c.postGroup > 0},
      {"gamma", randUniform({Dv}, seed + 11, 0.5, 1.5), c.norm >= 1},
      {"gateW", randn({Dv}, seed + 12, 0.5), c.norm >= 2},
      {"gateB", randn({1}, seed + 13, 0.5), c.norm >= 3},
  };
  auto arg = [&](size_t n) { return in[n].given ? &in[n].value : nullptr; };
  auto run = [&](auto fn, auto... before) {
    return fn(before..., cfg, in[0].value, in[1].value, in[2].value, arg(3),
              arg(4), arg(5), arg(6), arg(7), arg(8), arg(9), arg(10), arg(11),
              arg(12));
  };
  const Tensor dO = randn({B, c.Hq, T, Dv}, seed + 14);
  const AttentionGrad grad =
      run([](const Tensor &dy,
             auto &&...rest) { return attentionGrad(dy, rest...); },
          dO);
  const Tensor *grads[] = {
      &grad.q,     &grad.k,        &grad.v,    &grad.w,         &grad.beta,
      &grad.g,     &grad.thetaPre, &grad.wPre, &grad.thetaPost, &grad.wPost,
      &grad.gamma, &grad.gateW,    &grad.gateB};
  auto lossFn = [&] {
    return loss(run([](auto &&...all) { return attention(all...); }), dO);
  };
  for (size_t n = 0; n < in.size(); ++n) {
    const std::string what = std::string(c.name) + " d" + in[n].name + ", T " +
                             std::to_string(T) + ", D " + std::to_string(D) +
                             ", B " + std::to_string(B);
    if (in[n].given)
      expectGradMatches(what, in[n].value, *grads[n], lossFn, seed);
    else
      EXPECT_TRUE(grads[n]->data.empty()) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Oracle, AttentionGradTest,
    ::testing::Values(
        AttentionCase{"plain", Mask::Causal, 0, false, false, false, 2, 2, 0, 0,
                      0, 0, 0, 0, 0, 0},
        AttentionCase{"ropeNoMaskGqa", Mask::None, 0, true, false, false, 2, 1,
                      2, 0, 0, 0, 0, 0, 0, 1},
        AttentionCase{"ropeFoxWindow", Mask::SlidingWindow, 3, true, false,
                      true, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0},
        AttentionCase{"path", Mask::Causal, 0, false, true, false, 2, 1, 2, 0,
                      0, 0, 0, 0, 0, 0},
        AttentionCase{"pathFoxWindow", Mask::SlidingWindow, 4, false, true,
                      true, 2, 2, 0, 0, 0, 0, 0, 0, 0, 2},
        AttentionCase{"pathRope", Mask::Causal, 0, true, true, true, 2, 1, 0, 0,
                      0, 0, 0, 0, 0, 0},
        AttentionCase{"mtaReleased", Mask::Causal, 0, true, false, false, 2, 2,
                      0, 2, 3, 2, 3, 5, 2, 3},
        AttentionCase{"mtaPreFoxGqa", Mask::Causal, 0, true, false, true, 2, 1,
                      2, 3, 5, 1, 0, 0, 0, 0},
        AttentionCase{"mtaPostWindow", Mask::SlidingWindow, 3, false, false,
                      false, 2, 2, 1, 0, 0, 0, 2, 3, 1, 2},
        AttentionCase{"mtaPathFox", Mask::Causal, 0, false, true, true, 2, 1, 1,
                      2, 3, 2, 3, 5, 2, 3}),
    [](const ::testing::TestParamInfo<AttentionCase> &info) {
      return std::string(info.param.name);
    });
