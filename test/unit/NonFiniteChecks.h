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

namespace attn::test_util {

/// `got` against the oracle's `want` ([B, H, T, D]): non-finite exactly
/// where `want` is (the same infinity where it is one), and on the other
/// cells within the 16-bit kernels' bounds (relative RMS 5e-3, worst row
/// 2e-2). Returns the number of non-finite cells.
inline int64_t expectSameNonFiniteCells(const ref::Tensor &got,
                                        const ref::Tensor &want,
                                        const std::string &what) {
  EXPECT_EQ(got.shape, want.shape) << what;
  if (got.shape != want.shape)
    return 0;
  const int64_t d = want.shape.back();
  ref::Tensor gotFinite = got, wantFinite = want;
  int64_t nonFinite = 0, wrong = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    double x = got.data[i], y = want.data[i];
    bool ok = std::isfinite(y)
                  ? std::isfinite(x)
                  : !std::isfinite(x) && (!std::isinf(y) || x == y);
    if (!ok && ++wrong <= 5)
      ADD_FAILURE() << what << ": row " << i / d << " column " << i % d
                    << " is " << x << ", the oracle's " << y;
    if (!std::isfinite(y)) {
      ++nonFinite;
      gotFinite.data[i] = wantFinite.data[i] = 0.0;
    } else if (!std::isfinite(x)) {
      gotFinite.data[i] = 0.0;
    }
  }
  EXPECT_EQ(wrong, 0) << what
                      << ": cells non-finite where the oracle's are "
                         "not, or the other way round";
  EXPECT_LE(ref::relRmsError(gotFinite, wantFinite), 5e-3) << what;
  EXPECT_LE(ref::worstRowRelError(gotFinite, wantFinite), 2e-2) << what;
  return nonFinite;
}

} // namespace attn::test_util

#endif // ATTN_TEST_UNIT_NONFINITECHECKS_H
