//===- GradCheck.h - gradients vs central differences ----------*- C++ -*-===//
//
// The finite-difference check of the oracle's gradients, shared by
// OracleGradTest.cpp (each op) and ProgramOracleGradTest.cpp (programs).
// The bound is 1e-6 relative: fp64 central differences with h = 1e-5 are
// good to ~1e-9 on the tests' O(1) data.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_GRADCHECK_H
#define ATTN_TEST_UNIT_GRADCHECK_H

#include "Oracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace attn::grad_test {

using attn::ref::Tensor;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kBound = 1e-6;
inline constexpr double kStep = 1e-5;

/// L = sum(y * dy) over y's finite entries (a forward's -inf entries are
/// constants; its gradient functions ignore dy there).
inline double loss(const Tensor &y, const Tensor &dy) {
  double sum = 0;
  for (size_t n = 0; n < y.data.size(); ++n)
    if (std::isfinite(y.data[n]))
      sum += y.data[n] * dy.data[n];
  return sum;
}

/// Checks `grad`, the oracle's gradient of lossFn() w.r.t. `arg`, against
/// central differences; `arg` is perturbed in place and restored. Entries
/// of `arg` at -inf (masked logits) are constants and are not perturbed.
inline void expectGradMatches(const std::string &what, Tensor &arg,
                              const Tensor &grad,
                              const std::function<double()> &lossFn,
                              uint64_t seed) {
  ASSERT_EQ(grad.shape, arg.shape) << what << ", seed " << seed;
  const Tensor saved = arg;
  // Central differences at steps h and h/2, extrapolated (Richardson):
  // (4 D(h/2) - D(h)) / 3 cancels the h^2 term, which exceeds the bound
  // where the loss curves sharply (MTA's post mix).
  auto centralAt = [&](const Tensor &u, double h) {
    for (size_t n = 0; n < arg.data.size(); ++n)
      arg.data[n] = saved.data[n] + h * u.data[n];
    const double plus = lossFn();
    for (size_t n = 0; n < arg.data.size(); ++n)
      arg.data[n] = saved.data[n] - h * u.data[n];
    const double minus = lossFn();
    arg = saved;
    return (plus - minus) / (2 * h);
  };
  auto central = [&](const Tensor &u) {
    return (4 * centralAt(u, kStep / 2) - centralAt(u, kStep)) / 3;
  };

  // A random direction, all entries at once. The floor on the scale keeps
  // a direction nearly orthogonal to grad from dividing by nothing.
  Tensor u = attn::ref::randn(arg.shape, seed ^ 0x5bd1e995);
  double gu = 0, gg = 0, uu = 0, maxGrad = 0;
  for (size_t n = 0; n < u.data.size(); ++n) {
    if (saved.data[n] == -kInf)
      u.data[n] = 0;
    gu += grad.data[n] * u.data[n];
    gg += grad.data[n] * grad.data[n];
    uu += u.data[n] * u.data[n];
    maxGrad = std::fmax(maxGrad, std::fabs(grad.data[n]));
  }
  // What rounding alone leaves in a difference quotient: the loss's own
  // last digits over the step (a direction nearly orthogonal to grad makes
  // gu small and this the larger term).
  const double roundoff =
      64 * std::numeric_limits<double>::epsilon() * std::fabs(lossFn()) / kStep;
  const double fd = central(u);
  const double scale =
      std::fmax(std::fabs(gu), std::fmax(1e-3 * std::sqrt(gg * uu), 1e-12));
  EXPECT_LE(std::fabs(fd - gu), kBound * scale + roundoff)
      << what << ": directional derivative " << gu << ", central difference "
      << fd << ", seed " << seed;

  // Single entries: the largest gradient and a few random ones.
  std::vector<size_t> entries;
  size_t largest = 0;
  for (size_t n = 0; n < grad.data.size(); ++n)
    if (std::fabs(grad.data[n]) > std::fabs(grad.data[largest]))
      largest = n;
  entries.push_back(largest);
  const Tensor pick = attn::ref::randUniform({5}, seed ^ 0x9e3779b9, 0, 1);
  for (double x : pick.data)
    entries.push_back(static_cast<size_t>(x * arg.data.size()));
  for (size_t n : entries) {
    if (saved.data[n] == -kInf)
      continue;
    Tensor e = Tensor::zeros(arg.shape);
    e.data[n] = 1;
    const double fdn = central(e);
    EXPECT_LE(std::fabs(fdn - grad.data[n]),
              kBound * std::fmax(maxGrad, 1e-12) + roundoff)
        << what << ": entry " << n << " gradient " << grad.data[n]
        << ", central difference " << fdn << ", seed " << seed;
  }
}

} // namespace attn::grad_test

#endif // ATTN_TEST_UNIT_GRADCHECK_H
