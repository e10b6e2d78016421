//===- GpuEngine.h - the GPU tests' one CUDA engine -------------*- C++ -*-===//
//
// Every GPU test of attn-gpu-tests runs on this engine (one CUDA context and
// one kernel cache for the binary), destroyed when the tests end: its cached
// kernels free their device scratch then, not at exit after the driver may
// be gone, so compute-sanitizer's leak check finds nothing.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_GPUENGINE_H
#define ATTN_TEST_UNIT_GPUENGINE_H

#include "attn/Runtime.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace attn::gpu_test {

inline std::unique_ptr<Engine> &engineSlot() {
  static std::unique_ptr<Engine> engine;
  return engine;
}

struct ReleaseEngine : ::testing::Environment {
  void TearDown() override { engineSlot().reset(); }
};
[[maybe_unused]] inline ::testing::Environment *const releaseEngine =
    ::testing::AddGlobalTestEnvironment(new ReleaseEngine);

/// The CUDA engine, or null with `why` saying why there is none.
inline Engine *gpuEngine(std::string &why) {
  std::unique_ptr<Engine> &engine = engineSlot();
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    auto e = Engine::create("cuda");
    if (e)
      engine = std::move(*e);
    else
      error = llvm::toString(e.takeError());
  }
  why = error;
  return engine.get();
}

} // namespace attn::gpu_test

#endif // ATTN_TEST_UNIT_GPUENGINE_H
