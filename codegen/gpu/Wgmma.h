//===- Wgmma.h - sm_90a warpgroup MMA as inline PTX --------------*- C++
//-*-===//
//
// The Hopper tensor-core path of the attention kernel: wgmma.mma_async
// (one warpgroup, m64nNk16, f32 accumulate) with operands in 128-byte
// swizzled shared memory, or A in registers. The NVVM dialect has no
// register-A form of wgmma, so both forms are inline PTX, as Triton emits
// them. wgmma writes its accumulators asynchronously: every value it
// defines is read only through `wait`, whose inline asm passes the registers
// through, and `fence` passes the registers written since the last wgmma,
// so LLVM cannot move a read or write of them across the fence or wait.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPU_WGMMA_H
#define ATTN_CODEGEN_GPU_WGMMA_H

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace mlir::attn::wgmma {

/// Inline PTX `text` (operands $0, $1, ...: results first, then inputs).
/// Results are `inouts` passed through (tied: the asm may rewrite them in
/// place) or, when `inouts` is empty, fresh values of types `fresh`; `ins`
/// are read-only inputs. Constraints follow the types: f32 "f", i32 "r",
/// i64 "l". The asm has side effects, so it keeps its place among the other
/// inline asm.
SmallVector<Value> inlinePtx(OpBuilder &b, Location loc, StringRef text,
                             ArrayRef<Value> inouts, ArrayRef<Value> ins,
                             ArrayRef<Type> fresh = {});

/// The 64-bit shared-memory matrix descriptor of an operand starting at
/// shared address `byteAddr` (index), with leading / stride byte offsets
/// `lbo` / `sbo`: 128-byte swizzled (the pattern must start on a 1024-byte
/// boundary) or, without `swizzle`, plain 8 x 16-byte core matrices (16-byte
/// aligned; K-major: `lbo` apart along K, `sbo` apart along M or N).
Value descriptor(OpBuilder &b, Location loc, Value byteAddr, int64_t lbo,
                 int64_t sbo, bool swizzle = true);

/// `desc` moved `bytes` (a multiple of 16) further into shared memory.
Value advance(OpBuilder &b, Location loc, Value desc, int64_t bytes);

/// wgmma.mma_async m64nNk16 with f32 accumulators `acc` (N/2 values per
/// thread; empty: D = A B, no accumulate). A is `aRegs` (4 packed i32 per
/// thread, the mma.sync A layout per warp) or, when empty, the shared
/// operand `descA` (K-major or, with `transA`, M-major). B is `descB`,
/// K-major or, with `transB`, N-major. Returns the new accumulators (read
/// them after `wait`).
SmallVector<Value> mmaAsync(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                            int64_t n, bool half, ArrayRef<Value> aRegs,
                            Value descA, Value descB, bool transB,
                            bool transA = false);

/// wgmma.fence: orders the register writes of `regs` (accumulators and A
/// fragments about to be read by wgmma) before the next wgmma.
SmallVector<Value> fence(OpBuilder &b, Location loc, ArrayRef<Value> regs);

/// wgmma.commit_group.
void commit(OpBuilder &b, Location loc);

/// wgmma.wait_group `pending`, then `regs` are safe to read.
SmallVector<Value> wait(OpBuilder &b, Location loc, ArrayRef<Value> regs,
                        int pending);

/// fence.proxy.async.shared::cta: this thread's generic-proxy writes to
/// shared memory (cp.async included, once waited for) become visible to
/// wgmma's async-proxy reads.
void fenceProxyAsync(OpBuilder &b, Location loc);

} // namespace mlir::attn::wgmma

#endif // ATTN_CODEGEN_GPU_WGMMA_H
