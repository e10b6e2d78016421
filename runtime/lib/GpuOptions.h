//===- GpuOptions.h - CompileOptions::gpu resolved for one device -*- C++
//-*-===//
//
// The runtime side of the GPU pipeline's one options struct
// (mlir::attn::GPUPipelineOptions, Passes.h, which holds the kernel-shape
// fields and their defaults): which environment
// variable fills which unset field of CompileOptions::gpu, the resolution
// for a device, and the Engine's cache key, all read from one table in
// GpuOptions.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_GPUOPTIONS_H
#define ATTN_RUNTIME_GPUOPTIONS_H

#include "attn/Passes/Passes.h"
#include "attn/Runtime.h"

#include "llvm/Support/Error.h"

#include <string>

namespace attn::detail {

/// What CompileOptions::gpu asks for on a device of compute capability
/// `smMajor`.`smMinor`: the pipeline options (format "none": the runtime
/// serializes itself) and the launch mode.
struct ResolvedGpuOptions {
  mlir::attn::GPUPipelineOptions pipeline;
  bool dependentLaunch = true;
};

/// Set fields of `o` win, then the ATTN_GPU_* variables, then the defaults:
/// the chip of the device (sm_90a, the wgmma kernel, on sm_90 devices),
/// GPUPipelineOptions' defaults, dependent launch on. ATTN_GPU_LOWERING,
/// ATTN_GPU_OVERLAP and ATTN_GPU_M_TILES, the direct builder's (removed
/// after 07981fc), are an error when set, not silently ignored. Every value is
/// checked with checkGPUPipelineOptions; an error names the bad value and where
/// it came from.
llvm::Expected<ResolvedGpuOptions> resolveGpuOptions(const GpuKernelOptions &o,
                                                     int smMajor, int smMinor);

/// The fields of `o` as part of a cache key (one per field of the table).
std::string gpuOptionsKey(const GpuKernelOptions &o);

/// The CUDA toolkit the runtime compiles with, chosen once per CUDA_HOME
/// and ATTN_PTXAS:
/// CUDA_HOME's (mlir::attn::cudaToolkitPath), or where its ptxas is older
/// than 13.3 one that takes a newer ptxas from ATTN_PTXAS or pip's
/// nvidia-cuda-nvcc (attn::chooseToolkit), made under the disk cache
/// directory (else the temporary one). `note`: why, when it is not
/// CUDA_HOME's ("" otherwise).
const std::string &runtimeToolkit(std::string *note = nullptr);

} // namespace attn::detail

#endif // ATTN_RUNTIME_GPUOPTIONS_H
