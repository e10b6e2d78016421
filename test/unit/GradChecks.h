//===- GradChecks.h - gradients against the oracle's ------------*- C++ -*-===//
//
// The checks the gradient tests share: a host array as an oracle tensor,
// and a 16-bit fused backward's gradient against the fp64 oracle's within
// fla's criteria (GpuTrainingTest.cpp on the GPU, GradGpuFormCpuTest.cpp for
// the same kernels on the CPU).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_GRADCHECKS_H
#define ATTN_TEST_UNIT_GRADCHECKS_H

#include "ProgramOracle.h"
#include "attn/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace attn::test_util {

/// `a` as an oracle tensor (a test failure where it does not convert).
inline ref::Tensor toTensor(const HostArray &a) {
  auto t = ref::fromHost(a);
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : ref::Tensor();
}

/// A 16-bit gradient's bounds: fla's relative RMS criteria (dq, dk, dv
/// 8e-3; dg 2e-2), the worst row within 5e-2 (rows below half the mean row
/// norm judged against half of it: ref::kGradRowFloor says why).
inline const ref::ErrorBound kGrad16{true, 8e-3, 5e-2, ref::kGradRowFloor};
inline const ref::ErrorBound kGateGrad16{true, 2e-2, 5e-2, ref::kGradRowFloor};

/// `got` against the oracle's `want` within `b`: finite everywhere and, for
/// an RMS bound, the relative RMS and the worst row within their bounds,
/// else the max relative error (max |got - want| / max |want|). Prints
/// "[ `tag` ] `what`: relative RMS ..., worst row ..." (or "max relative
/// error ...").
inline void expectClose(const HostArray &got, const ref::Tensor &want,
                        const ref::ErrorBound &b, const std::string &what,
                        const char *tag) {
  ref::Tensor g = toTensor(got);
  ASSERT_EQ(g.shape, want.shape) << what;
  size_t bad = 0;
  for (double x : g.data)
    bad += !std::isfinite(x);
  EXPECT_EQ(bad, 0u) << what << ": non-finite values (unwritten rows?)";
  if (!b.rms) {
    double err = ref::relError(g, want);
    EXPECT_LE(err, b.bound) << what;
    std::printf("[ %s ] %s: max relative error %.3e\n", tag, what.c_str(), err);
    return;
  }
  double err = ref::relRmsError(g, want);
  int64_t row = -1;
  double rowErr = ref::worstRowRelError(g, want, &row, b.rowFloor);
  EXPECT_LE(err, b.bound) << what;
  EXPECT_LE(rowErr, b.rowBound) << what << ": worst row " << row;
  std::printf("[ %s ] %s: relative RMS %.3e, worst row %.3e\n", tag,
              what.c_str(), err, rowErr);
}

} // namespace attn::test_util

#endif // ATTN_TEST_UNIT_GRADCHECKS_H
