//===- OracleTest.cpp - Cross-checks of the fp64 reference oracle ---------===//
//
// The oracle (reference/Oracle.h) is the executable spec, so these tests
// check it against *independent* formulations (explicit d x d Householder
// products, the recurrent key-cache form, direct gate sums, hand-computed
// values) and against algebraic identities (identity kernels, repeated KV
// heads, causality). Several tests include negative controls that show the
// comparison would notice a wrong answer.
//
//===----------------------------------------------------------------------===//

#include "Oracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace attn::ref;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Matrix = std::vector<double>; // D x D row major

Matrix identity(int64_t D) {
  Matrix m(D * D, 0.0);
  for (int64_t a = 0; a < D; ++a)
    m[a * D + a] = 1.0;
  return m;
}

Matrix matmul(const Matrix &x, const Matrix &y, int64_t D) {
  Matrix z(D * D, 0.0);
  for (int64_t a = 0; a < D; ++a)
    for (int64_t c = 0; c < D; ++c)
      for (int64_t b = 0; b < D; ++b)
        z[a * D + b] += x[a * D + c] * y[c * D + b];
  return z;
}

/// H_t = I - beta_t w_t w_t^T as an explicit matrix.
Matrix householder(const Tensor &w, const Tensor &beta, int64_t b, int64_t hk,
                   int64_t t, int64_t D) {
  Matrix h = identity(D);
  for (int64_t x = 0; x < D; ++x)
    for (int64_t y = 0; y < D; ++y)
      h[x * D + y] -= beta.at(b, hk, t) * w.at(b, hk, t, x) * w.at(b, hk, t, y);
  return h;
}

/// Explicit PaTH(-FoX) logits: s * q^T (H_p H_{p-1} ... H_{j+1}) k_j plus
/// gamma * sum_{u=j+1..p} g_u, causal mask. `reversed` multiplies the
/// Householders in the wrong order (negative control).
Tensor explicitPathScores(const Tensor &q, const Tensor &k, const Tensor &w,
                          const Tensor &beta, const Tensor *g, double scale,
                          bool gateScaled, bool reversed = false) {
  const int64_t B = q.shape[0], Hq = q.shape[1], T = q.shape[2], D = q.shape[3],
                Hk = k.shape[1], S = k.shape[2];
  Tensor out = Tensor::full({B, Hq, T, S}, -kInf);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < T; ++i) {
        const int64_t p = i + S - T;
        for (int64_t j = 0; j <= p; ++j) {
          Matrix P = identity(D);
          if (!reversed)
            for (int64_t t = p; t > j; --t) // P = H_p ... H_{j+1}
              P = matmul(P, householder(w, beta, b, hk, t, D), D);
          else
            for (int64_t t = j + 1; t <= p; ++t)
              P = matmul(P, householder(w, beta, b, hk, t, D), D);
          double qpk = 0;
          for (int64_t x = 0; x < D; ++x)
            for (int64_t y = 0; y < D; ++y)
              qpk += q.at(b, h, i, x) * P[x * D + y] * k.at(b, hk, j, y);
          double gate = 0;
          if (g)
            for (int64_t u = j + 1; u <= p; ++u)
              gate += g->at(b, h, u);
          out.at(b, h, i, j) = scale * qpk + (gateScaled ? scale : 1.0) * gate;
        }
      }
    }
  return out;
}

/// The recurrent decode form (path_fox.md §1.4): a transformed key cache that
/// every new token left-multiplies by its H_t before being appended.
Tensor recurrentPathScores(const Tensor &q, const Tensor &k, const Tensor &w,
                           const Tensor &beta, double scale) {
  const int64_t B = q.shape[0], Hq = q.shape[1], T = q.shape[2], D = q.shape[3],
                Hk = k.shape[1], S = k.shape[2];
  Tensor out = Tensor::full({B, Hq, T, S}, -kInf);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      std::vector<std::vector<double>> cache;
      for (int64_t t = 0; t < S; ++t) {
        for (auto &kj : cache) {
          double wk = 0;
          for (int64_t x = 0; x < D; ++x)
            wk += w.at(b, hk, t, x) * kj[x];
          for (int64_t x = 0; x < D; ++x)
            kj[x] -= beta.at(b, hk, t) * wk * w.at(b, hk, t, x);
        }
        std::vector<double> kt(D);
        for (int64_t x = 0; x < D; ++x)
          kt[x] = k.at(b, hk, t, x);
        cache.push_back(kt);
        const int64_t i = t - (S - T);
        if (i < 0)
          continue;
        for (int64_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < D; ++x)
            dot += q.at(b, h, i, x) * cache[j][x];
          out.at(b, h, i, j) = scale * dot;
        }
      }
    }
  return out;
}

/// Unit-norm rows (eps = 0).
Tensor unitRows(const Tensor &x) { return l2norm(x, 0.0); }

