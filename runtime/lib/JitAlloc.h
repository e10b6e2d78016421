//===- JitAlloc.h - allocation failures of JIT-compiled code as errors ----===//
//
// Allocation failures of JIT-compiled code as errors: the CPU kernel resolves
// generated code's `malloc` to checkedMalloc and runs the entry point inside
// guardAllocations. A failed allocation by the launching thread outside an
// OpenMP region (whole-run buffers) unwinds to guardAllocations, which
// returns an error naming the size (earlier allocations leak); one inside a
// parallel region (per-tile buffers) cannot unwind through OpenMP: it prints
// the size and exits with status 70 instead of a segfault.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_JITALLOC_H
#define ATTN_RUNTIME_JITALLOC_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace attn::jit {

/// `malloc` for JIT-compiled code (see the file comment).
void *attnJitCheckedMalloc(size_t bytes);

/// Calls `entry(args)` (a packed MLIR entry point); an allocation failure
/// in it becomes an error "generated code could not allocate N bytes ...".
llvm::Error guardAllocations(void (*entry)(void **), void **args,
                             llvm::StringRef what);

/// Tests only: allocations of more than `bytes` made by JIT-compiled code
/// fail as if memory were exhausted (0 = no limit).
void setAllocationLimitForTesting(uint64_t bytes);

} // namespace attn::jit

#endif // ATTN_RUNTIME_JITALLOC_H
