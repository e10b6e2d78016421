//===- PtxasVersionTest.cpp - which ptxas may assemble register-A wgmma ---===//
//
// probePtxas reads `ptxas --version`'s release and checkPtxasForRegisterWgmma
// compares it with 13.3 as numbers (13.10 is newer than 13.3, 12.9 older):
// stand-in ptxas scripts in a temporary toolkit directory, one per release.
//
//===----------------------------------------------------------------------===//

#include "FakePtxas.h"
#include "attn/Toolkit.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

namespace {

std::string check(const std::string &versionLine) {
  std::string dir = attn::test::fakeToolkit(versionLine);
  std::string why =
      mlir::attn::checkPtxasForRegisterWgmma(attn::probePtxas(dir), "the form");
  llvm::sys::fs::remove_directories(dir);
  return why;
}

TEST(PtxasVersion, ReleasesFromThirteenThreeOnAssembleRegisterWgmma) {
  EXPECT_EQ(check("Cuda compilation tools, release 13.3, V13.3.1"), "");
  EXPECT_EQ(check("Cuda compilation tools, release 13.5, V13.5.37"), "");
  EXPECT_EQ(check("Cuda compilation tools, release 13.10, V13.10.0"), "");
  EXPECT_EQ(check("Cuda compilation tools, release 14.0, V14.0.2"), "");
}

TEST(PtxasVersion, OlderReleasesAreRefusedByName) {
  for (const char *line : {"Cuda compilation tools, release 13.0, V13.0.88",
                           "Cuda compilation tools, release 13.2, V13.2.9",
                           "Cuda compilation tools, release 12.9, V12.9.86"}) {
    std::string why = check(line);
    EXPECT_NE(why.find("the form needs ptxas 13.3 or newer, found"),
              std::string::npos)
        << line << ": " << why;
  }
}

TEST(PtxasVersion, NoPtxasOrNoReleaseIsRefused) {
  std::string none = mlir::attn::checkPtxasForRegisterWgmma(
      attn::probePtxas("/nonexistent-attn-toolkit"), "the form");
  EXPECT_NE(none.find("(no ptxas at /nonexistent-attn-toolkit/bin/ptxas)"),
            std::string::npos)
      << none;
  std::string garbled = check("ptxas version unknown");
  EXPECT_NE(garbled.find("--version names no release"), std::string::npos)
      << garbled;
}

// The pass library judges the facts it is given; it runs nothing itself.
TEST(PtxasVersion, FactsAloneDecide) {
  using mlir::attn::PtxasFacts;
  EXPECT_EQ(mlir::attn::checkPtxasForRegisterWgmma(
                PtxasFacts{std::pair(13, 3), "/t/bin/ptxas"}, "f"),
            "");
  std::string old = mlir::attn::checkPtxasForRegisterWgmma(
      PtxasFacts{std::pair(12, 9), "/t/bin/ptxas"}, "f");
  EXPECT_NE(old.find("found 12.9 at /t/bin/ptxas"), std::string::npos) << old;
  std::string unknown =
      mlir::attn::checkPtxasForRegisterWgmma(PtxasFacts{}, "f");
  EXPECT_NE(unknown.find("f needs ptxas 13.3 or newer ("), std::string::npos)
      << unknown;
}

} // namespace
