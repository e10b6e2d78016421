//===- JitAlloc.h - allocation failures of JIT-compiled code as errors ----===//
//
// Code lowered by finalize-memref-to-llvm allocates with `malloc` and uses
// the pointer unchecked: an allocation that fails (a run the up-front
// memory estimate let through, then memory taken by another process) would
// be a segfault inside generated code. The CPU kernel resolves the JIT'd
// code's `malloc` to checkedMalloc, and calls the entry point inside
// guardAllocations: a failed allocation made by the launching thread outside
// an OpenMP parallel region (where the whole-run buffers live: score maps,
// PaTH/MTA scratch, the result) unwinds to guardAllocations, which returns
// an error naming the size. Generated code holds no resources that need
// unwinding besides its earlier allocations, which leak (the process is out
// of memory anyway). A failure inside a parallel region (the per-tile
// buffers of a program instance, kilobytes) cannot unwind through the
// OpenMP runtime: it prints the size and exits the process with status 70
// instead of a segfault.
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
