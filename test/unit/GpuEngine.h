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
#include <vector>

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

/// The chips a GPU form is run for: on sm_90 devices both the mma.sync
/// target (sm_90) and sm_90a (whose PaTH and MTA forms reuse the mma.sync
/// kernels, its wgmma chip in the launch plan); elsewhere the default.
inline std::vector<std::string> blockChipsOf(Engine &engine) {
  if (engine.gpuArch() == "sm_90")
    return {"sm_90", "sm_90a"};
  return {""};
}

/// `src` compiled for CUDA on `chip` (the default chip when empty; PaTH's
/// transport `pathTransport`, the default when empty; PaTH's
/// path-chunk-wgmma `pathChunkWgmma` and path-attention-wgmma
/// `pathAttentionWgmma`, -1 the default); the remark must
/// say it runs the block program's launch plan (`what` names the program
/// in the failure).
inline std::shared_ptr<Kernel>
compileBlockPlan(Engine &engine, const std::string &src,
                 const std::string &chip, const std::string &what,
                 const std::string &pathTransport = "", int pathChunkWgmma = -1,
                 int pathAttentionWgmma = -1) {
  CompileOptions opts;
  opts.gpu.chip = chip;
  opts.gpu.pathTransport = pathTransport;
  opts.gpu.pathChunkWgmma = pathChunkWgmma;
  opts.gpu.pathAttentionWgmma = pathAttentionWgmma;
  auto kernel = engine.compile(src, opts);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\n" << src;
    return nullptr;
  }
  EXPECT_EQ((*kernel)->device(), Device::CUDA);
  bool planned = false;
  for (const std::string &r : (*kernel)->remarks())
    planned |= llvm::StringRef(r).contains("the block program's launch plan");
  EXPECT_TRUE(planned) << what << " did not take the block program's plan\n"
                       << src;
  return *kernel;
}

} // namespace attn::gpu_test

#endif // ATTN_TEST_UNIT_GPUENGINE_H
