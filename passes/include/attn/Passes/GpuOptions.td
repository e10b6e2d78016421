//===- GpuOptions.td - the GPU pipeline's kernel options ---*- tablegen -*-===//
//
// The kernel-shape options of the GPU pipeline, defined once: names,
// types, defaults and help of attn-attention-to-gpu's options. The
// generated AttnAttentionToGPUOptions is the base of GPUPipelineOptions
// (Passes.h), so the attn-to-gpu pipeline, its textual options
// (Pipelines.cpp) and the runtime's CompileOptions::gpu defaults and
// ATTN_GPU_* variables (runtime/lib/GpuOptions.cpp) all take these
// defaults. A GPU pass that takes the same options uses this list too.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPU_OPTIONS_TD
#define ATTN_GPU_OPTIONS_TD

include "mlir/Pass/PassBase.td"

defvar AttnGpuKernelOptions = [
  Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
         "NVIDIA architecture of the kernels (sm_80, sm_90, ...; sm_90a: "
         "the wgmma kernel)">,
  Option<"warps", "warps", "int64_t", /*default=*/"4",
         "warps per block (1, 2, 4 or 8)">,
  Option<"mTiles", "m-tiles", "int64_t", /*default=*/"1",
         "16-row query tiles per warp (1 or 2; 2 shares K/V fragments "
         "but spills at D = 128); block-m = 16 * m-tiles * warps">,
  Option<"blockN", "block-n", "int64_t", /*default=*/"64",
         "keys per step of the key walk (32, 64 or 128; wgmma: 64 or 128)">,
  Option<"overlap", "overlap", "bool", /*default=*/"false",
         "sm_90a: issue the next S = Q K^T and this step's P V together "
         "so the softmax runs while P V is on the tensor cores">,
  Option<"lowering", "lowering", "std::string",
         /*default=*/"\"block-plan\"",
         "block-plan (default): every kernel and the launch plan from the "
         "block program (attn-to-block, attn-block-launch-plan, "
         "attn-block-to-gpu); direct: attn-attention-to-gpu's flash launch "
         "plan with the attention kernel built in C++ "
         "(codegen/gpu/AttentionKernels.cpp, the reference the block "
         "program is measured against; it alone takes overlap and "
         "m-tiles 2); block: that plan with the block program's attention "
         "kernel">,
];

#endif // ATTN_GPU_OPTIONS_TD
