//===- NonFiniteChecks.h - non-finite cells against the oracle --*- C++ -*-===//
//
// docs/input-limits.md, "Non-finite values": an output checked cell by cell
// against the fp64 oracle's on inputs that hold a NaN or inf. The kernel
// tests on the CPU (GpuFormCpuTest.cpp) and on the GPU (GpuAttentionTest.cpp)
// share it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_NONFINITECHECKS_H
#define ATTN_TEST_UNIT_NONFINITECHECKS_H

#include "ProgramOracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace attn::test_util {

/// The 16-bit forward kernels' bounds on the finite cells: relative RMS
/// 5e-3, worst row 2e-2.
inline const ref::ErrorBound kForward16{true, 5e-3, 2e-2, 1e-3};

/// `got` against the oracle's `want` ([..., D]): non-finite exactly where
/// `want` is (the same infinity where it is one), and on the rows (of D)
/// where `want` is finite within `b` (its RMS and worst-row bounds, the
/// rows' mean norm from those rows; else the max relative error). Returns
/// the number of non-finite cells.
inline int64_t expectSameNonFiniteCells(const ref::Tensor &got,
                                        const ref::Tensor &want,
                                        const std::string &what,
                                        const ref::ErrorBound &b = kForward16) {
  EXPECT_EQ(got.shape, want.shape) << what;
  if (got.shape != want.shape)
    return 0;
  const int64_t d = want.shape.back();
  std::vector<double> gotRows, wantRows;
  int64_t nonFinite = 0, wrong = 0;
  for (size_t r = 0; r < got.data.size(); r += d) {
    bool finiteRow = true;
    for (size_t i = r; i < r + d; ++i) {
      double x = got.data[i], y = want.data[i];
      bool ok = std::isfinite(y)
                    ? std::isfinite(x)
                    : !std::isfinite(x) && (!std::isinf(y) || x == y);
      if (!ok && ++wrong <= 5)
        ADD_FAILURE() << what << ": row " << i / d << " column " << i % d
                      << " is " << x << ", the oracle's " << y;
      nonFinite += !std::isfinite(y);
      finiteRow = finiteRow && std::isfinite(y) && std::isfinite(x);
    }
    if (finiteRow) {
      gotRows.insert(gotRows.end(), got.data.begin() + r,
                     got.data.begin() + r + d);
      wantRows.insert(wantRows.end(), want.data.begin() + r,
                      want.data.begin() + r + d);
    }
  }
  EXPECT_EQ(wrong, 0) << what
                      << ": cells non-finite where the oracle's are "
                         "not, or the other way round";
  if (wantRows.empty())
    return nonFinite;
  const int64_t rows = static_cast<int64_t>(wantRows.size()) / d;
  ref::Tensor gotFinite({rows, d}, std::move(gotRows)),
      wantFinite({rows, d}, std::move(wantRows));
  if (!b.rms) {
    EXPECT_LE(ref::relError(gotFinite, wantFinite), b.bound) << what;
    return nonFinite;
  }
  EXPECT_LE(ref::relRmsError(gotFinite, wantFinite), b.bound) << what;
  EXPECT_LE(ref::worstRowRelError(gotFinite, wantFinite, nullptr, b.rowFloor),
            b.rowBound)
      << what;
  return nonFinite;
}

} // namespace attn::test_util

#endif // ATTN_TEST_UNIT_NONFINITECHECKS_H