/// Repeats every KV head `times` times along axis 1.
Tensor repeatHeads(const Tensor &x, int64_t times) {
  std::vector<int64_t> shape = x.shape;
  const int64_t H = shape[1];
  shape[1] = H * times;
  Tensor y = Tensor::zeros(shape);
  const int64_t inner = x.numel() / (shape[0] * H);
  for (int64_t b = 0; b < shape[0]; ++b)
    for (int64_t h = 0; h < shape[1]; ++h)
      for (int64_t n = 0; n < inner; ++n)
        y.data[(b * shape[1] + h) * inner + n] =
            x.data[(b * H + h / times) * inner + n];
  return y;
}

/// Identity MTA key-query kernel: theta[h, cq-1, (ck-1)/2] = 1.
Tensor identityKernel(int64_t H, int64_t cq, int64_t ck) {
  Tensor t = Tensor::zeros({H, cq, ck});
  for (int64_t h = 0; h < H; ++h)
    t.at(h, cq - 1, (ck - 1) / 2) = 1.0;
  return t;
}

/// Identity head mix W[H, ch]: W[h, m] = (m == h % ch).
Tensor identityMix(int64_t H, int64_t ch) {
  Tensor t = Tensor::zeros({H, ch});
  for (int64_t h = 0; h < H; ++h)
    t.at(h, h % ch) = 1.0;
  return t;
}

/// Rows [first, first+count) of axis 2 of a rank-4 tensor.
Tensor sliceAxis2(const Tensor &x, int64_t first, int64_t count) {
  Tensor y = Tensor::zeros({x.shape[0], x.shape[1], count, x.shape[3]});
  for (int64_t a = 0; a < x.shape[0]; ++a)
    for (int64_t b = 0; b < x.shape[1]; ++b)
      for (int64_t c = 0; c < count; ++c)
        for (int64_t d = 0; d < x.shape[3]; ++d)
          y.at(a, b, c, d) = x.at(a, b, first + c, d);
  return y;
}

/// Inputs for one attention problem.
struct Problem {
  int64_t B, Hq, Hk, T, S, D, Dv;
  Tensor q, k, v, w, beta, g;
  Problem(int64_t B, int64_t Hq, int64_t Hk, int64_t T, int64_t S, int64_t D,
          int64_t Dv, uint64_t seed)
      : B(B), Hq(Hq), Hk(Hk), T(T), S(S), D(D), Dv(Dv),
        q(randn({B, Hq, T, D}, seed + 1)), k(randn({B, Hk, S, D}, seed + 2)),
        v(randn({B, Hk, S, Dv}, seed + 3)),
        w(unitRows(randn({B, Hk, S, D}, seed + 4))),
        beta(randUniform({B, Hk, S}, seed + 5, 1.5, 2.0)),
        g(randUniform({B, Hq, S}, seed + 6, -0.5, -0.01)) {}
};

bool anyDifferent(const Tensor &a, const Tensor &b) { return a.data != b.data; }

} // namespace

//===----------------------------------------------------------------------===//
// Tensor / helpers
//===----------------------------------------------------------------------===//

TEST(OracleTensor, AccessorsAreRowMajor) {
  Tensor t = Tensor::zeros({2, 3, 4, 5});
  EXPECT_EQ(t.numel(), 120);
  t.at(1, 2, 3, 4) = 7;
  EXPECT_EQ(t.data.back(), 7);
  t.at(0, 1, 0, 2) = 5;
  EXPECT_EQ(t.data[1 * 20 + 2], 5);
  Tensor m = Tensor::zeros({3, 4});
  m.at(2, 1) = 9;
  EXPECT_EQ(m.data[9], 9);
  const Tensor &cm = m;
  EXPECT_EQ(cm.at(2, 1), 9);
  EXPECT_EQ(Tensor::zeros({}).numel(), 1);
}

TEST(OracleRandom, ReproducibleAndDistributed) {
  Tensor a = randn({100001}, 42), b = randn({100001}, 42),
         c = randn({100001}, 43);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  double mean = 0, var = 0;
  for (double x : a.data)
    mean += x;
  mean /= a.numel();
  for (double x : a.data)
    var += (x - mean) * (x - mean);
  var /= a.numel();
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.02);
  Tensor s = randn({50000}, 7, 0.5);
  double ss = 0;
  for (double x : s.data)
    ss += x * x;
  EXPECT_NEAR(std::sqrt(ss / s.numel()), 0.5, 0.01);

  Tensor u = randUniform({100000}, 3, 1.5, 2.0);
  double umin = 10, umax = -10, umean = 0;
  for (double x : u.data) {
    umin = std::fmin(umin, x);
    umax = std::fmax(umax, x);
    umean += x;
  }
  EXPECT_GE(umin, 1.5);
  EXPECT_LT(umax, 2.0);
  EXPECT_NEAR(umean / u.numel(), 1.75, 0.005);
}

// One wrong row among many: the RMS over the whole tensor stays small, the
// worst row's error does not.
TEST(OracleCompare, WorstRowFindsOneWrongRow) {
  const int64_t rows = 4096, width = 64;
  Tensor ref = randn({rows, width}, 7);
  Tensor got = ref;
  for (int64_t c = 0; c < width; ++c)
    got.data[1234 * width + c] *= 1.1;
  EXPECT_LT(relRmsError(got, ref), 5e-3);
  int64_t row = -1;
  EXPECT_NEAR(worstRowRelError(got, ref, &row), 0.1, 1e-12);
  EXPECT_EQ(row, 1234);
  EXPECT_EQ(worstRowRelError(ref, ref), 0.0);
  got.data[5] = NAN;
  EXPECT_EQ(worstRowRelError(got, ref, &row), kInf);
  EXPECT_EQ(row, 0);
  EXPECT_EQ(worstRowRelError(Tensor::zeros({2, 3}), ref), kInf);
}

