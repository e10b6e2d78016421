//===- PtxasVersionTest.cpp - which ptxas may assemble register-A wgmma ---===//
//
// probePtxas reads `ptxas --version`'s release and checkPtxasForRegisterWgmma
// compares it with 13.3 as numbers (13.10 is newer than 13.3, 12.9 older):
// stand-in ptxas scripts in a temporary toolkit directory, one per release.
// chooseToolkit takes a newer ptxas (ATTN_PTXAS, pip's nvidia-cuda-nvcc)
// where the toolkit's is older.
//
//===----------------------------------------------------------------------===//

#include "FakePtxas.h"
#include "attn/Toolkit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

namespace {

using attn::test::ScopedEnv;

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

std::string ptxasOf(const std::string &toolkit) {
  llvm::SmallString<128> p(toolkit);
  llvm::sys::path::append(p, "bin", "ptxas");
  return p.str().str();
}

/// An old toolkit (13.0) with an nvvm/ directory, and a work directory.
struct OldToolkit {
  std::string base = attn::test::fakeToolkit(
                  "Cuda compilation tools, release 13.0, V13.0.88"),
              work;
  OldToolkit() {
    llvm::SmallString<128> nvvm(base), w;
    llvm::sys::path::append(nvvm, "nvvm");
    EXPECT_FALSE(llvm::sys::fs::create_directories(nvvm));
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-work", w));
    work = w.str().str();
  }
  ~OldToolkit() {
    llvm::sys::fs::remove_directories(base);
    llvm::sys::fs::remove_directories(work);
  }
};

TEST(ChooseToolkit, ANewEnoughToolkitIsKept) {
  std::string dir =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.5, V13.5.37");
  attn::ChosenToolkit c;
  {
    ScopedEnv extra("ATTN_PTXAS", "/nonexistent/bin/ptxas");
    c = attn::chooseToolkit(dir, "/nonexistent", "");
  }
  EXPECT_EQ(c.path, dir);
  EXPECT_EQ(c.note, "");
  llvm::sys::fs::remove_directories(dir);
}

// ATTN_PTXAS names a newer ptxas: a toolkit of it and the old one's nvvm/.
TEST(ChooseToolkit, NewerPtxasFromTheEnvironment) {
  OldToolkit old;
  std::string fixed =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.5, V13.5.37");
  ScopedEnv extra("ATTN_PTXAS", ptxasOf(fixed));
  attn::ChosenToolkit c = attn::chooseToolkit(old.base, old.work, "");
  EXPECT_NE(c.path, old.base);
  EXPECT_EQ(llvm::StringRef(c.path).starts_with(old.work), true) << c.path;
  auto facts = attn::probePtxas(c.path);
  ASSERT_TRUE(facts.release.has_value()) << facts.where;
  EXPECT_EQ(*facts.release, std::pair(13, 5));
  llvm::SmallString<128> nvvm(c.path);
  llvm::sys::path::append(nvvm, "nvvm");
  EXPECT_TRUE(llvm::sys::fs::is_directory(nvvm));
  EXPECT_NE(c.note.find("ptxas 13.5 from " + ptxasOf(fixed)), std::string::npos)
      << c.note;
  EXPECT_NE(c.note.find("'s is 13.0"), std::string::npos) << c.note;
  // Asked again, the same directory is reused.
  EXPECT_EQ(attn::chooseToolkit(old.base, old.work, "").path, c.path);
  llvm::sys::fs::remove_directories(fixed);
}

// pip's nvidia-cuda-nvcc: nvidia/cu13/bin/ptxas in the site-packages of
// the python asked (here python3 with a stand-in site-packages on
// PYTHONPATH, so the lookup script itself runs).
TEST(ChooseToolkit, NewerPtxasFromPip) {
  OldToolkit old;
  llvm::SmallString<128> site;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-site", site));
  std::string fixed =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.4, V13.4.1");
  llvm::SmallString<128> cu13(site);
  llvm::sys::path::append(cu13, "nvidia", "cu13");
  ASSERT_FALSE(
      llvm::sys::fs::create_directories(llvm::sys::path::parent_path(cu13)));
  ASSERT_FALSE(llvm::sys::fs::create_link(fixed, cu13));
  ScopedEnv extra("ATTN_PTXAS", std::nullopt);
  std::string found;
  attn::ChosenToolkit c;
  {
    ScopedEnv path("PYTHONPATH", std::string(site));
    found = attn::findExtraPtxas("python3");
    c = attn::chooseToolkit(old.base, old.work, "python3");
  }
  EXPECT_EQ(llvm::StringRef(found).ends_with("nvidia/cu13/bin/ptxas"), true)
      << found;
  auto facts = attn::probePtxas(c.path);
  ASSERT_TRUE(facts.release.has_value()) << facts.where << " " << c.note;
  EXPECT_EQ(*facts.release, std::pair(13, 4));
  llvm::sys::fs::remove_directories(fixed);
  llvm::sys::fs::remove_directories(site);
}

// An extra ptxas that is no newer, or none: the toolkit stays, and says why.
TEST(ChooseToolkit, NoNewerPtxasKeepsTheToolkit) {
  OldToolkit old;
  std::string same =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.2, V13.2.9");
  attn::ChosenToolkit c;
  {
    ScopedEnv extra("ATTN_PTXAS", ptxasOf(same));
    c = attn::chooseToolkit(old.base, old.work, "");
  }
  EXPECT_EQ(c.path, old.base);
  EXPECT_NE(c.note.find("is no newer"), std::string::npos) << c.note;
  {
    ScopedEnv extra("ATTN_PTXAS", "/nonexistent-attn/bin/ptxas");
    c = attn::chooseToolkit(old.base, old.work, "");
  }
  EXPECT_EQ(c.path, old.base);
  EXPECT_NE(c.note.find("does not exist"), std::string::npos) << c.note;
  {
    ScopedEnv extra("ATTN_PTXAS", std::nullopt);
    c = attn::chooseToolkit(old.base, old.work, "/nonexistent-python");
  }
  EXPECT_EQ(c.path, old.base);
  EXPECT_EQ(c.note, "");
  ScopedEnv none("ATTN_PTXAS", "none");
  EXPECT_EQ(attn::findExtraPtxas("python3"), "") << "none looks nowhere";
  llvm::sys::fs::remove_directories(same);
}

} // namespace
