//===- DiskCache.cpp - compiled GPU images on disk ------------------------===//

#include "DiskCache.h"

#include "attn/Memory.h"
#include "attn/Toolkit.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace attn::detail {

namespace {

/// Bumped whenever generated code changes meaning, to invalidate caches.
constexpr const char *kCodegenVersion = "attn-gpu-12";
constexpr char kMagic[8] = {'A', 'T', 'T', 'N', 'C', 'C', '0', '1'};
/// Larger entries are not images attn wrote (cubins are megabytes).
constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

struct Header {
  char magic[8];
  uint64_t size;
  uint64_t hash;
};

std::string entryPath(llvm::StringRef key) {
  std::string dir = cacheDirectory();
  if (dir.empty())
    return "";
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path,
                          llvm::utohexstr(llvm::xxh3_64bits(key)) + ".cubin");
  return std::string(path);
}
} // namespace

std::string gpuImageKey(llvm::StringRef chip, bool cubin,
                        llvm::StringRef toolkit, llvm::StringRef module) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << kCodegenVersion << '\0' << chip << '\0' << (cubin ? "cubin" : "ptx")
     << '\0';
  // A cubin is as right as the ptxas that made it (13.0's register-A wgmma
  // is wrong): another toolkit under CUDA_HOME compiles anew.
  if (cubin)
    os << attn::ptxasVersion(toolkit).text << '\0';
  os << module;
  return key;
}

std::string cacheDirectory() {
  if (const char *env = std::getenv("ATTN_CACHE_DIR")) {
    if (llvm::StringRef(env) == "off")
      return "";
    if (*env)
      return env;
  }
  llvm::SmallString<256> dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    dir = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home) {
    dir = home;
    llvm::sys::path::append(dir, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(dir, "attn");
  return std::string(dir);
}

std::optional<std::vector<char>> cacheLoad(llvm::StringRef key) {
  std::string path = entryPath(key);
  if (path.empty())
    return std::nullopt;
  // Anything but a regular file of a plausible size is a miss: a symlink
  // to /dev/zero aborted reading it whole, a FIFO blocked the open.
  llvm::Expected<RegularFile> file = RegularFile::open(path);
  if (!file) {
    llvm::consumeError(file.takeError());
    return std::nullopt;
  }
  if (file->size() > kMaxEntryBytes)
    return std::nullopt;
  std::string contents;
  if (file->readMore(contents, file->size()))
    return std::nullopt;
  llvm::StringRef data = contents;
  Header h;
  if (data.size() < sizeof(h))
    return std::nullopt;
  std::memcpy(&h, data.data(), sizeof(h));
  llvm::StringRef payload = data.drop_front(sizeof(h));
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 ||
      h.size != payload.size() || h.hash != llvm::xxh3_64bits(payload))
    return std::nullopt; // corrupt or foreign: the caller rebuilds it
  return std::vector<char>(payload.begin(), payload.end());
}

void cacheStore(llvm::StringRef key, llvm::ArrayRef<char> payload) {
  std::string path = entryPath(key);
  if (path.empty())
    return;
  if (llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)))
    return;
  Header h;
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.size = payload.size();
  h.hash = llvm::xxh3_64bits(llvm::StringRef(payload.data(), payload.size()));
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return;
    os.write(reinterpret_cast<const char *>(&h), sizeof(h));
    os.write(payload.data(), payload.size());
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return;
    }
  }
  if (llvm::sys::fs::rename(tmp, path))
    llvm::sys::fs::remove(tmp);
}

} // namespace attn::detail
