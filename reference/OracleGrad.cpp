//===- OracleGrad.cpp - fp64 gradients of the oracle's functions ----------===//
//
// See Oracle.h, "Gradients". Each function is the adjoint of its forward in
// Oracle.cpp, written loop for loop against it: a forward statement
// y += a * x becomes dx += a * dy (and da += x * dy), visited in reverse.
// Nothing here calls the compiler or differences the forward numerically;
// OracleGradTest.cpp checks every result against central differences.
//
//===----------------------------------------------------------------------===//

#include "OracleDetail.h"

#include <cmath>
#include <vector>

namespace attn {
namespace ref {

using namespace detail;

namespace {

/// Aborts unless dy has the forward's output shape.
void checkDy(const char *func, const Tensor &dy,
             const std::vector<int64_t> &shape) {
  checkShape(func, dy, shape, "dy");
}

/// A zero gradient shaped like `t`, or an empty Tensor when `t` is absent.
Tensor zerosLike(const Tensor *t) {
  return t ? Tensor::zeros(t->shape) : Tensor();
}

} // namespace

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

Tensor ropeGrad(const Tensor &dy, double theta, int64_t rotaryDim,
                RopeStyle style, int64_t offset,
                const std::vector<int64_t> *positions) {
  checkRope(__func__, dy, rotaryDim, positions);
  // A rotation's transpose is the rotation by the opposite angle.
  return rotatePairs(dy, theta, rotaryDim, style, offset, positions, -1.0);
}

//===----------------------------------------------------------------------===//
// Scores
//===----------------------------------------------------------------------===//

namespace {

/// One thread's share of the gradients of one (batch, query head): keys,
/// PaTH's w and beta are shared by every query row, and G by the head.
struct KeyAccumulator {
  std::vector<double> dk, dw, dbeta, dG;
  KeyAccumulator(int64_t S, int64_t D)
      : dk(S * D, 0.0), dw(S * D, 0.0), dbeta(S, 0.0), dG(S, 0.0) {}
};

/// The adjoint of scores() for query row i of (b, h). The forward walks
/// r^(p) = q_i, scores key j with r^(j), then r^(j-1) = H_j r^(j) (H_j
/// symmetric); so the backward replays the walk to keep every r^(j), then
/// runs j = 0..p carrying a = dL/dr: first through H_j's update (which the
/// forward did after scoring j), then adding key j's score.
void scoresRowGrad(const Tensor &dLogits, const Tensor &q, const Tensor &k,
                   double scale, const Tensor *w, const Tensor *beta,
                   const Tensor *g, double gamma, Mask mask, int64_t window,
                   const std::vector<int64_t> &seq, int64_t b, int64_t h,
                   int64_t hk, int64_t i, Tensor &dq, KeyAccumulator &acc) {
  const int64_t T = q.shape[2], D = q.shape[3], S = k.shape[2];
  const int64_t p = queryPos(i, T, S);
  std::vector<double> qi(D);
  for (int64_t e = 0; e < D; ++e)
    qi[e] = q.at(b, h, i, e);

  // rs[j * D + e] = r^(j)_e for j in [0, p].
  const int64_t steps = std::max<int64_t>(p + 1, 0);
  std::vector<double> rs(steps * D);
  std::vector<double> r = qi;
  for (int64_t j = p; j >= 0; --j) {
    std::copy(r.begin(), r.end(), rs.begin() + j * D);
    if (w) {
      double wr = 0;
      for (int64_t e = 0; e < D; ++e)
        wr += w->at(b, hk, j, e) * r[e];
      const double c = beta->at(b, hk, j) * wr;
      for (int64_t e = 0; e < D; ++e)
        r[e] -= c * w->at(b, hk, j, e);
    }
  }

  // Adds key j's score s * r.k_j + gamma (G[p] - G[j]) to the adjoints.
  auto scoreAdjoint = [&](int64_t j, const double *rj, std::vector<double> &a) {
    if (!visible(mask, window, p, j, seq))
      return;
    const double dl = dLogits.at(b, h, i, j);
    for (int64_t e = 0; e < D; ++e) {
      a[e] += scale * dl * k.at(b, hk, j, e);
      acc.dk[j * D + e] += scale * dl * rj[e];
    }
    if (g) {
      acc.dG[p] += gamma * dl;
      acc.dG[j] -= gamma * dl;
    }
  };

  std::vector<double> a(D, 0.0); // dL/dr^(j-1), then dL/dr^(j)
  for (int64_t j = 0; j <= p; ++j) {
    const double *rj = &rs[j * D];
    if (w) {
      // r^(j-1) = r^(j) - beta_j (w_j . r^(j)) w_j.
      const double bj = beta->at(b, hk, j);
      double wr = 0, wa = 0;
      for (int64_t e = 0; e < D; ++e) {
        wr += w->at(b, hk, j, e) * rj[e];
        wa += w->at(b, hk, j, e) * a[e];
      }
      acc.dbeta[j] -= wr * wa;
      for (int64_t e = 0; e < D; ++e)
        acc.dw[j * D + e] -= bj * (wa * rj[e] + wr * a[e]);
      for (int64_t e = 0; e < D; ++e)
        a[e] -= bj * wa * w->at(b, hk, j, e);
    }
    scoreAdjoint(j, rj, a);
  }
  // Keys after the query (Mask::None): P(p, j) = I, so r = q_i.
  for (int64_t j = std::max<int64_t>(p + 1, 0); j < S; ++j)
    scoreAdjoint(j, qi.data(), a);
  for (int64_t e = 0; e < D; ++e)
    dq.at(b, h, i, e) = a[e];
}

} // namespace

ScoresGrad scoresGrad(const Tensor &dLogits, const Tensor &q, const Tensor &k,
                      double scale, const Tensor *w, const Tensor *beta,
                      const Tensor *g, bool gateScaled, Mask mask,
                      int64_t window, const std::vector<int64_t> *cuSeqlens) {
  checkScores(__func__, q, k, w, beta, g, mask, window, cuSeqlens);
  const int64_t B = q.shape[0], Hq = q.shape[1], T = q.shape[2], D = q.shape[3];
  const int64_t Hk = k.shape[1], S = k.shape[2];
  checkDy(__func__, dLogits, {B, Hq, T, S});
  const int64_t groups = Hq / Hk;
  const double gamma = gateScaled ? scale : 1.0;
  const std::vector<int64_t> seq = sequenceIds(cuSeqlens, S);

  ScoresGrad grad{Tensor::zeros(q.shape), Tensor::zeros(k.shape), zerosLike(w),
                  zerosLike(beta), zerosLike(g)};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / groups;
      std::vector<KeyAccumulator> accs(workerCount(T), KeyAccumulator(S, D));
      parallelForWorkers(T, [&](int64_t worker, int64_t i) {
        scoresRowGrad(dLogits, q, k, scale, w, beta, g, gamma, mask, window,
                      seq, b, h, hk, i, grad.q, accs[worker]);
      });
      for (const KeyAccumulator &acc : accs)
        for (int64_t j = 0; j < S; ++j) {
          for (int64_t e = 0; e < D; ++e) {
            grad.k.at(b, hk, j, e) += acc.dk[j * D + e];
            if (w)
              grad.w.at(b, hk, j, e) += acc.dw[j * D + e];
          }
          if (w)
            grad.beta.at(b, hk, j) += acc.dbeta[j];
        }
      // G = inclusive cumsum of g, so dg is the reverse cumsum of dG.
      if (g) {
        double tail = 0;
        for (int64_t u = S - 1; u >= 0; --u) {
          for (const KeyAccumulator &acc : accs)
            tail += acc.dG[u];
          grad.g.at(b, h, u) = tail;
        }
      }
    }
  return grad;
}

//===----------------------------------------------------------------------===//
// Multi-Token Attention
//===----------------------------------------------------------------------===//

KqConvGrad kqConvGrad(const Tensor &dy, const Tensor &x, const Tensor &theta,
                      Stage stage, const std::vector<int64_t> *cuSeqlens) {
  checkKqConv(__func__, x, theta);
  checkDy(__func__, dy, x.shape);
  const int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2], S = x.shape[3];
  const int64_t cq = theta.shape[1], ck = theta.shape[2];
  const int64_t p = cq - 1, c = (ck - 1) / 2, off = S - T;
  const std::vector<int64_t> starts = rowStarts(__func__, cuSeqlens, T, S);

