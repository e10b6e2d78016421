//===- GpuOccupancy.h - shared-memory and occupancy rules of GPU kernels --===//
//
// The few numbers the block program's GPU kernels share between the pass
// that builds them (passes/lib/FlashToBlockGpu.cpp, MtaToBlockGpu.cpp) and
// the backend that lowers them (codegen/gpu): wgmma's buffer alignment,
// how many blocks of a given shared memory fit an SM, and the rule of the
// occupancy hint (attn_block.min_blocks_per_sm, nvvm.minctasm). They sit in
// codegen/ so that passes include what codegen defines, not the reverse.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPUOCCUPANCY_H
#define ATTN_CODEGEN_GPUOCCUPANCY_H

#include <cstdint>

namespace mlir::attn::gpu_occupancy {

/// wgmma's swizzled tiles start on 1024-byte bounds: a kernel that has them
/// rounds the dynamic shared memory base up, within this much slack.
inline constexpr int64_t kWgmmaAlign = 1024;

/// Blocks of `bytes` of dynamic shared memory that fit an sm_90 SM (228
/// KB, 1 KB reserved per block).
inline int64_t blocksBySharedMemory(int64_t bytes) {
  return 228 * 1024 / (bytes + 1024);
}

/// Blocks per SM a kernel of `smemBytes` of dynamic shared memory and
/// `threads` threads asks ptxas for, or 0 for no hint: the blocks shared
/// memory allows, where that is more than 2 and still leaves >= 96
/// registers per thread (64K per SM). At D = 64 plain attention fits 5
/// blocks by itself, and at 96 registers its wgmma kernel does not spill.
inline int64_t occupancyHint(int64_t smemBytes, int64_t threads) {
  const int64_t blocks = blocksBySharedMemory(smemBytes);
  return blocks > 2 && 65536 / (blocks * threads) >= 96 ? blocks : 0;
}

} // namespace mlir::attn::gpu_occupancy

#endif // ATTN_CODEGEN_GPUOCCUPANCY_H
