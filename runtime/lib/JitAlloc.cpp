//===- JitAlloc.cpp - allocation failures of JIT-compiled code as errors --===//

#include "JitAlloc.h"

#include "attn/Memory.h"

#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

using namespace attn;

namespace {
/// The guardAllocations frame of this thread, if it is inside one.
thread_local std::jmp_buf *armed = nullptr;
thread_local uint64_t failedBytes = 0;
std::atomic<uint64_t> testLimit{0};

/// omp_in_parallel of the libomp the JIT loaded (RTLD_GLOBAL), or false
/// when none is loaded (the program then has no parallel regions).
bool inParallelRegion() {
  using Fn = int (*)();
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "omp_in_parallel"));
  return fn && fn() != 0;
}
} // namespace

void *attn::jit::attnJitCheckedMalloc(size_t bytes) {
  uint64_t limit = testLimit.load(std::memory_order_relaxed);
  void *p = limit && bytes > limit ? nullptr : std::malloc(bytes);
  if (p || bytes == 0)
    return p;
  if (armed && !inParallelRegion()) {
    failedBytes = bytes;
    std::longjmp(*armed, 1);
  }
  std::fprintf(stderr,
               "attn: out of memory: a kernel's program instance could not "
               "allocate %s (%llu bytes) on a worker thread; exiting\n",
               formatBytes(bytes).c_str(),
               static_cast<unsigned long long>(bytes));
  std::fflush(stderr);
  std::_Exit(70);
}

llvm::Error attn::jit::guardAllocations(void (*entry)(void **), void **args,
                                        llvm::StringRef what) {
  std::jmp_buf env;
  std::jmp_buf *outer = armed;
  // Only `entry`'s JIT-compiled frames lie between here and the longjmp in
  // attnJitCheckedMalloc: no C++ destructors are skipped.
  if (setjmp(env)) {
    armed = outer;
    uint64_t bytes = failedBytes;
    return llvm::createStringError(
        "out of memory: generated code could not allocate " +
        formatBytes(bytes) + " (" + std::to_string(bytes) + " bytes) while " +
        what.str());
  }
  armed = &env;
  entry(args);
  armed = outer;
  return llvm::Error::success();
}

void attn::jit::setAllocationLimitForTesting(uint64_t bytes) {
  testLimit.store(bytes, std::memory_order_relaxed);
}