  KqConvGrad grad{Tensor::zeros(x.shape), Tensor::zeros(theta.shape)};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = starts[i]; j <= std::min(i + off, S - 1); ++j) {
          // out(i, j) = sum theta(a, bb) X0(i - p + a, j - c + bb); X0 is 0
          // (a constant) outside the source, beyond its mask, before the
          // row's sequence and at -inf.
          const double dl = dy.at(b, h, i, j);
          for (int64_t a = 0; a < cq; ++a)
            for (int64_t bb = 0; bb < ck; ++bb) {
              const int64_t i2 = i - p + a, j2 = j - c + bb;
              if (i2 < 0 || i2 >= T || j2 < starts[i] || j2 >= S ||
                  j2 > i2 + off)
                continue;
              const double v = x.at(b, h, i2, j2);
              if (v == -kInf)
                continue;
              grad.theta.at(h, a, bb) += dl * v;
              grad.x.at(b, h, i2, j2) += theta.at(h, a, bb) * dl;
            }
        }
  (void)stage; // the stage only picks the constant beyond the mask
  return grad;
}

HeadMixGrad headMixGrad(const Tensor &dy, const Tensor &x, const Tensor &W,
                        Stage stage, const std::vector<int64_t> *cuSeqlens) {
  checkHeadMix(__func__, x, W);
  checkDy(__func__, dy, x.shape);
  const int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2], S = x.shape[3];
  const int64_t ch = W.shape[1], off = S - T;
  const std::vector<int64_t> starts = rowStarts(__func__, cuSeqlens, T, S);

  HeadMixGrad grad{Tensor::zeros(x.shape), Tensor::zeros(W.shape)};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g0 = (h / ch) * ch;
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = starts[i]; j <= std::min(i + off, S - 1); ++j) {
          // out[h](i, j) = sum_m W(h, m) x0[g0 + m](i, j), x0 = 0 at -inf.
          const double dl = dy.at(b, h, i, j);
          for (int64_t m = 0; m < ch; ++m) {
            const double v = x.at(b, g0 + m, i, j);
            if (v == -kInf)
              continue;
            grad.W.at(h, m) += dl * v;
            grad.x.at(b, g0 + m, i, j) += W.at(h, m) * dl;
          }
        }
    }
  (void)stage; // the stage only picks the constant beyond the mask
  return grad;
}

