//===- host.cpp - a C++ host program using attn's JIT runtime -------------===//
//
// Compiles a causal attention program at start-up, then runs it on buffers
// this program owns in its own layout ([B, S, H, D], "BSHD"), described to
// attn as strided [B, H, S, D] views, and checks the result against a naive
// loop. The same kernel serves a second shape without recompiling.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

static const char *kProgram = R"(
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04)
       : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>)
       -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
)";

constexpr int64_t D = 64;

/// Element (b, h, t, d) of a BSHD buffer.
static size_t at(int64_t H, int64_t S, int64_t b, int64_t h, int64_t t,
                 int64_t d) {
  return ((b * S + t) * H + h) * D + d;
}

/// RoPE (half style, theta 1e4) then causal softmax attention, in double.
static double naiveError(const std::vector<float> &q,
                         const std::vector<float> &k,
                         const std::vector<float> &v,
                         const std::vector<float> &o, int64_t B, int64_t H,
                         int64_t T) {
  auto rope = [&](const std::vector<float> &x, int64_t b, int64_t h, int64_t t,
                  std::vector<double> &out) {
    for (int64_t i = 0; i < D / 2; ++i) {
      double angle = t * std::pow(1e4, -2.0 * i / D);
      double x0 = x[at(H, T, b, h, t, i)], x1 = x[at(H, T, b, h, t, i + D / 2)];
      out[i] = x0 * std::cos(angle) - x1 * std::sin(angle);
      out[i + D / 2] = x0 * std::sin(angle) + x1 * std::cos(angle);
    }
  };
  double maxErr = 0, maxRef = 1e-30;
  std::vector<double> qi(D), kj(D), p(T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        rope(q, b, h, i, qi);
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          rope(k, b, h, j, kj);
          double s = 0;
          for (int64_t d = 0; d < D; ++d)
            s += qi[d] * kj[d];
          p[j] = s / std::sqrt(double(D));
          m = std::max(m, p[j]);
        }
        for (int64_t j = 0; j <= i; ++j)
          sum += (p[j] = std::exp(p[j] - m));
        for (int64_t d = 0; d < D; ++d) {
          double want = 0;
          for (int64_t j = 0; j <= i; ++j)
            want += p[j] / sum * v[at(H, T, b, h, j, d)];
          double err = std::fabs(o[at(H, T, b, h, i, d)] - want);
          maxErr = std::isnan(err) ? INFINITY : std::max(maxErr, err);
          maxRef = std::max(maxRef, std::fabs(want));
        }
      }
  return maxErr / maxRef;
}

int main() {
  auto engine = attn::Engine::create("cpu");
  if (!engine) {
    std::fprintf(stderr, "%s\n", llvm::toString(engine.takeError()).c_str());
    return 1;
  }
  auto kernel = (*engine)->compile(kProgram);
  if (!kernel) {
    std::fprintf(stderr, "%s\n", llvm::toString(kernel.takeError()).c_str());
    return 1;
  }
  unsigned seed = std::random_device{}();
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::printf("seed %u\n", seed);
  int status = 0;
  for (auto [B, H, T] :
       {std::tuple<int64_t, int64_t, int64_t>{2, 4, 100}, {1, 3, 257}}) {
    size_t n = B * T * H * D;
    std::vector<float> q(n), k(n), v(n), o(n, NAN);
    for (size_t i = 0; i < n; ++i)
      q[i] = normal(gen), k[i] = normal(gen), v[i] = normal(gen);
    // [B, H, T, D] views of the BSHD buffers.
    std::vector<int64_t> shape{B, H, T, D}, strides{T * H * D, D, H * D, 1};
    auto view = [&](std::vector<float> &x) {
      return attn::TensorView(x.data(), attn::DType::F32, shape, strides);
    };
    if (llvm::Error e =
            (*kernel)->launch({view(q), view(k), view(v)}, view(o))) {
      std::fprintf(stderr, "%s\n", llvm::toString(std::move(e)).c_str());
      return 1;
    }
    double err = naiveError(q, k, v, o, B, H, T);
    std::printf("C++ API, RoPE attention on BSHD buffers, B=%lld H=%lld "
                "T=%lld: max relative error vs a naive loop %.3e\n",
                (long long)B, (long long)H, (long long)T, err);
    if (!(err <= 1e-5))
      status = 1;
  }
  return status;
}
