//===- Sweep.h - sampling the cases of the long test sweeps -----*- C++ -*-===//
//
// The execution tests sweep programs × shapes × types, each case a compile,
// a run and an fp64 oracle. Under AddressSanitizer and UBSan every case costs
// several times more, and the sanitized run looks for memory errors in
// code that a sample of the cases reaches as well as all of them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_SWEEP_H
#define ATTN_TEST_UNIT_SWEEP_H

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace attn::test {

/// Whether the next case of the current test's sweep runs. Without
/// ATTN_TEST_SAMPLE every case runs. ATTN_TEST_SAMPLE=k (k >= 2, set by
/// scripts/test.sh --sanitize) runs each test's first case and one case in k
/// after it, from an offset drawn per process (printed; replay it with
/// ATTN_TEST_SAMPLE_OFFSET), so that successive runs cover different cases.
inline bool sweepCase() {
  static const unsigned every = [] {
    const char *s = std::getenv("ATTN_TEST_SAMPLE");
    long k = s ? std::strtol(s, nullptr, 10) : 1;
    return k >= 2 ? static_cast<unsigned>(k) : 1u;
  }();
  if (every == 1)
    return true;
  static const unsigned offset = [] {
    const char *s = std::getenv("ATTN_TEST_SAMPLE_OFFSET");
    unsigned o =
        s ? static_cast<unsigned>(std::strtoul(s, nullptr, 10))
          : static_cast<unsigned>(
                std::chrono::steady_clock::now().time_since_epoch().count());
    o %= every;
    std::printf("[ sweep ] 1 case in %u after the first, offset %u "
                "(ATTN_TEST_SAMPLE_OFFSET=%u replays it)\n",
                every, o, o);
    return o;
  }();
  // Counted per test, so that every test runs its first case.
  static std::string test;
  static unsigned index = 0;
  const ::testing::TestInfo *info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      info ? std::string(info->test_suite_name()) + "." + info->name()
           : std::string();
  if (name != test) {
    test = name;
    index = 0;
  }
  unsigned i = index++;
  return i == 0 || (i + offset) % every == 0;
}

} // namespace attn::test

#endif // ATTN_TEST_UNIT_SWEEP_H