//===----------------------------------------------------------------------===//
// Softmax, weighted sum, norms, short conv
//===----------------------------------------------------------------------===//

Tensor softmaxGrad(const Tensor &dy, const Tensor &x) {
  checkDy(__func__, dy, x.shape);
  const Tensor y = softmax(x);
  Tensor dx = Tensor::zeros(x.shape);
  const int64_t n = x.rank() ? x.shape.back() : 1;
  const int64_t rows = n ? x.numel() / n : 0;
  for (int64_t r = 0; r < rows; ++r) {
    // y_j = exp(x_j) / Z: dx_j = y_j (dy_j - sum_k y_k dy_k); y_j = 0 at
    // -inf and in fully masked rows, so those get 0.
    double dot = 0;
    for (int64_t j = 0; j < n; ++j)
      if (y.data[r * n + j] != 0)
        dot += y.data[r * n + j] * dy.data[r * n + j];
    for (int64_t j = 0; j < n; ++j)
      if (y.data[r * n + j] != 0)
        dx.data[r * n + j] = y.data[r * n + j] * (dy.data[r * n + j] - dot);
  }
  return dx;
}

WeightedSumGrad weightedSumGrad(const Tensor &dO, const Tensor &p,
                                const Tensor &v) {
  checkWeightedSum(__func__, p, v);
  const int64_t B = p.shape[0], Hq = p.shape[1], T = p.shape[2], S = p.shape[3];
  const int64_t Hk = v.shape[1], Dv = v.shape[3];
  checkDy(__func__, dO, {B, Hq, T, Dv});
  const int64_t groups = Hq / Hk;

  WeightedSumGrad grad{Tensor::zeros(p.shape), Tensor::zeros(v.shape)};
  // dp(i, j) = dO_i . v_j, one query row per task.
  parallelFor(B * Hq * T, [&](int64_t row) {
    const int64_t b = row / (Hq * T), h = row / T % Hq, i = row % T;
    for (int64_t j = 0; j < S; ++j) {
      double acc = 0;
      for (int64_t e = 0; e < Dv; ++e)
        acc += dO.at(b, h, i, e) * v.at(b, h / groups, j, e);
      grad.p.at(b, h, i, j) = acc;
    }
  });
  // dv_j = sum over the group's query heads and rows of p(i, j) dO_i, one
  // key row per task.
  parallelFor(B * Hk * S, [&](int64_t row) {
    const int64_t b = row / (Hk * S), hk = row / S % Hk, j = row % S;
    for (int64_t h = hk * groups; h < (hk + 1) * groups; ++h)
      for (int64_t i = 0; i < T; ++i) {
        const double pij = p.at(b, h, i, j);
        if (pij == 0) // masked: skipped, as the forward does
          continue;
        for (int64_t e = 0; e < Dv; ++e)
          grad.v.at(b, hk, j, e) += pij * dO.at(b, h, i, e);
      }
  });
  return grad;
}