TEST(OracleCompare, RelErrorSemantics) {
  Tensor ref({3}, {1.0, -4.0, 2.0});
  EXPECT_EQ(relError({1.0, -4.0, 2.0}, ref), 0.0);
  EXPECT_DOUBLE_EQ(relError({1.0, -4.0, 3.0}, ref), 0.25);
  EXPECT_DOUBLE_EQ(relRmsError({1.0, -4.0, 3.0}, ref), 1.0 / std::sqrt(21.0));
  EXPECT_EQ(relError({1.0, -4.0}, ref), kInf);
  EXPECT_EQ(relError({1.0, NAN, 2.0}, ref), kInf);
  EXPECT_EQ(relRmsError({1.0, -kInf, 2.0}, ref), kInf);

  Tensor masked({3}, {1.0, -kInf, 2.0});
  EXPECT_EQ(relError({1.0, -kInf, 2.0}, masked), 0.0);
  EXPECT_EQ(relRmsError({1.0, -kInf, 2.0}, masked), 0.0);
  EXPECT_EQ(relError({1.0, 0.0, 2.0}, masked), kInf);
  EXPECT_EQ(relError({1.0, kInf, 2.0}, masked), kInf);
  Tensor nanRef({1}, {NAN});
  EXPECT_EQ(relError({NAN}, nanRef), kInf);
  Tensor zero({2}, {0.0, 0.0});
  EXPECT_EQ(relError({0.0, 0.0}, zero), 0.0);
  EXPECT_GT(relError({1e-20, 0.0}, zero), 1e9);
  EXPECT_EQ(relError(Tensor({3}, {1.0, -4.0, 2.0}), ref), 0.0);
  EXPECT_EQ(relError(Tensor({1, 3}, {1.0, -4.0, 2.0}), ref), kInf);
}

//===----------------------------------------------------------------------===//
// (a) PaTH against independent formulations
//===----------------------------------------------------------------------===//

TEST(OraclePath, MatchesExplicitHouseholderProducts) {
  for (int64_t T : {13, 5}) { // T == S and T < S
    Problem pr(2, 4, 2, T, 13, 6, 5, 100 + T);
    const double s = 1.0 / std::sqrt(6.0);
    Tensor got = scores(pr.q, pr.k, s, &pr.w, &pr.beta);
    Tensor want =
        explicitPathScores(pr.q, pr.k, pr.w, pr.beta, nullptr, s, false);
    EXPECT_LT(relError(got, want), 1e-12) << "T=" << T;

    // PaTH-FoX with the gate scaled (fla's PaTH convention) and unscaled.
    for (bool scaled : {true, false}) {
      Tensor gotG =
          scores(pr.q, pr.k, s, &pr.w, &pr.beta, &pr.g, scaled, Mask::Causal);
      Tensor wantG =
          explicitPathScores(pr.q, pr.k, pr.w, pr.beta, &pr.g, s, scaled);
      EXPECT_LT(relError(gotG, wantG), 1e-12)
          << "T=" << T << " scaled=" << scaled;
    }

    // Negative controls: the wrong product order and P = I are both far off.
    Tensor rev =
        explicitPathScores(pr.q, pr.k, pr.w, pr.beta, nullptr, s, false, true);
    EXPECT_GT(relError(got, rev), 1e-2);
    EXPECT_GT(relError(got, scores(pr.q, pr.k, s)), 1e-2);
  }
}

TEST(OraclePath, MatchesRecurrentKeyCacheForm) {
  for (int64_t T : {11, 4}) {
    Problem pr(1, 2, 1, T, 11, 8, 8, 200 + T);
    Tensor got = scores(pr.q, pr.k, 0.3, &pr.w, &pr.beta);
    Tensor want = recurrentPathScores(pr.q, pr.k, pr.w, pr.beta, 0.3);
    EXPECT_LT(relError(got, want), 1e-12) << "T=" << T;
  }
}

TEST(OraclePath, HouseholderWithBetaTwoPreservesNorms) {
  // With beta = 2 and unit w every H_t is an orthogonal reflection, so
  // |P k| = |k|: scores of q with itself-transported keys are bounded by
  // |q||k|. Cheap sanity check on the magnitude of transported vectors.
  Problem pr(1, 1, 1, 9, 9, 5, 5, 300);
  Tensor beta2 = Tensor::full({1, 1, 9}, 2.0);
  Tensor sc = scores(pr.q, pr.k, 1.0, &pr.w, &beta2);
  for (int64_t i = 0; i < 9; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double qn = 0, kn = 0;
      for (int64_t x = 0; x < 5; ++x) {
        qn += pr.q.at(0, 0, i, x) * pr.q.at(0, 0, i, x);
        kn += pr.k.at(0, 0, j, x) * pr.k.at(0, 0, j, x);
      }
      EXPECT_LE(std::fabs(sc.at(0, 0, i, j)), std::sqrt(qn * kn) + 1e-12);
    }
}

