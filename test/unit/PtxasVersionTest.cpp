//===- PtxasVersionTest.cpp - which ptxas may assemble register-A wgmma ---===//
//
// checkPtxasForRegisterWgmma reads `ptxas --version`'s release and compares
// it with 13.3 as numbers (13.10 is newer than 13.3, 12.9 older): stand-in
// ptxas scripts in a temporary toolkit directory, one per release.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace {

/// A toolkit directory whose bin/ptxas prints `versionLine` (with a unique
/// name: the check caches its answer per ptxas path).
std::string fakeToolkit(const std::string &versionLine) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-ptxas", dir));
  llvm::SmallString<128> bin(dir);
  llvm::sys::path::append(bin, "bin");
  EXPECT_FALSE(llvm::sys::fs::create_directories(bin));
  llvm::SmallString<128> ptxas(bin);
  llvm::sys::path::append(ptxas, "ptxas");
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(ptxas, ec);
    EXPECT_FALSE(ec) << ec.message();
    os << "#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n"
       << "echo '" << versionLine << "'\n";
  }
  EXPECT_FALSE(llvm::sys::fs::setPermissions(
      ptxas, llvm::sys::fs::perms::all_read | llvm::sys::fs::perms::owner_exe |
                 llvm::sys::fs::perms::owner_write));
  return dir.str().str();
}

std::string check(const std::string &versionLine) {
  std::string dir = fakeToolkit(versionLine);
  std::string why = mlir::attn::checkPtxasForRegisterWgmma(dir, "the form");
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
      "/nonexistent-attn-toolkit", "the form");
  EXPECT_NE(none.find("(no ptxas at /nonexistent-attn-toolkit/bin/ptxas)"),
            std::string::npos)
      << none;
  std::string garbled = check("ptxas version unknown");
  EXPECT_NE(garbled.find("--version names no release"), std::string::npos)
      << garbled;
}

} // namespace