HeadNormGrad headNormGrad(const Tensor &dy, const Tensor &o,
                          const Tensor &gamma, double eps, const Tensor *gateW,
                          const Tensor *gateB) {
  checkHeadNorm(__func__, o, gamma, gateW, gateB);
  checkDy(__func__, dy, o.shape);
  const int64_t B = o.shape[0], H = o.shape[1], T = o.shape[2], Dv = o.shape[3];

  HeadNormGrad grad{Tensor::zeros(o.shape), Tensor::zeros(gamma.shape),
                    zerosLike(gateW), zerosLike(gateB)};
  std::vector<double> n(Dv), u(Dv), du(Dv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        // Forward: n = o * inv, inv = (mean(o^2) + eps)^(-1/2); u = n * gamma;
        // y = u * sigmoid(z), z = gateW . u + gateB (or y = u).
        double ms = 0;
        for (int64_t e = 0; e < Dv; ++e)
          ms += o.at(b, h, t, e) * o.at(b, h, t, e);
        ms /= static_cast<double>(Dv);
        const double inv = 1.0 / std::sqrt(ms + eps);
        for (int64_t e = 0; e < Dv; ++e) {
          n[e] = o.at(b, h, t, e) * inv;
          u[e] = n[e] * gamma.at(e);
          du[e] = dy.at(b, h, t, e);
        }
        if (gateW) {
          double z = gateB ? gateB->at(0) : 0.0;
          for (int64_t e = 0; e < Dv; ++e)
            z += gateW->at(e) * u[e];
          const double s = sigmoid(z);
          double dyu = 0; // dL/d(gate) = dy . u
          for (int64_t e = 0; e < Dv; ++e)
            dyu += du[e] * u[e];
          const double dz = dyu * s * (1 - s);
          if (gateB)
            grad.gateB.at(0) += dz;
          for (int64_t e = 0; e < Dv; ++e) {
            grad.gateW.at(e) += dz * u[e];
            du[e] = du[e] * s + dz * gateW->at(e);
          }
        }
        // dn = du * gamma; do = inv dn - inv^3 o (dn . o) / Dv.
        double dno = 0;
        for (int64_t e = 0; e < Dv; ++e) {
          grad.gamma.at(e) += du[e] * n[e];
          dno += du[e] * gamma.at(e) * o.at(b, h, t, e);
        }
        for (int64_t e = 0; e < Dv; ++e)
          grad.o.at(b, h, t, e) =
              inv * du[e] * gamma.at(e) - inv * inv * inv * o.at(b, h, t, e) *
                                              dno / static_cast<double>(Dv);
      }
  return grad;
}

ShortConvGrad shortConvGrad(const Tensor &dy, const Tensor &x,
                            const Tensor &kernel, bool silu) {
  checkShortConv(__func__, x, kernel);
  checkDy(__func__, dy, x.shape);
  const int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2], D = x.shape[3];
  const int64_t K = kernel.shape[2];

  ShortConvGrad grad{Tensor::zeros(x.shape), Tensor::zeros(kernel.shape)};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t r = 0; r < K; ++r) {
            const int64_t src = t - K + 1 + r;
            if (src >= 0)
              acc += kernel.at(h, d, r) * x.at(b, h, src, d);
          }
          // silu(a) = a sigmoid(a): silu'(a) = s (1 + a (1 - s)).
          const double s = sigmoid(acc);
          const double dacc =
              dy.at(b, h, t, d) * (silu ? s * (1 + acc * (1 - s)) : 1.0);
          for (int64_t r = 0; r < K; ++r) {
            const int64_t src = t - K + 1 + r;
            if (src < 0)
              continue;
            grad.kernel.at(h, d, r) += dacc * x.at(b, h, src, d);
            grad.x.at(b, h, src, d) += dacc * kernel.at(h, d, r);
          }
        }
  return grad;
}