//===----------------------------------------------------------------------===//
// (b) degenerate PaTH / FoX reduce to plain attention
//===----------------------------------------------------------------------===//

TEST(OracleReductions, BetaZeroPathIsPlain) {
  Problem pr(2, 4, 2, 7, 10, 8, 8, 400);
  Tensor beta0 = Tensor::zeros({2, 2, 10});
  Tensor plain = scores(pr.q, pr.k, 0.35);
  EXPECT_EQ(scores(pr.q, pr.k, 0.35, &pr.w, &beta0).data, plain.data);
  EXPECT_NE(scores(pr.q, pr.k, 0.35, &pr.w, &pr.beta).data, plain.data);
}

TEST(OracleReductions, ZeroGateFoxIsPlain) {
  Problem pr(2, 4, 2, 7, 10, 8, 8, 500);
  Tensor g0 = Tensor::zeros({2, 4, 10});
  Tensor plain = scores(pr.q, pr.k, 0.35);
  for (bool scaled : {false, true})
    EXPECT_EQ(scores(pr.q, pr.k, 0.35, nullptr, nullptr, &g0, scaled).data,
              plain.data);
  EXPECT_NE(scores(pr.q, pr.k, 0.35, nullptr, nullptr, &pr.g).data, plain.data);
}

TEST(OracleReductions, GateScaledDiffersByFactorS) {
  Problem pr(1, 2, 2, 6, 9, 4, 4, 600);
  const double s = 0.125;
  for (Mask mask : {Mask::Causal, Mask::None}) {
    Tensor plain =
        scores(pr.q, pr.k, s, nullptr, nullptr, nullptr, false, mask);
    Tensor unscaled =
        scores(pr.q, pr.k, s, nullptr, nullptr, &pr.g, false, mask);
    Tensor scaled = scores(pr.q, pr.k, s, nullptr, nullptr, &pr.g, true, mask);
    int64_t checked = 0;
    for (size_t n = 0; n < plain.data.size(); ++n) {
      if (plain.data[n] == -kInf) {
        EXPECT_EQ(scaled.data[n], -kInf);
        EXPECT_EQ(unscaled.data[n], -kInf);
        continue;
      }
      EXPECT_NEAR(scaled.data[n] - plain.data[n],
                  s * (unscaled.data[n] - plain.data[n]), 1e-12);
      ++checked;
    }
    EXPECT_GT(checked, 0);
    // The unscaled gate term is exactly the direct sum of g over (j, p].
    for (int64_t i = 0; i < 6; ++i) {
      const int64_t p = i + 3;
      for (int64_t j = 0; j < 9; ++j) {
        double direct = 0;
        for (int64_t u = j + 1; u <= p; ++u)
          direct += pr.g.at(0, 1, u);
        for (int64_t u = p + 1; u <= j; ++u) // keys after p (Mask::None)
          direct -= pr.g.at(0, 1, u);
        if (j > p && mask == Mask::Causal)
          continue;
        EXPECT_NEAR(unscaled.at(0, 1, i, j) - plain.at(0, 1, i, j), direct,
                    1e-12);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

TEST(OracleMask, CausalSlidingAndNone) {
  Problem pr(1, 2, 1, 5, 8, 4, 3, 700);
  const double s = 0.5;
  Tensor causal = scores(pr.q, pr.k, s);
  Tensor none =
      scores(pr.q, pr.k, s, nullptr, nullptr, nullptr, false, Mask::None);
  Tensor win3 = scores(pr.q, pr.k, s, nullptr, nullptr, nullptr, false,
                       Mask::SlidingWindow, 3);
  for (int64_t i = 0; i < 5; ++i) {
    const int64_t p = i + 3;
    for (int64_t j = 0; j < 8; ++j) {
      double dot = 0;
      for (int64_t x = 0; x < 4; ++x)
        dot += pr.q.at(0, 1, i, x) * pr.k.at(0, 0, j, x);
      EXPECT_NEAR(none.at(0, 1, i, j), s * dot, 1e-14);
      if (j <= p)
        EXPECT_EQ(causal.at(0, 1, i, j), none.at(0, 1, i, j));
      else
        EXPECT_EQ(causal.at(0, 1, i, j), -kInf);
      if (p - 3 < j && j <= p)
        EXPECT_EQ(win3.at(0, 1, i, j), none.at(0, 1, i, j));
      else
        EXPECT_EQ(win3.at(0, 1, i, j), -kInf);
    }
  }
  // A window covering everything is causal; PaTH with Mask::None uses P = I
  // for keys after the query position.
  EXPECT_EQ(scores(pr.q, pr.k, s, nullptr, nullptr, nullptr, false,
                   Mask::SlidingWindow, 8)
                .data,
            causal.data);
  Tensor pathNone =
      scores(pr.q, pr.k, s, &pr.w, &pr.beta, nullptr, false, Mask::None);
  Tensor pathCausal = scores(pr.q, pr.k, s, &pr.w, &pr.beta);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(pathNone.at(0, 1, i, j),
                j <= i + 3 ? pathCausal.at(0, 1, i, j) : none.at(0, 1, i, j));
}

TEST(OracleMask, WindowOfOneReturnsOwnValue) {
  Problem pr(1, 2, 2, 6, 6, 4, 3, 800);
  AttentionConfig cfg;
  cfg.scale = 0.5;
  cfg.mask = Mask::SlidingWindow;
  cfg.window = 1;
  Tensor o = attention(cfg, pr.q, pr.k, pr.v, &pr.w, &pr.beta, &pr.g);
  EXPECT_EQ(o.data, pr.v.data);
  cfg.window = 0; // nothing visible: all rows fully masked -> zeros
  EXPECT_EQ(attention(cfg, pr.q, pr.k, pr.v).data,
            Tensor::zeros({1, 2, 6, 3}).data);
}

//===----------------------------------------------------------------------===//
// (c) identity MTA kernels and head mixes are exactly plain attention
//===----------------------------------------------------------------------===//

TEST(OracleMta, IdentityKernelsAreExactlyPlain) {
  for (int64_t T : {9, 4}) {
    Problem pr(2, 4, 2, T, 9, 8, 6, 900 + T);
    AttentionConfig cfg;
    cfg.scale = 1.0 / std::sqrt(8.0);
    cfg.rope = true;
    cfg.postGroup = 2;
    Tensor gamma = randn({6}, 11), gateW = randn({6}, 12),
           gateB = randn({1}, 13);
    Tensor thetaPre = identityKernel(4, 3, 5),
           thetaPost = identityKernel(4, 2, 3);
    Tensor wPre = identityMix(4, 4), wPost = identityMix(4, 2);

    Tensor plain =
        attention(cfg, pr.q, pr.k, pr.v, &pr.w, &pr.beta, &pr.g, nullptr,
                  nullptr, nullptr, nullptr, &gamma, &gateW, &gateB);
    Tensor mta =
        attention(cfg, pr.q, pr.k, pr.v, &pr.w, &pr.beta, &pr.g, &thetaPre,
                  &wPre, &thetaPost, &wPost, &gamma, &gateW, &gateB);
    EXPECT_EQ(mta.data, plain.data) << "T=" << T;

    // Each building block alone is the identity too.
    Tensor sc = scores(pr.q, pr.k, cfg.scale);
    EXPECT_EQ(kqConv(sc, thetaPre, Stage::Pre).data, sc.data);
    EXPECT_EQ(headMix(sc, wPre, Stage::Pre).data, sc.data);
    Tensor pr0 = softmax(sc);
    EXPECT_EQ(kqConv(pr0, thetaPost, Stage::Post).data, pr0.data);
    EXPECT_EQ(headMix(pr0, wPost, Stage::Post).data, pr0.data);

    // Negative control: a slightly perturbed kernel changes the output.
    thetaPre.at(1, 0, 0) = 1e-3;
    Tensor off =
        attention(cfg, pr.q, pr.k, pr.v, &pr.w, &pr.beta, &pr.g, &thetaPre,
                  &wPre, &thetaPost, &wPost, &gamma, &gateW, &gateB);
    EXPECT_TRUE(anyDifferent(off, plain));
  }
}

//===----------------------------------------------------------------------===//
// (d) causality of the full composition
//===----------------------------------------------------------------------===//

TEST(OracleMta, FullCompositionIsCausal) {
  const int64_t B = 1, Hq = 4, Hk = 2, T = 12, D = 8, Dv = 6;
  Problem pr(B, Hq, Hk, T, T, D, Dv, 1000);
  AttentionConfig cfg;
  cfg.scale = 1.0 / std::sqrt(double(D));
  cfg.rope = true;
  cfg.ropeDim = 6;
  cfg.ropeStyle = RopeStyle::Interleaved;
  cfg.gateScaled = true;
  cfg.preGroup = 0;
  cfg.postGroup = 2;
  Tensor thetaPre = randn({Hq, 3, 5}, 1001, 0.5);
  Tensor thetaPost = randn({Hq, 2, 3}, 1002, 0.5);
  Tensor wPre = randn({Hq, Hq}, 1003, 0.5), wPost = randn({Hq, 2}, 1004, 0.5);
  Tensor gamma = randn({Dv}, 1005), gateW = randn({Dv}, 1006),
         gateB = randn({1}, 1007);

  auto run = [&](const Problem &p) {
    return attention(cfg, p.q, p.k, p.v, &p.w, &p.beta, &p.g, &thetaPre, &wPre,
                     &thetaPost, &wPost, &gamma, &gateW, &gateB);
  };
  const Tensor base = run(pr);

  const int64_t t = 7;
  // Perturb one operand at token t; rows < t must not move by a single bit.
  for (int which = 0; which < 6; ++which) {
    Problem pp = pr;
    switch (which) {
    case 0:
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t x = 0; x < D; ++x)
          pp.q.at(0, h, t, x) += 1.0;
      break;
    case 1:
      for (int64_t h = 0; h < Hk; ++h)
        for (int64_t x = 0; x < D; ++x)
          pp.k.at(0, h, t, x) -= 1.0;
      break;
    case 2:
      for (int64_t h = 0; h < Hk; ++h)
        for (int64_t x = 0; x < Dv; ++x)
          pp.v.at(0, h, t, x) += 3.0;
      break;
    case 3:
      for (int64_t h = 0; h < Hk; ++h)
        for (int64_t x = 0; x < D; ++x)
          pp.w.at(0, h, t, x) = (x == 0);
      break;
    case 4:
      for (int64_t h = 0; h < Hk; ++h)
        pp.beta.at(0, h, t) = 0.25;
      break;
    case 5:
      for (int64_t h = 0; h < Hq; ++h)
        pp.g.at(0, h, t) = -3.0;
      break;
    }
    const Tensor out = run(pp);
    bool laterChanged = false;
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t x = 0; x < Dv; ++x) {
          if (i < t)
            EXPECT_EQ(out.at(0, h, i, x), base.at(0, h, i, x))
                << "operand " << which << " leaked into row " << i;
          else if (out.at(0, h, i, x) != base.at(0, h, i, x))
            laterChanged = true;
        }
    EXPECT_TRUE(laterChanged) << "operand " << which << " had no effect";
  }
}

TEST(OracleMta, SuffixQueriesMatchFullPrefill) {
  // With single-row query kernels (cq = 1) the last T' query rows of a T = S
  // run equal a run with only those T' queries (positions S - T' ..).
  const int64_t S = 10, Tp = 3;
  Problem pr(2, 4, 2, S, S, 8, 5, 1100);
  AttentionConfig cfg;
  cfg.scale = 0.3;
  cfg.rope = true;
  cfg.ropeOffset = 5;
  cfg.postGroup = 2;
  Tensor thetaPre = randn({4, 1, 3}, 1101, 0.5),
         thetaPost = randn({4, 1, 5}, 1102, 0.5);
  Tensor wPre = randn({4, 4}, 1103, 0.5), wPost = randn({4, 2}, 1104, 0.5);
  Tensor gamma = randn({5}, 1105);
  Tensor full = attention(cfg, pr.q, pr.k, pr.v, &pr.w, &pr.beta, &pr.g,
                          &thetaPre, &wPre, &thetaPost, &wPost, &gamma);
  Tensor qs = sliceAxis2(pr.q, S - Tp, Tp);
  Tensor part = attention(cfg, qs, pr.k, pr.v, &pr.w, &pr.beta, &pr.g,
                          &thetaPre, &wPre, &thetaPost, &wPost, &gamma);
  EXPECT_LT(relError(part, sliceAxis2(full, S - Tp, Tp)), 1e-13);
}

//===----------------------------------------------------------------------===//
// (e) GQA is repeated KV heads
//===----------------------------------------------------------------------===//

TEST(OracleGqa, EqualsRepeatedKvHeads) {
  Problem pr(2, 6, 2, 7, 9, 4, 5, 1200);
  AttentionConfig cfg;
  cfg.scale = 0.5;
  cfg.rope = true;
  Tensor k3 = repeatHeads(pr.k, 3), v3 = repeatHeads(pr.v, 3),
         w3 = repeatHeads(pr.w, 3);
  Tensor beta3 = Tensor::zeros({2, 6, 9});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 6; ++h)
      for (int64_t j = 0; j < 9; ++j)
        beta3.at(b, h, j) = pr.beta.at(b, h / 3, j);
  Tensor gqa = attention(cfg, pr.q, pr.k, pr.v, &pr.w, &pr.beta, &pr.g);
  Tensor mha = attention(cfg, pr.q, k3, v3, &w3, &beta3, &pr.g);
  EXPECT_EQ(gqa.data, mha.data);
  // Negative control: a different head assignment (h % Hk) changes things.
  Tensor kAlt = Tensor::zeros({2, 6, 9, 4});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 6; ++h)
      for (int64_t j = 0; j < 9; ++j)
        for (int64_t x = 0; x < 4; ++x)
          kAlt.at(b, h, j, x) = pr.k.at(b, h % 2, j, x);
  EXPECT_NE(attention(cfg, pr.q, kAlt, v3, &w3, &beta3, &pr.g).data, gqa.data);
}

