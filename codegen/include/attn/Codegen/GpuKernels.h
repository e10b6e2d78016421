//===- GpuKernels.h - the GPU kernels of a GpuPlan --------------*- C++ -*-===//
//
// What codegen/gpu defines, declared by codegen: the kernels of a launch
// plan (attn/Codegen/GpuPlan.h, which the planner, this builder and the
// runtime share) in the gpu/nvgpu/nvvm dialects.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPUKERNELS_H
#define ATTN_CODEGEN_GPUKERNELS_H

#include "attn/Codegen/GpuPlan.h"

namespace mlir {
class OpBuilder;
namespace gpu {
class GPUModuleOp;
} // namespace gpu
} // namespace mlir

namespace mlir::attn {

/// Appends the plan's kernels (`rope`, `gate`, `attention`) to `module`;
/// without `withAttention` only the prologue kernels (the block program
/// supplies `attention`: attn-attention-to-gpu's lowering=block).
void buildGpuKernels(OpBuilder &b, gpu::GPUModuleOp module, const GpuPlan &plan,
                     bool withAttention = true);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_GPUKERNELS_H
