// RUN: attn-opt %s --attn-to-block="target=sm_90a path-chunk-wgmma=true path-attention-wgmma=true" | FileCheck %s
// RUN: attn-opt %s --attn-to-block="target=sm_90a path-chunk-wgmma=true path-attention-wgmma=true" \
// RUN:   | %python %S/Inputs/gpu-module-of-kernels.py \
// RUN:   | attn-opt --attn-block-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a path-attention-wgmma=true format=isa" | FileCheck %s --check-prefix=ISA
// RUN: rm -rf %t && mkdir -p %t/bin && cp %S/Inputs/ptxas-13.0.sh %t/bin/ptxas
// RUN: not attn-opt %s --attn-to-gpu="chip=sm_90a path-attention-wgmma=true toolkit=%t" 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not attn-opt %s --attn-to-gpu="chip=sm_90a path-attention-wgmma=true toolkit=%t/none" 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not attn-opt %s --attn-to-block="target=sm_90 path-attention-wgmma=true" 2>&1 | FileCheck %s --check-prefix=CHIP

// PaTH-FoX's attention kernel in the wgmma form (path-attention-wgmma,
// sm_90a; PathToBlock.cpp, GpuTiles.h's wgmma mode) at D = 128: the walk
// carries q~ and O as [64, 128] version-3 accumulators, reads Khat, V, W and
// U in place from 128-byte swizzled buffers, and publishes every wait's
// copies to the async proxy (fence_async_shared) before the barrier. The
// dots read q~ and P from registers, which ptxas before 13.3 assembles
// wrongly, so a cubin is refused with an older ptxas (or none); PTX
// (format=isa) is left to whatever assembles it. The numbers are checked on
// the CPU in test/unit/PathGpuFormCpuTest.cpp (WgmmaForm) and on the GPU in
// test/unit/GpuPathTest.cpp (the _attention_wgmma cases).

func.func @main(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                %w: tensor<?x?x?x128xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta) gate(%g) scaled
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>)
      -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// CHECK-DAG: #[[M128:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128, 16]>
// CHECK-DAG: #[[M64:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
// CHECK-DAG: #[[NV:.*]] = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
// CHECK-DAG: #[[A64:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[M64]], kWidth = 2>
// CHECK-DAG: #[[A128:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[M128]], kWidth = 2>

// CHECK-LABEL: func.func private @main_path_attention_kernel(
// CHECK: attn_block.local_alloc : !attn_block.smem<64x128xbf16, #[[NV]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<64x128xf16, #[[NV]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<64x64xf16, #[[NV]]>
// CHECK: scf.for {{.*}} -> (tensor<64x128xf32, #[[M128]]>, tensor<64xf32, {{.*}}>, tensor<64xf32, {{.*}}>, tensor<64x128xf32, #[[M128]]>)
// The scores q~ Khat^T: q~ from registers, Khat read in place.
// CHECK: attn_block.async_wait pending 1
// CHECK-NEXT: attn_block.fence_async_shared
// CHECK-NEXT: attn_block.barrier
// CHECK: attn_block.dot {{.*}} transpose_b : tensor<64x128xbf16, #[[A64]]>, tensor<64x128xbf16, #[[NV]]> -> tensor<64x64xf32, #[[M64]]>
// P V: P from registers.
// CHECK: attn_block.dot {{.*}} : tensor<64x64xbf16, #[[A128]]>, tensor<64x128xbf16, #[[NV]]> -> tensor<64x128xf32, #[[M128]]>
// The transport q~ - (q~ W^T) U.
// CHECK: attn_block.async_wait pending 1
// CHECK-NEXT: attn_block.fence_async_shared
// CHECK-NEXT: attn_block.barrier
// CHECK: attn_block.dot {{.*}} transpose_b : tensor<64x128xf16, #[[A64]]>, tensor<64x128xf16, #[[NV]]> -> tensor<64x64xf32, #[[M64]]>
// CHECK: attn_block.dot {{.*}} : tensor<64x64xf16, #[[A128]]>, tensor<64x128xf16, #[[NV]]> -> tensor<64x128xf32, #[[M128]]>
// CHECK: scf.yield

// GPU-LABEL: gpu.func @main_path_attention_kernel(
// GPU-NOT: nvvm.mma.sync
// GPU: wgmma.mma_async
// GPU-NOT: nvvm.mma.sync
// GPU: gpu.return

// ISA: gpu.binary
// ISA-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16

// OLD: GPU option path-attention-wgmma needs ptxas 13.3 or newer, found 13.0 at {{.*}}bin/ptxas (it reuses a register-A wgmma's registers before the wgmma has read them
// NONE: GPU option path-attention-wgmma needs ptxas 13.3 or newer (no ptxas at {{.*}}none/bin/ptxas)
// CHIP: error: attn-to-block: path-attention-wgmma needs target sm_90a (wgmma), got sm_90
