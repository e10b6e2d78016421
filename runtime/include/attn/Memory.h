//===- Memory.h - size arithmetic and memory estimates ----------*- C++ -*-===//
//
// Sizes that come from users (shapes on the command line, .npy headers,
// input arrays) are multiplied with overflow checks, and what a run will
// allocate is compared with what the process can still get before it is
// allocated, so that an impossible run is an error naming the sizes instead
// of a crash in generated code or an `LLVM ERROR: out of memory` abort.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_MEMORY_H
#define ATTN_MEMORY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace mlir::func {
class FuncOp;
}

namespace attn {

/// Largest byte count any array may have (2^62): far below where size_t
/// arithmetic on it (sums of a few arrays, offsets) could wrap.
inline constexpr uint64_t kMaxArrayBytes = uint64_t(1) << 62;

/// shape[0] * ... * shape[n-1] * elemSize, or nullopt when a dimension is
/// negative or the product exceeds kMaxArrayBytes.
std::optional<uint64_t> checkedBytes(llvm::ArrayRef<int64_t> shape,
                                     uint64_t elemSize);

/// a + b saturating at UINT64_MAX.
uint64_t addBytes(uint64_t a, uint64_t b);

/// "3.2 GiB", "512 MiB", "96 B".
std::string formatBytes(uint64_t bytes);

/// A file opened for reading that is known to be a regular file: its
/// descriptor (closed with the object) and its size.
class RegularFile {
public:
  /// Opens `path` without blocking (O_NONBLOCK: a FIFO with no writer would
  /// block open() forever) and keeps it only if fstat says it is a regular
  /// file: a FIFO, a device such as /dev/zero (also through a symlink), a
  /// directory or a socket is the error "PATH: not a regular file (a
  /// FIFO)".
  static llvm::Expected<RegularFile> open(llvm::StringRef path);
  RegularFile(RegularFile &&other) : fd(other.fd), bytes(other.bytes) {
    other.fd = -1;
  }
  RegularFile(const RegularFile &) = delete;
  ~RegularFile();
  int descriptor() const { return fd; }
  uint64_t size() const { return bytes; }
  /// Reads up to `n` bytes (fewer only at the end of the file) onto `buf`.
  std::error_code readMore(std::string &buf, uint64_t n);

private:
  RegularFile(int fd, uint64_t bytes) : fd(fd), bytes(bytes) {}
  int fd;
  uint64_t bytes;
};

/// Bytes this process can still allocate: the smaller of the address space
/// left under RLIMIT_AS and the system's MemAvailable plus free swap;
/// UINT64_MAX when neither is known.
uint64_t allocatableBytes();

/// Fails naming `what`, `bytes` and the limit when `bytes` is more than
/// allocatableBytes().
llvm::Error checkAllocatable(uint64_t bytes, llvm::StringRef what);

/// What evaluating `func` op by op materializes when its arguments have
/// `shapes`: the sum of every attn op's result and, for attn.attention,
/// the score maps of its expansion ([B, Hq, T, S] before and after the
/// softmax and after each MTA piece). `bytesPerElement` 0 counts each
/// tensor in its own element type (the compiled reference path), 8 counts
/// doubles (the fp64 oracle). Ops whose shape stays unknown count 0.
uint64_t materializedBytes(mlir::func::FuncOp func,
                           const std::vector<std::vector<int64_t>> &shapes,
                           unsigned bytesPerElement);

} // namespace attn

#endif // ATTN_MEMORY_H
