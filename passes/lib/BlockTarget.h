//===- BlockTarget.h - target descriptions of the block program -*- C++ -*-===//
//
// What attn-to-block needs to know about the machine a kernel is for: the
// CPU form (tiles without layouts) or the GPU form of a chip (layouts,
// shared buffers, cp.async pipeline), with its warps, tile shape and
// pipeline depth. One description per target name.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_BLOCKTARGET_H
#define ATTN_PASSES_BLOCKTARGET_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

struct BlockTarget {
  std::string name = "cpu";
  /// The GPU form (layouts, shared memory, async copies); else the CPU form.
  bool gpu = false;
  /// Warps per program instance and 16-row mma tiles per warp:
  /// blockM = 16 * mTiles * warps.
  int64_t warps = 4, mTiles = 1;
  /// Keys per step of the walk and the K/V tiles in flight.
  int64_t blockN = 64, stages = 2;
  /// sm_90a: warpgroup MMA (FlashToBlockGpu.cpp, makeWgmmaLayouts).
  bool wgmma = false;
  /// The kernel may start while the kernels before it still run
  /// (programmatic dependent launch, sm_90 and newer): the GPU form waits
  /// (griddep_wait) right before its first read of what they wrote (q and
  /// k rotated by the rope kernels, FoX's G'); sm_90 and newer targets.
  bool dependentLaunch = false;
  /// Bulk copies and reductions between shared and global memory
  /// (cp.async.bulk, cp.reduce.async.bulk: sm_90 and newer).
  bool bulkCopies = false;

  int64_t blockM() const { return 16 * mTiles * warps; }
};

/// The description of target `name` (cpu, sm_80, sm_90, sm_90a), or an
/// error message naming the known ones.
std::string parseBlockTarget(llvm::StringRef name, BlockTarget &out);

} // namespace mlir::attn

#endif // ATTN_PASSES_BLOCKTARGET_H
