//===- Memory.cpp - size arithmetic and memory estimates ------------------===//

#include "attn/Memory.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <sys/resource.h>

namespace attn {

std::optional<uint64_t> checkedBytes(llvm::ArrayRef<int64_t> shape,
                                     uint64_t elemSize) {
  uint64_t n = elemSize;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > kMaxArrayBytes / static_cast<uint64_t>(d))
      return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  if (n > kMaxArrayBytes)
    return std::nullopt;
  return n;
}

uint64_t addBytes(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  if (u == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.1f %s", v, units[u]);
  return s;
}

namespace {
/// A "Key:   123 kB" field of a /proc file, in bytes.
std::optional<uint64_t> procField(llvm::StringRef file, llvm::StringRef key) {
  auto buf = llvm::MemoryBuffer::getFileAsStream(file);
  if (!buf)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front(key) || !line.consume_front(":"))
      continue;
    line = line.trim();
    uint64_t kb = 0;
    if (line.consumeInteger(10, kb))
      return std::nullopt;
    return kb * 1024;
  }
  return std::nullopt;
}
} // namespace

uint64_t allocatableBytes() {
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    uint64_t used = procField("/proc/self/status", "VmSize").value_or(0);
    limit = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
  }
  if (auto avail = procField("/proc/meminfo", "MemAvailable")) {
    uint64_t swap = procField("/proc/meminfo", "SwapFree").value_or(0);
    limit = std::min(limit, addBytes(*avail, swap));
  }
  return limit;
}

llvm::Error checkAllocatable(uint64_t bytes, llvm::StringRef what) {
  uint64_t limit = allocatableBytes();
  if (bytes <= limit)
    return llvm::Error::success();
  return llvm::createStringError(
      what.str() + " needs about " + formatBytes(bytes) + " but only " +
      formatBytes(limit) +
      " can be allocated (the smaller of the address space left under "
      "ulimit -v and MemAvailable plus free swap)");
}

} // namespace attn
