// RUN: attn-opt %s --attn-to-block="target=sm_90a path-chunk-wgmma=true" | FileCheck %s
// RUN: attn-opt %s --attn-to-block="target=sm_90a" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --attn-to-block="target=sm_90a path-chunk-wgmma=true" \
// RUN:   | %python %S/Inputs/gpu-module-of-kernels.py \
// RUN:   | attn-opt --attn-block-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a path-chunk-wgmma=true" --attn-dump-ptx=%t.ptx | FileCheck %s --check-prefix=BIN
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// PaTH's chunk kernel in the wgmma form (path-chunk-wgmma, sm_90a;
// PathToBlock.cpp, GpuTiles.h's wgmma mode) at D = 128: the same
// program as for sm_90 with wgmma's layouts. Every [64, N] f32 tile is in
// the version-3 accumulator layout of m64nNk16 (N = 64 for A = stril(beta W
// W^T), 128 for U = T W), shared buffers are 128-byte swizzled tiles the
// dots read in place, a register A is converted to the operand layout of
// its own dot's accumulator, and a fence_async_shared follows each wait
// for copies. The attention kernel keeps its mma.sync form (its wgmma form
// is path-attention-wgmma: path-attention-wgmma.mlir), and without the
// option so does the chunk kernel. The numbers are checked on the CPU
// in test/unit/PathGpuFormCpuTest.cpp (WgmmaForm) and on the GPU in
// test/unit/GpuPathTest.cpp (the _chunk_wgmma cases).

func.func @main(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                %w: tensor<?x?x?x128xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta)
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xf32>)
      -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// CHECK-DAG: #[[M128:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128, 16]>
// CHECK-DAG: #[[M64:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
// CHECK-DAG: #[[V2:.*]] = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
// CHECK-DAG: #[[NV:.*]] = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
// CHECK-DAG: #[[A64:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[M64]], kWidth = 2>
// CHECK-DAG: #[[A128:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[M128]], kWidth = 2>

// The chunk kernel: W (N = 128 columns) in registers as the A of A =
// beta W W^T (N = 64) against its shared copy read in place; T (N = 64) as
// the A of U = T W (N = 128).
// CHECK-LABEL: func.func private @main_path_chunk_kernel(
// CHECK: attn_block.load %arg1{{.*}} -> tensor<64x128xf32, #[[M128]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<64x128xbf16, #[[NV]]>
// CHECK: attn_block.async_wait pending 0
// CHECK-NEXT: attn_block.fence_async_shared
// CHECK-NEXT: attn_block.barrier
// CHECK: attn_block.dot {{.*}} transpose_b : tensor<64x128xbf16, #[[A64]]>, tensor<64x128xbf16, #[[NV]]> -> tensor<64x64xf32, #[[M64]]>
// CHECK: attn_block.dot {{.*}} : tensor<64x64xbf16, #[[A128]]>, tensor<64x128xbf16, #[[NV]]> -> tensor<64x128xf32, #[[M128]]>

// The attention kernel: mma.sync (version 2) tiles, no wgmma layout or
// nvmma_shared buffer (named by their aliases in the function body).
// CHECK-LABEL: func.func private @main_path_attention_kernel(
// CHECK-NOT: {{#}}[[M128]]{{[,>]}}
// CHECK-NOT: {{#}}[[M64]]{{[,>]}}
// CHECK-NOT: {{#}}[[NV]]{{[,>]}}
// CHECK: scf.for {{.*}} -> (tensor<64x128xf32, #[[V2]]>
// CHECK-NOT: {{#}}[[M128]]{{[,>]}}
// CHECK-NOT: {{#}}[[M64]]{{[,>]}}
// CHECK-NOT: {{#}}[[NV]]{{[,>]}}
// CHECK: return

// OFF-NOT: version = 3
// OFF-NOT: nvmma_shared

// attn-block-to-gpu lowers the chunk kernel's dots to wgmma, the attention
// kernel's to mma.sync.
// A = beta W W^T is the split product hi yHi + hi yLo + lo yHi: the first
// two share their A (hi) and chain (no wait between them), the third's A
// (lo) differs, so the second waits first (DotToWgmma.cpp, keepsARegisters:
// hi's registers must outlive the tensor cores' reads).
// GPU-LABEL: gpu.func @main_path_chunk_kernel(
// GPU: "wgmma.fence.sync.aligned;"
// GPU-NOT: wgmma.commit_group
// GPU: "wgmma.fence.sync.aligned;"
// GPU-NOT: wgmma.fence
// GPU: "wgmma.commit_group.sync.aligned;"
// GPU-NEXT: "wgmma.wait_group.sync.aligned 0;"
// GPU: "wgmma.fence.sync.aligned;"
// GPU: wgmma.mma_async
// GPU-LABEL: gpu.func @main_path_attention_kernel(
// GPU-NOT: wgmma.mma_async
// GPU: nvvm.mma.sync

// BIN: gpu.binary
// PTX: .target sm_90a
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
