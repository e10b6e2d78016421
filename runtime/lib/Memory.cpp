//===- Memory.cpp - size arithmetic and memory estimates ------------------===//

#include "attn/Memory.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <fcntl.h>
#include <limits>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

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

llvm::Expected<RegularFile> RegularFile::open(llvm::StringRef path) {
  std::string p = path.str();
  int fd;
  do
    fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    std::error_code ec(errno, std::generic_category());
    return llvm::createStringError(ec,
                                   p + ": cannot read file: " + ec.message());
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    const char *what = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not stat-able";
    return llvm::createStringError(p + ": not a regular file (" + what + ")");
  }
  return RegularFile(fd, uint64_t(st.st_size));
}

RegularFile::~RegularFile() {
  if (fd >= 0)
    ::close(fd);
}

std::error_code RegularFile::readMore(std::string &buf, uint64_t n) {
  size_t start = buf.size();
  buf.resize(start + n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, &buf[start + got], n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      buf.resize(start + got);
      return std::error_code(errno, std::generic_category());
    }
    if (r == 0)
      break;
    got += size_t(r);
  }
  buf.resize(start + got);
  return {};
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
