//===- Oracle.cpp - fp64 brute-force reference for attn -------------------===//
//
// See Oracle.h. Every function is a direct transcription of its formula, with
// explicit loops; clarity wins over speed everywhere.
//
//===----------------------------------------------------------------------===//

#include "OracleDetail.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace attn {
namespace ref {

namespace detail {

void fail(const char *func, const std::string &msg) {
  std::fprintf(stderr, "attn::ref::%s: %s\n", func, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void checkRank(const char *func, const Tensor &t, int64_t rank,
               const char *name) {
  if (t.rank() != rank)
    fail(func, std::string(name) + " must have rank " + std::to_string(rank) +
                   ", got shape " + shapeStr(t.shape));
}

void checkShape(const char *func, const Tensor &t,
                const std::vector<int64_t> &shape, const char *name) {
  if (t.shape != shape)
    fail(func, std::string(name) + " must have shape " + shapeStr(shape) +
                   ", got " + shapeStr(t.shape));
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<int64_t> sequenceIds(const std::vector<int64_t> *cuSeqlens,
                                 int64_t S) {
  std::vector<int64_t> seq(S, 0);
  if (cuSeqlens)
    for (size_t n = 0; n + 1 < cuSeqlens->size(); ++n)
      for (int64_t t = (*cuSeqlens)[n]; t < (*cuSeqlens)[n + 1]; ++t)
        seq[t] = static_cast<int64_t>(n);
  return seq;
}

bool visible(Mask mask, int64_t window, int64_t pos, int64_t j,
             const std::vector<int64_t> &seq) {
  if (pos >= 0 && seq[pos] != seq[j])
    return false;
  switch (mask) {
  case Mask::Causal:
    return j <= pos;
  case Mask::None:
    return true;
  case Mask::SlidingWindow:
    return pos - window < j && j <= pos;
  }
  return false;
}

/// ORACLE_CHECK for the check functions: the message names `func`, the
/// function whose operands are checked, not the checker.
void require(const char *func, bool cond, const std::string &msg) {
  if (!cond)
    fail(func, msg);
}

/// Aborts unless cuSeqlens are N + 1 >= 2 nondecreasing offsets from 0 to S.
void checkCuSeqlens(const char *func, const std::vector<int64_t> &cu,
                    int64_t S) {
  require(func, cu.size() >= 2 && cu.front() == 0 && cu.back() == S,
          "cuSeqlens must be N + 1 >= 2 offsets from 0 to S = " +
              std::to_string(S));
  for (size_t n = 0; n + 1 < cu.size(); ++n)
    require(func, cu[n] <= cu[n + 1], "cuSeqlens must be nondecreasing");
}

std::vector<int64_t> rowStarts(const char *func,
                               const std::vector<int64_t> *cuSeqlens, int64_t T,
                               int64_t S) {
  std::vector<int64_t> starts(T, 0);
  if (!cuSeqlens)
    return starts;
  require(func, T == S, "packed sequences need T == S");
  checkCuSeqlens(func, *cuSeqlens, S);
  for (size_t n = 0; n + 1 < cuSeqlens->size(); ++n)
    for (int64_t t = (*cuSeqlens)[n]; t < (*cuSeqlens)[n + 1]; ++t)
      starts[t] = (*cuSeqlens)[n];
  return starts;
}

void checkRope(const char *func, const Tensor &x, int64_t rotaryDim,
               const std::vector<int64_t> *positions) {
  checkRank(func, x, 4, "x");
  require(func, rotaryDim >= 0 && rotaryDim % 2 == 0 && rotaryDim <= x.shape[3],
          "rotaryDim must be even and <= D, got " + std::to_string(rotaryDim));
  require(func,
          !positions || static_cast<int64_t>(positions->size()) == x.shape[2],
          "positions must have T entries");
}

void checkScores(const char *func, const Tensor &q, const Tensor &k,
                 const Tensor *w, const Tensor *beta, const Tensor *g,
                 Mask mask, int64_t window,
                 const std::vector<int64_t> *cuSeqlens) {
  checkRank(func, q, 4, "q");
  checkRank(func, k, 4, "k");
  const int64_t B = q.shape[0], Hq = q.shape[1], T = q.shape[2], D = q.shape[3];
  const int64_t Hk = k.shape[1], S = k.shape[2];
  require(func, k.shape[0] == B && k.shape[3] == D,
          "k shape " + shapeStr(k.shape) + " incompatible with q " +
              shapeStr(q.shape));
  require(func, Hk > 0 && Hq % Hk == 0, "Hq must be a multiple of Hk");
  // T > S puts queries at negative positions: meaningful only unmasked and
  // without PaTH or a gate (the dialect's verifier rules the same).
  require(func, T <= S || (mask == Mask::None && !w && !g),
          "T must be <= S unless the mask is None without PaTH/gate");
  require(func, (w == nullptr) == (beta == nullptr),
          "PaTH needs both w and beta (or neither)");
  if (w) {
    checkShape(func, *w, {B, Hk, S, D}, "w");
    checkShape(func, *beta, {B, Hk, S}, "beta");
  }
  if (g)
    checkShape(func, *g, {B, Hq, S}, "g");
  require(func, mask != Mask::SlidingWindow || window >= 0,
          "window must be >= 0");
  if (cuSeqlens) {
    require(func, T == S, "packed sequences need T == S");
    checkCuSeqlens(func, *cuSeqlens, S);
  }
}

void checkKqConv(const char *func, const Tensor &x, const Tensor &theta) {
  checkRank(func, x, 4, "x");
  checkRank(func, theta, 3, "theta");
  require(func, theta.shape[0] == x.shape[1], "theta must be [H, cq, ck]");
  require(func,
          theta.shape[1] >= 1 && theta.shape[2] >= 1 && theta.shape[2] % 2 == 1,
          "ck must be odd");
  require(func, x.shape[2] <= x.shape[3], "T must be <= S");
}

void checkHeadMix(const char *func, const Tensor &x, const Tensor &W) {
  checkRank(func, x, 4, "x");
  checkRank(func, W, 2, "W");
  const int64_t H = x.shape[1], ch = W.shape[1];
  require(func, W.shape[0] == H, "W must be [H, ch]");
  require(func, ch >= 1 && H % ch == 0, "ch must divide H");
  require(func, x.shape[2] <= x.shape[3], "T must be <= S");
}

void checkWeightedSum(const char *func, const Tensor &p, const Tensor &v) {
  checkRank(func, p, 4, "p");
  checkRank(func, v, 4, "v");
  const int64_t Hq = p.shape[1], Hk = v.shape[1];
  require(func, v.shape[0] == p.shape[0] && v.shape[2] == p.shape[3],
          "v shape " + shapeStr(v.shape) + " incompatible with p " +
              shapeStr(p.shape));
  require(func, Hk > 0 && Hq % Hk == 0, "Hq must be a multiple of Hk");
}

void checkHeadNorm(const char *func, const Tensor &o, const Tensor &gamma,
                   const Tensor *gateW, const Tensor *gateB) {
  checkRank(func, o, 4, "o");
  const int64_t Dv = o.shape[3];
  checkShape(func, gamma, {Dv}, "gamma");
  if (gateW)
    checkShape(func, *gateW, {Dv}, "gateW");
  if (gateB)
    checkShape(func, *gateB, {1}, "gateB");
}

void checkShortConv(const char *func, const Tensor &x, const Tensor &kernel) {
  checkRank(func, x, 4, "x");
  checkRank(func, kernel, 3, "kernel");
  require(func, kernel.shape[0] == x.shape[1] && kernel.shape[1] == x.shape[3],
          "kernel must be [H, D, K]");
}

} // namespace detail

using namespace detail;

namespace {

/// splitmix64: a tiny, well-mixed, fully specified 64-bit generator.
struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in (0, 1): never 0, so log() is finite.
  double uniformOpen() {
    return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor(std::vector<int64_t> shapeIn, std::vector<double> dataIn)
    : shape(std::move(shapeIn)), data(std::move(dataIn)) {
  ORACLE_CHECK(static_cast<int64_t>(data.size()) == numel(),
               "data size " + std::to_string(data.size()) +
                   " does not match shape " + shapeStr(shape));
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t Tensor::dim(int64_t d) const {
  int64_t r = rank();
  if (d < 0)
    d += r;
  ORACLE_CHECK(d >= 0 && d < r, "dimension " + std::to_string(d) +
                                    " out of range for shape " +
                                    shapeStr(shape));
  return shape[d];
}

int64_t Tensor::offset(const int64_t *idx, int64_t n) const {
  ORACLE_CHECK(n == rank(), std::to_string(n) +
                                " indices given for a tensor of shape " +
                                shapeStr(shape));
  int64_t off = 0;
  for (int64_t a = 0; a < n; ++a) {
    ORACLE_CHECK(idx[a] >= 0 && idx[a] < shape[a],
                 "index " + std::to_string(idx[a]) + " out of range in dim " +
                     std::to_string(a) + " of shape " + shapeStr(shape));
    off = off * shape[a] + idx[a];
  }
  return off;
}

double &Tensor::at(int64_t i) {
  int64_t idx[] = {i};
  return data[offset(idx, 1)];
}
double &Tensor::at(int64_t i, int64_t j) {
  int64_t idx[] = {i, j};
  return data[offset(idx, 2)];
}
double &Tensor::at(int64_t i, int64_t j, int64_t k) {
  int64_t idx[] = {i, j, k};
  return data[offset(idx, 3)];
}
double &Tensor::at(int64_t i, int64_t j, int64_t k, int64_t l) {
  int64_t idx[] = {i, j, k, l};
  return data[offset(idx, 4)];
}
double Tensor::at(int64_t i) const { return const_cast<Tensor *>(this)->at(i); }
double Tensor::at(int64_t i, int64_t j) const {
  return const_cast<Tensor *>(this)->at(i, j);
}
double Tensor::at(int64_t i, int64_t j, int64_t k) const {
  return const_cast<Tensor *>(this)->at(i, j, k);
}
double Tensor::at(int64_t i, int64_t j, int64_t k, int64_t l) const {
  return const_cast<Tensor *>(this)->at(i, j, k, l);
}

Tensor Tensor::zeros(const std::vector<int64_t> &shape) {
  return full(shape, 0.0);
}

Tensor Tensor::full(const std::vector<int64_t> &shape, double value) {
  for (int64_t d : shape)
    ORACLE_CHECK(d >= 0, "negative dimension in shape " + shapeStr(shape));
  Tensor t;
  t.shape = shape;
  t.data.assign(static_cast<size_t>(t.numel()), value);
  return t;
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

Tensor detail::rotatePairs(const Tensor &x, double theta, int64_t rotaryDim,
                           RopeStyle style, int64_t offset,
                           const std::vector<int64_t> *positions, double sign) {
  const int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2];
  const int64_t R = rotaryDim;

  Tensor y = x; // dims >= R are copied unchanged
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const double pos =
            static_cast<double>(positions ? (*positions)[t] : offset + t);
        for (int64_t i = 0; i < R / 2; ++i) {
          const double angle =
              pos * std::pow(theta, -2.0 * static_cast<double>(i) /
                                        static_cast<double>(R));
          const double c = std::cos(angle), s = sign * std::sin(angle);
          const int64_t ia = style == RopeStyle::Half ? i : 2 * i;
          const int64_t ib = style == RopeStyle::Half ? i + R / 2 : 2 * i + 1;
          const double a = x.at(b, h, t, ia), bb = x.at(b, h, t, ib);
          y.at(b, h, t, ia) = a * c - bb * s;
          y.at(b, h, t, ib) = a * s + bb * c;
        }
      }
  return y;
}

Tensor rope(const Tensor &x, double theta, int64_t rotaryDim, RopeStyle style,
            int64_t offset, const std::vector<int64_t> *positions) {
  checkRope(__func__, x, rotaryDim, positions);
  return rotatePairs(x, theta, rotaryDim, style, offset, positions, 1.0);
}

//===----------------------------------------------------------------------===//
// Scores (plain / GQA / window / PaTH / FoX)
//===----------------------------------------------------------------------===//

Tensor scores(const Tensor &q, const Tensor &k, double scale, const Tensor *w,
              const Tensor *beta, const Tensor *g, bool gateScaled, Mask mask,
              int64_t window, const std::vector<int64_t> *cuSeqlens) {
  checkScores(__func__, q, k, w, beta, g, mask, window, cuSeqlens);
  const int64_t B = q.shape[0], Hq = q.shape[1], T = q.shape[2], D = q.shape[3];
  const int64_t Hk = k.shape[1], S = k.shape[2];
  const std::vector<int64_t> seq = sequenceIds(cuSeqlens, S);

  const int64_t groups = Hq / Hk;
  const double gamma = gateScaled ? scale : 1.0;
  Tensor out = Tensor::full({B, Hq, T, S}, -kInf);

  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / groups;
      // G = inclusive cumsum of g over positions 0..S-1.
      std::vector<double> G(S, 0.0);
      if (g) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) {
          acc += g->at(b, h, j);
          G[j] = acc;
        }
      }
      auto dotK = [&](const std::vector<double> &r, int64_t j) {
        double d = 0;
        for (int64_t e = 0; e < D; ++e)
          d += r[e] * k.at(b, hk, j, e);
        return d;
      };

      parallelFor(T, [&](int64_t i) {
        const int64_t p = queryPos(i, T, S);
        std::vector<double> qi(D);
        for (int64_t e = 0; e < D; ++e)
          qi[e] = q.at(b, h, i, e);

        // Walking recurrence (path_fox.md §1.4): r = H_{j+1} ... H_p q_i
        // when scoring key j, then r <- H_j r.
        std::vector<double> r = qi;
        for (int64_t j = p; j >= 0; --j) {
          if (visible(mask, window, p, j, seq))
            out.at(b, h, i, j) = scale * dotK(r, j) + gamma * (G[p] - G[j]);
          if (w) {
            double wr = 0;
            for (int64_t e = 0; e < D; ++e)
              wr += w->at(b, hk, j, e) * r[e];
            const double c = beta->at(b, hk, j) * wr;
            for (int64_t e = 0; e < D; ++e)
              r[e] -= c * w->at(b, hk, j, e);
          }
        }
        // Keys after the query's own position (only visible with Mask::None):
        // P(p, j) = I for j >= p.
        // (p < 0 when T > S: no gate then, so G is not read.)
        for (int64_t j = std::max<int64_t>(p + 1, 0); j < S; ++j)
          if (visible(mask, window, p, j, seq))
            out.at(b, h, i, j) =
                scale * dotK(qi, j) + (g ? gamma * (G[p] - G[j]) : 0.0);
      });
    }
  return out;
}

//===----------------------------------------------------------------------===//
// Multi-Token Attention
//===----------------------------------------------------------------------===//

Tensor kqConv(const Tensor &x, const Tensor &theta, Stage stage,
              const std::vector<int64_t> *cuSeqlens) {
  checkKqConv(__func__, x, theta);
  const int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2], S = x.shape[3];
  const int64_t cq = theta.shape[1], ck = theta.shape[2];
  const int64_t p = cq - 1, c = (ck - 1) / 2, off = S - T;
  const std::vector<int64_t> starts = rowStarts(__func__, cuSeqlens, T, S);

  Tensor out = Tensor::zeros({B, H, T, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      // Zero-masked, zero-padded source, as output rows starting at key lo
      // see it.
      auto X0 = [&](int64_t i2, int64_t j2, int64_t lo) -> double {
        if (i2 < 0 || i2 >= T || j2 < lo || j2 >= S || j2 > i2 + off)
          return 0.0;
        const double v = x.at(b, h, i2, j2);
        return v == -kInf ? 0.0 : v;
      };
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < S; ++j) {
          if (j > i + off || j < starts[i]) {
            out.at(b, h, i, j) = stage == Stage::Pre ? -kInf : 0.0;
            continue;
          }
          double C = 0;
          for (int64_t a = 0; a < cq; ++a)
            for (int64_t bb = 0; bb < ck; ++bb)
              C += theta.at(h, a, bb) * X0(i - p + a, j - c + bb, starts[i]);
          out.at(b, h, i, j) = C;
        }
    }
  return out;
}

Tensor headMix(const Tensor &x, const Tensor &W, Stage stage,
               const std::vector<int64_t> *cuSeqlens) {
  checkHeadMix(__func__, x, W);
  const int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2], S = x.shape[3];
  const int64_t ch = W.shape[1];
  const int64_t off = S - T;
  const std::vector<int64_t> starts = rowStarts(__func__, cuSeqlens, T, S);

