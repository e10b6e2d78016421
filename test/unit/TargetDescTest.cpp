//===- TargetDescTest.cpp - the target descriptions -----------------------===//
//
// getTargetDesc (passes/include/attn/Passes/GpuTarget.h): the one table of
// targets that attn-to-block, the GPU lowering, the option checks and the
// runtime read. Each named target's capabilities, the refusals (with the
// messages of checkGpuChip), and that every GPU chip checkGpuChip accepts
// has a description and the other way round.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes/GpuTarget.h"

#include <gtest/gtest.h>

using mlir::attn::getTargetDesc;
using mlir::attn::MmaKind;
using mlir::attn::TargetDesc;

namespace {

const TargetDesc &desc(llvm::StringRef name) {
  auto d = getTargetDesc(name);
  if (!d) {
    ADD_FAILURE() << name.str() << ": " << llvm::toString(d.takeError());
    static const TargetDesc none{};
    return none;
  }
  return *d;
}

std::string refusal(llvm::StringRef name) {
  auto d = getTargetDesc(name);
  if (d)
    return "";
  return llvm::toString(d.takeError());
}

TEST(TargetDesc, Cpu) {
  const TargetDesc &t = desc("cpu");
  EXPECT_EQ(t.name, "cpu");
  EXPECT_FALSE(t.isGpu());
  EXPECT_EQ(t.mma, MmaKind::None);
  EXPECT_EQ(t.sharedBytes, 0);
  EXPECT_FALSE(t.cpAsync);
  EXPECT_FALSE(t.tma);
  EXPECT_FALSE(t.dependentLaunch);
  // attn-to-block's 64 x 64 tiles.
  EXPECT_EQ(t.tileFor(64).blockM, 64);
  EXPECT_EQ(t.tileFor(64).blockN, 64);
}

TEST(TargetDesc, Sm80) {
  const TargetDesc &t = desc("sm_80");
  EXPECT_TRUE(t.isGpu());
  EXPECT_EQ(t.sm, 80u);
  EXPECT_EQ(t.mma, MmaKind::MmaSync);
  EXPECT_EQ(t.warps, 4);
  EXPECT_EQ(t.stages, 2);
  EXPECT_EQ(t.sharedBytes, 163 * 1024);
  EXPECT_TRUE(t.cpAsync);
  EXPECT_FALSE(t.tma);
  EXPECT_FALSE(t.dependentLaunch);
}

TEST(TargetDesc, Sm90AndSm90a) {
  const TargetDesc &s90 = desc("sm_90"), &s90a = desc("sm_90a");
  EXPECT_EQ(s90.mma, MmaKind::MmaSync);
  EXPECT_EQ(s90a.mma, MmaKind::Wgmma);
  for (const TargetDesc *t : {&s90, &s90a}) {
    EXPECT_EQ(t->sm, 90u);
    EXPECT_EQ(t->sharedBytes, 227 * 1024);
    EXPECT_TRUE(t->cpAsync);
    EXPECT_TRUE(t->tma);
    EXPECT_TRUE(t->dependentLaunch);
  }
  // Later arch-specific chips have no wgmma (tcgen05 instead).
  EXPECT_EQ(desc("sm_100a").mma, MmaKind::MmaSync);
  // Consumer parts have less shared memory.
  EXPECT_EQ(desc("sm_86").sharedBytes, 99 * 1024);
  EXPECT_EQ(desc("sm_120").sharedBytes, 99 * 1024);
}

TEST(TargetDesc, TileForHeadDim) {
  const TargetDesc &t = desc("sm_90a");
  for (int64_t d : {64, 128}) {
    EXPECT_EQ(t.tileFor(d).headDim, d);
    EXPECT_EQ(t.tileFor(d).blockM, 64);
    EXPECT_EQ(t.tileFor(d).blockN, 64);
  }
  // Between and beyond the rows: the row of the largest head dim below.
  EXPECT_EQ(t.tileFor(96).headDim, 64);
  EXPECT_EQ(t.tileFor(256).headDim, 128);
  EXPECT_EQ(t.tileFor(16).headDim, 64);
}

TEST(TargetDesc, Refusals) {
  EXPECT_NE(refusal("sm_75").find("not supported"), std::string::npos)
      << refusal("sm_75");
  EXPECT_NE(refusal("compute_90").find("virtual architecture"),
            std::string::npos);
  EXPECT_NE(refusal("sm_99").find("unknown GPU chip 'sm_99'"),
            std::string::npos);
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
  EXPECT_NE(refusal("CPU").find("unknown GPU chip 'CPU'"), std::string::npos);
}

/// One table: a chip passes checkGpuChip exactly when it has a description.
TEST(TargetDesc, ChipCheckAndTableAgree) {
  for (unsigned sm = 50; sm < 130; ++sm)
    for (const char *suffix : {"", "a", "f"}) {
      std::string chip = "sm_" + std::to_string(sm) + suffix;
      bool accepted = mlir::attn::checkGpuChip(chip).empty();
      auto d = getTargetDesc(chip);
      EXPECT_EQ(accepted, static_cast<bool>(d)) << chip;
      if (d) {
        EXPECT_EQ(d->name, chip);
        EXPECT_EQ(d->sm, sm) << chip;
        EXPECT_GT(d->sharedBytes, 0) << chip;
      } else {
        llvm::consumeError(d.takeError());
      }
    }
}

} // namespace