//===----------------------------------------------------------------------===//
// (f) hand-computed tiny cases
//===----------------------------------------------------------------------===//

TEST(OracleHand, KqConvTinyCase) {
  // x: 3x3 with junk above the diagonal (Mask_0 must drop it by position).
  Tensor x({1, 1, 3, 3}, {1, 777, -kInf, //
                          2, 3, 999,     //
                          4, 5, 6});
  Tensor theta({1, 2, 3}, {0.1, 0.2, 0.3, // previous query row
                           1, 10, 100});  // current query row
  const double want[3][3] = {
      {10, -kInf, -kInf}, {320.2, 32.1, -kInf}, {541.3, 654.8, 65.3}};
  Tensor pre = kqConv(x, theta, Stage::Pre);
  Tensor post = kqConv(x, theta, Stage::Post);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      if (want[i][j] == -kInf) {
        EXPECT_EQ(pre.at(0, 0, i, j), -kInf);
        EXPECT_EQ(post.at(0, 0, i, j), 0.0);
      } else {
        EXPECT_NEAR(pre.at(0, 0, i, j), want[i][j], 1e-12) << i << "," << j;
        EXPECT_NEAR(post.at(0, 0, i, j), want[i][j], 1e-12) << i << "," << j;
      }
    }

  // T < S: one query at position 2 sees keys 0..2 and the top pad only.
  Tensor x1({1, 1, 1, 3}, {1, 2, 3});
  Tensor c1 = kqConv(x1, theta, Stage::Pre);
  EXPECT_NEAR(c1.at(0, 0, 0, 0), 210, 1e-12);
  EXPECT_NEAR(c1.at(0, 0, 0, 1), 321, 1e-12);
  EXPECT_NEAR(c1.at(0, 0, 0, 2), 32, 1e-12);
}

