//===- DiskCacheTest.cpp - the on-disk cache of compiled GPU images -------===//
//
// Runs everywhere (no GPU): entries round-trip, a corrupted or truncated
// entry is refused (the runtime then rebuilds and rewrites it),
// ATTN_CACHE_DIR=off disables the cache, and a cubin's key names the ptxas
// that made it (stand-in ptxas scripts of two releases).
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/DiskCache.h"
#include "FakePtxas.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

using attn::detail::cacheDirectory;
using attn::detail::cacheLoad;
using attn::detail::cacheStore;

class DiskCache : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-cache", dir));
    root = std::string(dir);
    ::setenv("ATTN_CACHE_DIR", root.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("ATTN_CACHE_DIR");
    llvm::sys::fs::remove_directories(root);
  }
  /// The one file the cache holds.
  std::string entryFile() {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec;
         it.increment(ec))
      return it->path();
    return "";
  }
  std::string root;
};

TEST_F(DiskCache, RoundTrips) {
  EXPECT_EQ(cacheDirectory(), root);
  std::vector<char> image = {'\x7f', 'E', 'L', 'F', '\0', '\1', '\2'};
  EXPECT_FALSE(cacheLoad("key-a").has_value());
  cacheStore("key-a", image);
  auto got = cacheLoad("key-a");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, image);
  EXPECT_FALSE(cacheLoad("key-b").has_value());
}

TEST_F(DiskCache, CorruptEntryIsRefusedAndRebuilt) {
  std::vector<char> image(1000);
  for (size_t i = 0; i < image.size(); ++i)
    image[i] = static_cast<char>(i * 7);
  cacheStore("key", image);
  std::string file = entryFile();
  ASSERT_FALSE(file.empty());
  {
    // Flip one payload byte in place.
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('\x55');
  }
  EXPECT_FALSE(cacheLoad("key").has_value());
  cacheStore("key", image); // what the runtime does after a rebuild
  auto got = cacheLoad("key");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, image);
  // A truncated file is refused too.
  {
    std::ifstream in(file, std::ios::binary);
    std::string head(20, '\0');
    in.read(head.data(), head.size());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(head.data(), head.size());
  }
  EXPECT_FALSE(cacheLoad("key").has_value());
}

// An entry that is not a regular file is a miss, returned at once: a
// symlink to /dev/zero aborted the process ("out of memory" reading it
// whole), a FIFO blocked the open forever. A rebuilt entry replaces it.
TEST_F(DiskCache, NonRegularEntryIsAMiss) {
  std::vector<char> image = {'\x7f', 'E', 'L', 'F'};
  cacheStore("key", image);
  std::string file = entryFile();
  ASSERT_FALSE(file.empty());
  ASSERT_FALSE(llvm::sys::fs::remove(file));
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/zero", file));
  EXPECT_FALSE(cacheLoad("key").has_value());
  ASSERT_FALSE(llvm::sys::fs::remove(file));
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  EXPECT_FALSE(cacheLoad("key").has_value());
  ASSERT_EQ(::unlink(file.c_str()), 0); // fs::remove refuses a FIFO
  ASSERT_FALSE(llvm::sys::fs::create_directory(file));
  EXPECT_FALSE(cacheLoad("key").has_value());
  ASSERT_FALSE(llvm::sys::fs::remove(file));
  cacheStore("key", image);
  auto got = cacheLoad("key");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, image);
}

TEST_F(DiskCache, OffDisablesIt) {
  ::setenv("ATTN_CACHE_DIR", "off", 1);
  EXPECT_EQ(cacheDirectory(), "");
  cacheStore("key", std::vector<char>{'a'});
  EXPECT_FALSE(cacheLoad("key").has_value());
}

TEST(GpuImageKey, CubinsOfAnotherPtxasAreAnotherEntry) {
  std::string old =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.0, V13.0.88");
  std::string fixed =
      attn::test::fakeToolkit("Cuda compilation tools, release 13.5, V13.5.37");
  using attn::detail::gpuImageKey;
  std::string a = gpuImageKey("sm_90a", true, old, "module {}");
  EXPECT_NE(a.find("release 13.0, V13.0.88"), std::string::npos) << a;
  EXPECT_NE(a, gpuImageKey("sm_90a", true, fixed, "module {}"));
  // Deterministic, and each of chip, format and IR still counts.
  EXPECT_EQ(a, gpuImageKey("sm_90a", true, old, "module {}"));
  EXPECT_NE(a, gpuImageKey("sm_90", true, old, "module {}"));
  EXPECT_NE(a, gpuImageKey("sm_90a", true, old, "module {} "));
  // PTX is compiled by the driver at load, not by ptxas: one entry.
  EXPECT_EQ(gpuImageKey("sm_90a", false, old, "module {}"),
            gpuImageKey("sm_90a", false, fixed, "module {}"));
  EXPECT_NE(gpuImageKey("sm_90a", false, old, "module {}"), a);
  llvm::sys::fs::remove_directories(old);
  llvm::sys::fs::remove_directories(fixed);
}

} // namespace
