// RUN: attn-opt %s --attn-to-block="target=sm_90 path-transport=split" | FileCheck %s
// RUN: attn-opt %s --attn-to-block="target=sm_90 path-transport=split" \
// RUN:   | %python %S/Inputs/gpu-module-of-kernels.py \
// RUN:   | attn-opt --attn-block-to-gpu | FileCheck %s --check-prefix=GPU

// PaTH's GPU form at D = 128 with the split transport
// (PathToBlock.cpp, dotSplit2): each f32
// operand split hi + lo is multiplied by a hi/lo pair of shared buffers as
// hi yHi + hi yLo + lo yHi, and a barrier stands before the second read of
// yHi, so that it is a second ldmatrix and not the registers of the first
// (the whole [64, 128] B tile, 128 registers a thread, live across the yLo
// product). At D = 64 there is no such barrier (path-to-block-gpu.mlir).

func.func @main(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                %w: tensor<?x?x?x128xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta)
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xf32>)
      -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// The walk: the score dot, the softmax, P V, then the transport
// q~ <- q~ - (q~ W^T) U as two split products, the second read of W hi
// (%[[WHI]]) and of U hi (%[[UHI]]) each after a barrier.
// CHECK-LABEL: func.func private @main_path_attention_kernel(
// Buffers q, k, v, W hi, U hi, KC hi, W lo, ...
// CHECK: attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK-NEXT: %[[WHI:[0-9]+]] = attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK-NEXT: %[[UHI:[0-9]+]] = attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<64x64xbf16
// CHECK-NEXT: %[[WLO:[0-9]+]] = attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK: scf.for
// CHECK: math.exp2
// CHECK: attn_block.local_load %[[WHI]]
// CHECK: attn_block.local_load %[[WLO]]
// CHECK-NEXT: attn_block.dot {{.*}} transpose_b
// CHECK-NEXT: attn_block.barrier
// CHECK: attn_block.local_load %[[WHI]]
// CHECK: attn_block.dot {{.*}} transpose_b
// CHECK: attn_block.local_load %[[UHI]]
// CHECK: attn_block.barrier
// CHECK-NEXT: attn_block.local_load %[[UHI]]
// CHECK: attn_block.dot
// CHECK-NEXT: attn_block.barrier
// CHECK-COUNT-4: attn_block.async_copy
// CHECK-NEXT: attn_block.async_commit_group
// CHECK-NEXT: scf.yield

// attn-block-to-gpu lowers it: the barriers stay, between the ldmatrix of
// the two reads.
// GPU-LABEL: gpu.func @main_path_attention_kernel(
// GPU: scf.for
// GPU: nvgpu.ldmatrix
// GPU: gpu.barrier
// GPU: nvgpu.ldmatrix