TEST(OracleHand, HeadMixTinyCase) {
  // H = 4 heads in groups of 2, T = S = 2; x[h] = (h+1) * [[1, -inf], [2, 3]].
  Tensor x = Tensor::zeros({1, 4, 2, 2});
  for (int64_t h = 0; h < 4; ++h) {
    x.at(0, h, 0, 0) = h + 1;
    x.at(0, h, 0, 1) = -kInf;
    x.at(0, h, 1, 0) = 2 * (h + 1);
    x.at(0, h, 1, 1) = 3 * (h + 1);
  }
  Tensor W({4, 2}, {1, 2, //
                    3, 4, //
                    5, 6, //
                    7, 8});
  Tensor pre = headMix(x, W, Stage::Pre);
  Tensor post = headMix(x, W, Stage::Post);
  // Head 0 = 1*x0 + 2*x1 = 5*base; head 1 = 3*1 + 4*2 = 11*base;
  // head 2 = 5*3 + 6*4 = 39*base; head 3 = 7*3 + 8*4 = 53*base.
  const double f[4] = {5, 11, 39, 53};
  for (int64_t h = 0; h < 4; ++h) {
    EXPECT_EQ(pre.at(0, h, 0, 0), f[h]);
    EXPECT_EQ(pre.at(0, h, 0, 1), -kInf);
    EXPECT_EQ(post.at(0, h, 0, 1), 0.0);
    EXPECT_EQ(pre.at(0, h, 1, 0), 2 * f[h]);
    EXPECT_EQ(post.at(0, h, 1, 1), 3 * f[h]);
  }
}

