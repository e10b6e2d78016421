//===- GpuOptionsTest.cpp - CompileOptions::gpu resolved for a device -----===//
//
// resolveGpuOptions on this machine, with no GPU: the device is named by its
// compute capability. PaTH's attention kernel takes the wgmma form unasked
// only on a wgmma chip whose toolkit's ptxas is 13.3 or newer (stand-in
// ptxas scripts, FakePtxas.h), and so does the chunk kernel; an explicit
// choice, in the options or the environment, wins either way.
//
//===----------------------------------------------------------------------===//

#include "GpuOptions.h"
#include "FakePtxas.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

using attn::test::ScopedEnv;

/// The stand-in toolkits, made once (the ptxas check caches per path).
struct Toolkits {
  std::string fixed =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.5, V13.5.37");
  std::string old =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.0, V13.0.88");
  ~Toolkits() {
    llvm::sys::fs::remove_directories(fixed);
    llvm::sys::fs::remove_directories(old);
  }
};
const Toolkits &toolkits() {
  static Toolkits t;
  return t;
}

/// pathAttentionWgmma as resolved for an sm_`major``minor` device with
/// CUDA_HOME = `toolkit` and no ATTN_GPU_* variable but those given.
bool attentionWgmma(const attn::GpuKernelOptions &o, int major, int minor,
                    const std::string &toolkit,
                    std::optional<std::string> chipEnv = std::nullopt,
                    std::optional<std::string> wgmmaEnv = std::nullopt) {
  ScopedEnv home("CUDA_HOME", toolkit);
  // Only CUDA_HOME's ptxas: not one pip installed on this machine.
  ScopedEnv extra("ATTN_PTXAS", "none");
  ScopedEnv chip("ATTN_GPU_CHIP", chipEnv);
  ScopedEnv wgmma("ATTN_GPU_PATH_ATTENTION_WGMMA", wgmmaEnv);
  auto r = attn::detail::resolveGpuOptions(o, major, minor);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return false;
  }
  // The chunk kernel's default is the attention kernel's.
  if (o.pathChunkWgmma < 0 && o.pathAttentionWgmma < 0 && !wgmmaEnv)
    EXPECT_EQ(r->pipeline.pathChunkWgmma, r->pipeline.pathAttentionWgmma);
  return r->pipeline.pathAttentionWgmma;
}

TEST(GpuOptions, AnExplicitChunkWgmmaChoiceWins) {
  attn::GpuKernelOptions on, off;
  on.pathChunkWgmma = 1;
  off.pathChunkWgmma = 0;
  for (const std::string &toolkit : {toolkits().fixed, toolkits().old}) {
    ScopedEnv home("CUDA_HOME", toolkit);
    auto r = attn::detail::resolveGpuOptions(on, 9, 0);
    ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
    EXPECT_TRUE(r->pipeline.pathChunkWgmma) << toolkit;
    auto s = attn::detail::resolveGpuOptions(off, 9, 0);
    ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
    EXPECT_FALSE(s->pipeline.pathChunkWgmma) << toolkit;
    ScopedEnv env("ATTN_GPU_PATH_CHUNK_WGMMA", "0");
    auto e = attn::detail::resolveGpuOptions(attn::GpuKernelOptions(), 9, 0);
    ASSERT_TRUE(static_cast<bool>(e)) << llvm::toString(e.takeError());
    EXPECT_FALSE(e->pipeline.pathChunkWgmma) << toolkit;
  }
}

TEST(GpuOptions, AttentionWgmmaByDefaultOnlyWithAFixedPtxasOnAWgmmaChip) {
  attn::GpuKernelOptions unset;
  EXPECT_TRUE(attentionWgmma(unset, 9, 0, toolkits().fixed));
  EXPECT_FALSE(attentionWgmma(unset, 9, 0, toolkits().old))
      << "ptxas 13.0 miscompiles the form";
  EXPECT_FALSE(attentionWgmma(unset, 9, 0, "/nonexistent-attn-toolkit"))
      << "no ptxas: the driver's PTX compiler is as old as the driver";
  EXPECT_FALSE(attentionWgmma(unset, 8, 0, toolkits().fixed))
      << "sm_80 has no wgmma";
  EXPECT_FALSE(attentionWgmma(unset, 9, 0, toolkits().fixed, "sm_90"))
      << "ATTN_GPU_CHIP=sm_90 asks for the mma.sync kernels";
  EXPECT_TRUE(attentionWgmma(unset, 8, 0, toolkits().fixed, "sm_90a"));
}

// CUDA 13.0 with a newer ptxas beside it (ATTN_PTXAS, or pip's
// nvidia-cuda-nvcc): the runtime compiles with that one, so the wgmma forms
// are the default again.
TEST(GpuOptions, AttentionWgmmaByDefaultWithANewerPtxasBesideTheToolkit) {
  llvm::SmallString<128> cache;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-cache", cache));
  ScopedEnv dir("ATTN_CACHE_DIR", std::string(cache));
  ScopedEnv home("CUDA_HOME", toolkits().old);
  ScopedEnv extra("ATTN_PTXAS", toolkits().fixed + "/bin/ptxas");
  auto r = attn::detail::resolveGpuOptions(attn::GpuKernelOptions(), 9, 0);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->pipeline.pathAttentionWgmma);
  EXPECT_TRUE(r->pipeline.pathChunkWgmma);
  ASSERT_TRUE(r->pipeline.ptxas.release.has_value());
  EXPECT_GE(*r->pipeline.ptxas.release, std::pair(13, 3));
  EXPECT_TRUE(llvm::StringRef(r->pipeline.ptxas.where).starts_with(cache))
      << r->pipeline.ptxas.where;
  llvm::sys::fs::remove_directories(cache);
}

TEST(GpuOptions, AnExplicitAttentionWgmmaChoiceWins) {
  attn::GpuKernelOptions off, on;
  off.pathAttentionWgmma = 0;
  on.pathAttentionWgmma = 1;
  EXPECT_FALSE(attentionWgmma(off, 9, 0, toolkits().fixed));
  EXPECT_FALSE(attentionWgmma(attn::GpuKernelOptions(), 9, 0, toolkits().fixed,
                              std::nullopt, "0"));
  EXPECT_FALSE(attentionWgmma(off, 9, 0, toolkits().fixed, std::nullopt, "1"))
      << "CompileOptions::gpu wins over the environment";
  // Asked for with an old ptxas it resolves on; compiling then refuses it
  // naming the ptxas (CudaKernel.cpp, GpuPath's _attention_wgmma cases).
  EXPECT_TRUE(attentionWgmma(on, 9, 0, toolkits().old));
  EXPECT_TRUE(attentionWgmma(attn::GpuKernelOptions(), 9, 0, toolkits().old,
                             std::nullopt, "1"));
}

TEST(GpuOptions, AttentionWgmmaOnAChipWithoutWgmmaIsAnErrorNamingIt) {
  attn::GpuKernelOptions on;
  on.pathAttentionWgmma = 1;
  ScopedEnv home("CUDA_HOME", toolkits().fixed);
  auto r = attn::detail::resolveGpuOptions(on, 8, 0);
  ASSERT_FALSE(r);
  std::string why = llvm::toString(r.takeError());
  EXPECT_NE(why.find("path-attention-wgmma needs a wgmma chip (sm_90a), got "
                     "sm_80"),
            std::string::npos)
      << why;
}

} // namespace