  auto x0 = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    const double v = x.at(b, h, i, j);
    return v == -kInf ? 0.0 : v;
  };
  Tensor out = Tensor::zeros({B, H, T, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g0 = (h / ch) * ch;
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < S; ++j) {
          if (j > i + off || j < starts[i]) {
            out.at(b, h, i, j) = stage == Stage::Pre ? -kInf : 0.0;
            continue;
          }
          double acc = 0;
          for (int64_t m = 0; m < ch; ++m)
            acc += W.at(h, m) * x0(b, g0 + m, i, j);
          out.at(b, h, i, j) = acc;
        }
    }
  return out;
}

//===----------------------------------------------------------------------===//
// Softmax, weighted sum, norms, short conv
//===----------------------------------------------------------------------===//

Tensor softmax(const Tensor &x) {
  ORACLE_CHECK(x.rank() >= 1, "softmax needs rank >= 1");
  const int64_t n = x.shape.back();
  Tensor y = Tensor::zeros(x.shape);
  if (n == 0)
    return y;
  const int64_t rows = x.numel() / n;
  for (int64_t r = 0; r < rows; ++r) {
    const double *in = x.data.data() + r * n;
    double *o = y.data.data() + r * n;
    // A NaN score makes its row NaN (std::fmax would drop it and, for a row
    // of NaNs, take the row as fully masked).
    double m = -kInf;
    for (int64_t j = 0; j < n; ++j)
      m = std::isnan(in[j]) || std::isnan(m) ? std::nan("")
                                             : std::fmax(m, in[j]);
    if (m == -kInf)
      continue; // fully masked row: all zeros
    // A masked score (-inf) is exactly 0 even in a NaN row, whose other
    // probabilities are NaN: the masked key does not take part
    // (docs/input-limits.md, "Non-finite values").
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      o[j] = in[j] == -kInf ? 0.0 : std::exp(in[j] - m);
      sum += o[j];
    }
    for (int64_t j = 0; j < n; ++j)
      if (o[j] != 0.0)
        o[j] /= sum;
  }
  return y;
}