TEST(OracleHand, RopeKnownAngles) {
  const double c100 = 0.8623188722876839, s100 = -0.5063656411097588;
  const double c1 = 0.5403023058681398, s1 = 0.8414709848078965;
  // D = 6, R = 4, theta = 1e4, position 100: pair 0 turns by 100 rad, pair 1
  // by 100 * 1e4^(-1/2) = 1 rad; dims 4, 5 are copied.
  Tensor x({1, 1, 1, 6}, {1, 2, 3, 4, 5, 6});
  std::vector<int64_t> pos = {100};
  Tensor half = rope(x, 10000, 4, RopeStyle::Half, 0, &pos);
  const double wantHalf[6] = {1 * c100 - 3 * s100,
                              2 * c1 - 4 * s1,
                              1 * s100 + 3 * c100,
                              2 * s1 + 4 * c1,
                              5,
                              6};
  Tensor inter = rope(x, 10000, 4, RopeStyle::Interleaved, 100);
  const double wantInter[6] = {1 * c100 - 2 * s100,
                               1 * s100 + 2 * c100,
                               3 * c1 - 4 * s1,
                               3 * s1 + 4 * c1,
                               5,
                               6};
  for (int e = 0; e < 6; ++e) {
    EXPECT_NEAR(half.at(0, 0, 0, e), wantHalf[e], 1e-12) << e;
    EXPECT_NEAR(inter.at(0, 0, 0, e), wantInter[e], 1e-12) << e;
  }
  // Position 0 is the identity; offset and explicit positions agree.
  Tensor two = randn({1, 2, 3, 4}, 5);
  EXPECT_EQ(rope(two, 500, 4, RopeStyle::Half, 0).data[0], two.data[0]);
  std::vector<int64_t> pos3 = {7, 8, 9};
  EXPECT_EQ(rope(two, 500, 4, RopeStyle::Half, 7).data,
            rope(two, 500, 4, RopeStyle::Half, 123, &pos3).data);
}

TEST(OracleHand, RopeScoresDependOnRelativePosition) {
  Tensor q = randn({1, 1, 1, 8}, 21), k = randn({1, 1, 1, 8}, 22);
  for (RopeStyle style : {RopeStyle::Half, RopeStyle::Interleaved}) {
    auto dotAt = [&](int64_t m, int64_t n) {
      Tensor qr = rope(q, 10000, 8, style, m), kr = rope(k, 10000, 8, style, n);
      double d = 0;
      for (int64_t e = 0; e < 8; ++e)
        d += qr.data[e] * kr.data[e];
      return d;
    };
    EXPECT_NEAR(dotAt(5, 2), dotAt(105, 102), 1e-10);
    EXPECT_GT(std::fabs(dotAt(5, 2) - dotAt(5, 3)), 1e-6);
  }
}

