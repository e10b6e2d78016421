//===- FakePtxas.h - a toolkit directory with a stand-in ptxas --*- C++ -*-===//
//
// The register-A wgmma forms depend on ptxas's release
// (checkPtxasForRegisterWgmma); tests stand a script in for it that prints
// the release asked for, and set the variables that choose it for a scope.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_FAKEPTXAS_H
#define ATTN_TEST_UNIT_FAKEPTXAS_H

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace attn::test {

/// A toolkit directory whose bin/ptxas prints `versionLine` (with a unique
/// name: the check caches its answer per ptxas path).
inline std::string fakeToolkit(const std::string &versionLine) {
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

/// Sets (or, with nullopt, unsets) one environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved)
      ::setenv(name, saved->c_str(), 1);
    else
      ::unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> saved;
};

} // namespace attn::test

#endif // ATTN_TEST_UNIT_FAKEPTXAS_H