Tensor weightedSum(const Tensor &p, const Tensor &v) {
  checkWeightedSum(__func__, p, v);
  const int64_t B = p.shape[0], Hq = p.shape[1], T = p.shape[2], S = p.shape[3];
  const int64_t Hk = v.shape[1], Dv = v.shape[3];
  const int64_t groups = Hq / Hk;

  Tensor o = Tensor::zeros({B, Hq, T, Dv});
  // Row by row, j outer (v rows are contiguous), zero weights skipped.
  parallelFor(B * Hq * T, [&](int64_t row) {
    const int64_t b = row / (Hq * T), h = row / T % Hq, i = row % T;
    std::vector<double> acc(Dv, 0.0);
    for (int64_t j = 0; j < S; ++j) {
      const double w = p.at(b, h, i, j);
      if (w == 0)
        continue;
      for (int64_t e = 0; e < Dv; ++e)
        acc[e] += w * v.at(b, h / groups, j, e);
    }
    for (int64_t e = 0; e < Dv; ++e)
      o.at(b, h, i, e) = acc[e];
  });
  return o;
}

Tensor headNorm(const Tensor &o, const Tensor &gamma, double eps,
                const Tensor *gateW, const Tensor *gateB) {
  checkHeadNorm(__func__, o, gamma, gateW, gateB);
  const int64_t B = o.shape[0], H = o.shape[1], T = o.shape[2], Dv = o.shape[3];

  Tensor y = Tensor::zeros(o.shape);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        double ms = 0;
        for (int64_t e = 0; e < Dv; ++e)
          ms += o.at(b, h, t, e) * o.at(b, h, t, e);
        ms /= static_cast<double>(Dv);
        const double inv = 1.0 / std::sqrt(ms + eps);
        for (int64_t e = 0; e < Dv; ++e)
          y.at(b, h, t, e) = o.at(b, h, t, e) * inv * gamma.at(e);
        if (gateW) {
          double z = gateB ? gateB->at(0) : 0.0;
          for (int64_t e = 0; e < Dv; ++e)
            z += gateW->at(e) * y.at(b, h, t, e);
          const double gate = sigmoid(z);
          for (int64_t e = 0; e < Dv; ++e)
            y.at(b, h, t, e) *= gate;
        }
      }
  return y;
}