TEST(OracleHand, ShortConvHeadNormL2) {
  Tensor x({1, 1, 4, 1}, {1, 2, 3, 4});
  Tensor kern({1, 1, 3}, {0.5, -1, 2});
  Tensor y = shortConv(x, kern, false);
  EXPECT_EQ(y.data, (std::vector<double>{2, 3, 4.5, 6}));
  Tensor ys = shortConv(x, kern, true);
  for (int t = 0; t < 4; ++t)
    EXPECT_NEAR(ys.data[t], y.data[t] / (1 + std::exp(-y.data[t])), 1e-15);

  Tensor o({1, 1, 1, 2}, {3, 4});
  Tensor gamma({2}, {1, 2});
  const double r = std::sqrt(12.5);
  Tensor n = headNorm(o, gamma, 0.0);
  EXPECT_NEAR(n.data[0], 3 / r, 1e-15);
  EXPECT_NEAR(n.data[1], 8 / r, 1e-15);
  Tensor gw({2}, {1, 0}), gb({1}, {-0.5});
  Tensor ng = headNorm(o, gamma, 0.0, &gw, &gb);
  const double gate = 1 / (1 + std::exp(-(3 / r - 0.5)));
  EXPECT_NEAR(ng.data[0], 3 / r * gate, 1e-15);
  EXPECT_NEAR(ng.data[1], 8 / r * gate, 1e-15);
  Tensor ne = headNorm(o, gamma, 1.0);
  EXPECT_NEAR(ne.data[0], 3 / std::sqrt(13.5), 1e-15);

  Tensor l = l2norm(Tensor({2, 2}, {3, 4, 0, 0}), 0.0);
  EXPECT_NEAR(l.data[0], 0.6, 1e-15);
  EXPECT_NEAR(l.data[1], 0.8, 1e-15);
  Tensor le = l2norm(Tensor({2, 2}, {3, 4, 0, 0}), 1e-6);
  EXPECT_EQ(le.data[2], 0.0);
  EXPECT_NEAR(le.data[0], 3 / std::sqrt(25 + 1e-6), 1e-15);
}

//===----------------------------------------------------------------------===//
// (g) softmax edge cases
//===----------------------------------------------------------------------===//

TEST(OracleSoftmax, MaskedRowsAndKnownValues) {
  Tensor x({3, 3}, {-kInf, -kInf, -kInf,     //
                    0, std::log(3.0), -kInf, //
                    1000, 1000, 1000});
  Tensor p = softmax(x);
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(p.at(0, j), 0.0);
  EXPECT_NEAR(p.at(1, 0), 0.25, 1e-15);
  EXPECT_NEAR(p.at(1, 1), 0.75, 1e-15);
  EXPECT_EQ(p.at(1, 2), 0.0);
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(p.at(2, j), 1.0 / 3, 1e-15);
  for (double v : p.data)
    EXPECT_FALSE(std::isnan(v));

  // A NaN makes its row NaN, but a masked entry stays exactly 0: the
  // masked key takes no part in the row (docs/input-limits.md).
  Tensor withNan = softmax(Tensor({1, 3}, {std::nan(""), 1.0, -kInf}));
  EXPECT_TRUE(std::isnan(withNan.at(0, 0)));
  EXPECT_TRUE(std::isnan(withNan.at(0, 1)));
  EXPECT_EQ(withNan.at(0, 2), 0.0);

  // Through the whole pipeline a fully masked query row yields a zero output.
  Problem pr(1, 1, 1, 3, 3, 2, 2, 1300);
  Tensor sc = scores(pr.q, pr.k, 1.0, nullptr, nullptr, nullptr, false,
                     Mask::SlidingWindow, 0);
  EXPECT_EQ(weightedSum(softmax(sc), pr.v).data,
            Tensor::zeros({1, 1, 3, 2}).data);
}

TEST(OracleAttention, PlainMatchesDirectFormula) {
  // Independent single-loop formulation of causal softmax attention.
  Problem pr(1, 2, 1, 4, 6, 3, 2, 1400);
  AttentionConfig cfg;
  cfg.scale = 0.7;
  Tensor o = attention(cfg, pr.q, pr.k, pr.v);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t p = i + 2;
      std::vector<double> e(p + 1);
      double z = 0;
      for (int64_t j = 0; j <= p; ++j) {
        double d = 0;
        for (int64_t x = 0; x < 3; ++x)
          d += pr.q.at(0, h, i, x) * pr.k.at(0, 0, j, x);
        e[j] = std::exp(0.7 * d);
        z += e[j];
      }
      for (int64_t x = 0; x < 2; ++x) {
        double acc = 0;
        for (int64_t j = 0; j <= p; ++j)
          acc += e[j] / z * pr.v.at(0, 0, j, x);
        EXPECT_NEAR(o.at(0, h, i, x), acc, 1e-13);
      }
    }
}