Tensor l2normGrad(const Tensor &dy, const Tensor &x, double eps) {
  checkDy(__func__, dy, x.shape);
  Tensor dx = Tensor::zeros(x.shape);
  const int64_t n = x.rank() ? x.shape.back() : 1;
  const int64_t rows = n ? x.numel() / n : 0;
  for (int64_t r = 0; r < rows; ++r) {
    // y = x inv, inv = (sum x^2 + eps)^(-1/2): dx = inv dy - inv^3 x (dy.x).
    const double *xr = &x.data[r * n], *dyr = &dy.data[r * n];
    double ss = 0, dyx = 0;
    for (int64_t j = 0; j < n; ++j) {
      ss += xr[j] * xr[j];
      dyx += dyr[j] * xr[j];
    }
    const double inv = 1.0 / std::sqrt(ss + eps);
    for (int64_t j = 0; j < n; ++j)
      dx.data[r * n + j] = inv * dyr[j] - inv * inv * inv * xr[j] * dyx;
  }
  return dx;
}

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

AttentionGrad attentionGrad(const Tensor &dO, const AttentionConfig &cfg,
                            const Tensor &q, const Tensor &k, const Tensor &v,
                            const Tensor *w, const Tensor *beta,
                            const Tensor *g, const Tensor *thetaPre,
                            const Tensor *wPre, const Tensor *thetaPost,
                            const Tensor *wPost, const Tensor *gamma,
                            const Tensor *gateW, const Tensor *gateB) {
  AttentionTape tape;
  const Tensor out =
      attentionRecorded(cfg, q, k, v, w, beta, g, thetaPre, wPre, thetaPost,
                        wPost, gamma, gateW, gateB, &tape);
  checkDy(__func__, dO, out.shape);
  AttentionGrad grad;

  // The steps of attentionRecorded, last to first; dx is the gradient of
  // the current step's output.
  const std::vector<int64_t> *cu =
      cfg.cuSeqlens.empty() ? nullptr : &cfg.cuSeqlens;
  Tensor dx = dO;
  if (gamma) {
    HeadNormGrad n =
        headNormGrad(dx, tape.o, *gamma, cfg.normEps, gateW, gateB);
    dx = std::move(n.o);
    grad.gamma = std::move(n.gamma);
    grad.gateW = std::move(n.gateW);
    grad.gateB = std::move(n.gateB);
  }
  WeightedSumGrad ws = weightedSumGrad(dx, tape.probs, v);
  grad.v = std::move(ws.v);
  dx = std::move(ws.p);
  if (wPost) {
    HeadMixGrad m = headMixGrad(dx, tape.postMixIn, *wPost, Stage::Post, cu);
    dx = std::move(m.x);
    grad.wPost = std::move(m.W);
  }
  if (thetaPost) {
    KqConvGrad c = kqConvGrad(dx, tape.postConvIn, *thetaPost, Stage::Post, cu);
    dx = std::move(c.x);
    grad.thetaPost = std::move(c.theta);
  }
  dx = softmaxGrad(dx, tape.softmaxIn);
  if (wPre) {
    HeadMixGrad m = headMixGrad(dx, tape.preMixIn, *wPre, Stage::Pre, cu);
    dx = std::move(m.x);
    grad.wPre = std::move(m.W);
  }
  if (thetaPre) {
    KqConvGrad c = kqConvGrad(dx, tape.logits, *thetaPre, Stage::Pre, cu);
    dx = std::move(c.x);
    grad.thetaPre = std::move(c.theta);
  }
  ScoresGrad s = scoresGrad(dx, tape.qr, tape.kr, cfg.scale, w, beta, g,
                            cfg.gateScaled, cfg.mask, cfg.window, cu);
  grad.q = std::move(s.q);
  grad.k = std::move(s.k);
  grad.w = std::move(s.w);
  grad.beta = std::move(s.beta);
  grad.g = std::move(s.g);
  if (cfg.rope) {
    grad.q = ropeGrad(grad.q, cfg.ropeTheta, tape.ropeDim, cfg.ropeStyle, 0,
                      &tape.ropeQPositions);
    grad.k = ropeGrad(grad.k, cfg.ropeTheta, tape.ropeDim, cfg.ropeStyle, 0,
                      &tape.ropeKPositions);
  }
  return grad;
}

} // namespace ref
} // namespace attn