Tensor shortConv(const Tensor &x, const Tensor &kernel, bool silu) {
  checkShortConv(__func__, x, kernel);
  const int64_t B = x.shape[0], H = x.shape[1], T = x.shape[2], D = x.shape[3];
  const int64_t K = kernel.shape[2];

  Tensor y = Tensor::zeros(x.shape);
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
          y.at(b, h, t, d) = silu ? acc * sigmoid(acc) : acc;
        }
  return y;
}

Tensor l2norm(const Tensor &x, double eps) {
  ORACLE_CHECK(x.rank() >= 1, "l2norm needs rank >= 1");
  const int64_t n = x.shape.back();
  Tensor y = Tensor::zeros(x.shape);
  if (n == 0)
    return y;
  const int64_t rows = x.numel() / n;
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < n; ++j)
      ss += x.data[r * n + j] * x.data[r * n + j];
    const double inv = 1.0 / std::sqrt(ss + eps);
    for (int64_t j = 0; j < n; ++j)
      y.data[r * n + j] = x.data[r * n + j] * inv;
  }
  return y;
}

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

Tensor detail::attentionRecorded(const AttentionConfig &cfg, const Tensor &q,
                                 const Tensor &k, const Tensor &v,
                                 const Tensor *w, const Tensor *beta,
                                 const Tensor *g, const Tensor *thetaPre,
                                 const Tensor *wPre, const Tensor *thetaPost,
                                 const Tensor *wPost, const Tensor *gamma,
                                 const Tensor *gateW, const Tensor *gateB,
                                 AttentionTape *tape) {
  const char *func = "attention";
  checkRank(func, q, 4, "q");
  checkRank(func, k, 4, "k");
  const int64_t Hq = q.shape[1], T = q.shape[2], D = q.shape[3];
  const int64_t S = k.shape[2];
  // Keeps a step's input for the backward pass (only when asked: the
  // copies are T x S each).
  auto record = [&](Tensor AttentionTape::*field, const Tensor &x) {
    if (tape)
      tape->*field = x;
  };

  const std::vector<int64_t> *cu =
      cfg.cuSeqlens.empty() ? nullptr : &cfg.cuSeqlens;
  Tensor qr = q, kr = k;
  const int64_t R = cfg.ropeDim == 0 ? D : cfg.ropeDim;
  // q at positions ropeOffset + S - T + i, k at ropeOffset + j; packed
  // sequences (T == S) restart both at each sequence's start.
  std::vector<int64_t> qPos(T), kPos(S);
  if (cu) {
    checkCuSeqlens(func, *cu, S);
    qPos = kPos = packedPositions(*cu, cfg.ropeOffset);
  } else {
    std::iota(qPos.begin(), qPos.end(), cfg.ropeOffset + S - T);
    std::iota(kPos.begin(), kPos.end(), cfg.ropeOffset);
  }
  if (cfg.rope) {
    qr = rope(q, cfg.ropeTheta, R, cfg.ropeStyle, 0, &qPos);
    kr = rope(k, cfg.ropeTheta, R, cfg.ropeStyle, 0, &kPos);
  }
  record(&AttentionTape::qr, qr);
  record(&AttentionTape::kr, kr);
  if (tape) {
    tape->ropeDim = R;
    tape->ropeQPositions = qPos;
    tape->ropeKPositions = kPos;
  }

  Tensor x = scores(qr, kr, cfg.scale, w, beta, g, cfg.gateScaled, cfg.mask,
                    cfg.window, cu);
  record(&AttentionTape::logits, x);
  if (thetaPre)
    x = kqConv(x, *thetaPre, Stage::Pre, cu);
  if (wPre) {
    const int64_t group = cfg.preGroup == 0 ? Hq : cfg.preGroup;
    checkShape(func, *wPre, {Hq, group}, "wPre");
    record(&AttentionTape::preMixIn, x);
    x = headMix(x, *wPre, Stage::Pre, cu);
  }
  record(&AttentionTape::softmaxIn, x);
  x = softmax(x);
  if (thetaPost) {
    record(&AttentionTape::postConvIn, x);
    x = kqConv(x, *thetaPost, Stage::Post, cu);
  }
  if (wPost) {
    const int64_t group = cfg.postGroup == 0 ? Hq : cfg.postGroup;
    checkShape(func, *wPost, {Hq, group}, "wPost");
    record(&AttentionTape::postMixIn, x);
    x = headMix(x, *wPost, Stage::Post, cu);
  }
  record(&AttentionTape::probs, x);
  Tensor o = weightedSum(x, v);
  if (gamma) {
    record(&AttentionTape::o, o);
    o = headNorm(o, *gamma, cfg.normEps, gateW, gateB);
  }
  return o;
}

