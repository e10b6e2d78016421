//===- GpuTarget.h - checks of the GPU target options -----------*- C++ -*-===//
//
// One definition of what the GPU backend accepts as its target and kernel
// shape, used up front by attn-attention-to-gpu, the attn-to-gpu pipeline
// and the runtime (CompileOptions::gpu, ATTN_GPU_*), so that a bad option is
// an error naming it before any kernel is built, never an abort in LLVM's
// instruction selection or a crash in the NVVM target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_GPUTARGET_H
#define ATTN_PASSES_GPUTARGET_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

/// The oldest architecture the kernels run on: they use cp.async, ldmatrix
/// and bf16 mma.sync, which appear with sm_80.
inline constexpr unsigned kMinGpuSm = 80;

/// "" when `chip` names an NVIDIA architecture the kernels can target
/// (sm_80 or newer, spelled as LLVM's NVPTX backend knows it: sm_80, sm_86,
/// sm_90, sm_90a, sm_100a, ...), else a message naming the problem.
std::string checkGpuChip(llvm::StringRef chip);

/// The XY of "sm_XY[a|f]" (0 when `chip` is not of that form).
unsigned gpuSmVersion(llvm::StringRef chip);

/// "" when the kernel shape options are valid together for `chip` (which
/// must already pass checkGpuChip), else a message naming the option.
std::string checkGpuKernelOptions(llvm::StringRef chip, bool overlap,
                                  int64_t warps, int64_t mTiles,
                                  int64_t blockN);

/// "" when `format` is an output of the attn-to-gpu pipeline (bin, isa,
/// none), else a message listing them.
std::string checkGpuFormat(llvm::StringRef format);

/// "" when `lowering` (direct: the C++-built kernels of
/// codegen/gpu/AttentionKernels.cpp; block: the block program through
/// attn-block-to-gpu) is valid for `chip`, else the error message.
std::string checkGpuLowering(llvm::StringRef lowering, llvm::StringRef chip);

} // namespace mlir::attn

#endif // ATTN_PASSES_GPUTARGET_H