std::vector<int64_t> packedPositions(const std::vector<int64_t> &cuSeqlens,
                                     int64_t offset) {
  checkCuSeqlens(__func__, cuSeqlens, cuSeqlens.empty() ? 0 : cuSeqlens.back());
  std::vector<int64_t> pos(cuSeqlens.back());
  for (size_t n = 0; n + 1 < cuSeqlens.size(); ++n)
    for (int64_t t = cuSeqlens[n]; t < cuSeqlens[n + 1]; ++t)
      pos[t] = offset + t - cuSeqlens[n];
  return pos;
}

Tensor attention(const AttentionConfig &cfg, const Tensor &q, const Tensor &k,
                 const Tensor &v, const Tensor *w, const Tensor *beta,
                 const Tensor *g, const Tensor *thetaPre, const Tensor *wPre,
                 const Tensor *thetaPost, const Tensor *wPost,
                 const Tensor *gamma, const Tensor *gateW,
                 const Tensor *gateB) {
  return attentionRecorded(cfg, q, k, v, w, beta, g, thetaPre, wPre, thetaPost,
                           wPost, gamma, gateW, gateB, nullptr);
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

namespace {

/// Classifies one (got, ref) pair: returns false when the pair is a
/// non-finite mismatch; otherwise sets `diff` (0 for matching infinities)
/// and `refMag` (0 for an infinite ref).
bool comparePair(double got, double ref, double &diff, double &refMag) {
  if (std::isnan(got) || std::isnan(ref))
    return false;
  if (std::isinf(got) || std::isinf(ref)) {
    if (got != ref)
      return false;
    diff = 0;
    refMag = 0;
    return true;
  }
  diff = std::fabs(got - ref);
  refMag = std::fabs(ref);
  return true;
}

} // namespace

double relError(const std::vector<double> &got, const Tensor &ref) {
  if (static_cast<int64_t>(got.size()) != ref.numel() ||
      ref.data.size() != got.size())
    return kInf;
  double maxDiff = 0, maxRef = 0;
  for (size_t n = 0; n < got.size(); ++n) {
    double diff, mag;
    if (!comparePair(got[n], ref.data[n], diff, mag))
      return kInf;
    maxDiff = std::fmax(maxDiff, diff);
    maxRef = std::fmax(maxRef, mag);
  }
  return maxDiff / std::fmax(maxRef, 1e-30);
}

double relError(const Tensor &got, const Tensor &ref) {
  if (got.shape != ref.shape)
    return kInf;
  return relError(got.data, ref);
}

double relRmsError(const std::vector<double> &got, const Tensor &ref) {
  if (static_cast<int64_t>(got.size()) != ref.numel() ||
      ref.data.size() != got.size())
    return kInf;
  double num = 0, den = 0;
  for (size_t n = 0; n < got.size(); ++n) {
    double diff, mag;
    if (!comparePair(got[n], ref.data[n], diff, mag))
      return kInf;
    num += diff * diff;
    den += mag * mag;
  }
  return std::sqrt(num) / std::fmax(std::sqrt(den), 1e-30);
}

double relRmsError(const Tensor &got, const Tensor &ref) {
  if (got.shape != ref.shape)
    return kInf;
  return relRmsError(got.data, ref);
}

double worstRowRelError(const Tensor &got, const Tensor &ref, int64_t *row,
                        double floorFraction) {
  if (got.shape != ref.shape || ref.shape.empty() ||
      got.data.size() != ref.data.size())
    return kInf;
  const size_t width = static_cast<size_t>(ref.shape.back());
  const size_t rows = width ? ref.data.size() / width : 0;
  if (rows == 0)
    return 0;
  std::vector<double> num(rows, 0), den(rows, 0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < width; ++c) {
      double diff, mag;
      if (!comparePair(got.data[r * width + c], ref.data[r * width + c], diff,
                       mag)) {
        if (row)
          *row = static_cast<int64_t>(r);
        return kInf;
      }
      num[r] += diff * diff;
      den[r] += mag * mag;
    }
  double mean = 0;
  for (double d : den)
    mean += std::sqrt(d);
  const double floor = std::fmax(floorFraction * mean / rows, 1e-30);
  double worst = -1;
  for (size_t r = 0; r < rows; ++r) {
    const double e = std::sqrt(num[r]) / std::fmax(std::sqrt(den[r]), floor);
    if (e > worst) {
      worst = e;
      if (row)
        *row = static_cast<int64_t>(r);
    }
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// Random data
//===----------------------------------------------------------------------===//

Tensor randn(const std::vector<int64_t> &shape, uint64_t seed, double stddev) {
  Tensor t = Tensor::zeros(shape);
  SplitMix64 rng(seed);
  const double twoPi = 6.283185307179586476925286766559;
  for (size_t n = 0; n < t.data.size(); n += 2) {
    // Box-Muller: two independent normals per pair of uniforms.
    const double u1 = rng.uniformOpen(), u2 = rng.uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    t.data[n] = stddev * radius * std::cos(twoPi * u2);
    if (n + 1 < t.data.size())
      t.data[n + 1] = stddev * radius * std::sin(twoPi * u2);
  }
  return t;
}

Tensor randUniform(const std::vector<int64_t> &shape, uint64_t seed, double lo,
                   double hi) {
  Tensor t = Tensor::zeros(shape);
  SplitMix64 rng(seed);
  for (double &x : t.data)
    x = lo + (hi - lo) * rng.uniform();
  return t;
}

} // namespace ref
} // namespace attn
