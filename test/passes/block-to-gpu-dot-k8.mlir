// Dots with K = 8 (FoX's 16-byte key records, FlashToBlockGpu.cpp): on
// mma.sync each operand is one ldmatrix.x2 per 16 rows (A: rows 0-7 and
// 8-15; B: two n8 tiles, .trans for a [K, N] B) and the dot one m16n8k8
// per (mi, ni); on wgmma the dot is one m64nNk16 whose A registers for k
// 8-15 are zero and whose interleaved B descriptor reads its 8 columns
// twice (LBO 0). A [64, 8] tile is 64 16-byte chunks, fewer than the 128
// threads: thread t copies chunk t % 64.
//
// RUN: attn-opt %s --split-input-file --attn-block-to-gpu | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-block-to-gpu | grep -c "shape = #nvvm.shape<m = 16, n = 8, k = 8>" | FileCheck %s --check-prefix=MMA
// MMA: {{^}}16{{$}}

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#sh = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 1, order = [1, 0]>
gpu.module @m {
  // CHECK-LABEL: gpu.func @k8
  // CHECK: arith.remui %{{.*}}, %c64
  // CHECK: nvgpu.device_async_copy
  // A, then per pair of n8 tiles B's ldmatrix.x2 and two m16n8k8.
  // CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = false}
  // CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = false}
  // CHECK-COUNT-2: nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 8>
  // CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = false}
  // The [K, N] B: ldmatrix.x2.trans.
  // CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = true}
  // CHECK-COUNT-2: nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 8>
  func.func private @k8(%a: memref<64x8xbf16>, %b: memref<64x8xbf16>, %v: memref<8x64xbf16>, %o: memref<64x64xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %sa = attn_block.local_alloc : !attn_block.smem<64x8xbf16, #sh>
    %sb = attn_block.local_alloc : !attn_block.smem<64x8xbf16, #sh>
    %sv = attn_block.local_alloc : !attn_block.smem<8x64xbf16, #sh>
    %t0 = attn_block.async_copy %a[%c0, %c0] dims [0, 1] padding 0.0 into %sa : memref<64x8xbf16> -> !attn_block.smem<64x8xbf16, #sh>
    %t1 = attn_block.async_copy %b[%c0, %c0] dims [0, 1] padding 0.0 into %sb : memref<64x8xbf16> -> !attn_block.smem<64x8xbf16, #sh>
    %t2 = attn_block.async_copy %v[%c0, %c0] dims [0, 1] padding 0.0 into %sv : memref<8x64xbf16> -> !attn_block.smem<8x64xbf16, #sh>
    %g = attn_block.async_commit_group %t0, %t1, %t2
    attn_block.async_wait %g pending 0
    attn_block.barrier
    %x = attn_block.local_load %sa : !attn_block.smem<64x8xbf16, #sh> -> tensor<64x8xbf16, #opA>
    %y = attn_block.local_load %sb : !attn_block.smem<64x8xbf16, #sh> -> tensor<64x8xbf16, #opB>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x64xf32, #mma>
    %d = attn_block.dot %x, %y, %z transpose_b : tensor<64x8xbf16, #opA>, tensor<64x8xbf16, #opB> -> tensor<64x64xf32, #mma>
    %w = attn_block.local_load %sv : !attn_block.smem<8x64xbf16, #sh> -> tensor<8x64xbf16, #opB>
    %e = attn_block.dot %x, %w, %d : tensor<64x8xbf16, #opA>, tensor<8x64xbf16, #opB> -> tensor<64x64xf32, #mma>
    attn_block.store %e, %o[%c0, %c0] dims [0, 1] : tensor<64x64xf32, #mma> -> memref<64x64xf32>
    return
  }
}

// -----

#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #wg, kWidth = 2>
#sh = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 1, order = [1, 0]>
#il = #attn_block.nvmma_shared<swizzleBytes = 0, transposed = false>
gpu.module @m {
  // The descriptor of B: LBO 0 (bits 16-29 of the descriptor), SBO 128 >> 4
  // = 8 (bits 32-45); A's last two registers are the constant 0.
  // CHECK-LABEL: gpu.func @k8wg
  // CHECK: %[[D:.*]] = arith.ori %{{.*}}, %c34359738368_i64 : i64
  // CHECK: %[[Z:.*]] = arith.constant 0 : i32
  // CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
  // CHECK-SAME: %{{[0-9]+}}, %{{[0-9]+}}, %[[Z]], %[[Z]], %[[D]],
  // CHECK-NOT: wgmma.mma_async
  func.func private @k8wg(%a: memref<64x8xbf16>, %b: memref<64x8xbf16>, %o: memref<64x64xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %sa = attn_block.local_alloc : !attn_block.smem<64x8xbf16, #sh>
    %sb = attn_block.local_alloc : !attn_block.smem<64x8xbf16, #il>
    %t0 = attn_block.async_copy %a[%c0, %c0] dims [0, 1] padding 0.0 into %sa : memref<64x8xbf16> -> !attn_block.smem<64x8xbf16, #sh>
    %t1 = attn_block.async_copy %b[%c0, %c0] dims [0, 1] padding 0.0 into %sb : memref<64x8xbf16> -> !attn_block.smem<64x8xbf16, #il>
    %g = attn_block.async_commit_group %t0, %t1
    attn_block.async_wait %g pending 0
    attn_block.fence_async_shared
    attn_block.barrier
    %x = attn_block.local_load %sa : !attn_block.smem<64x8xbf16, #sh> -> tensor<64x8xbf16, #opA>
    %y = attn_block.local_load %sb : !attn_block.smem<64x8xbf16, #il> -> tensor<64x8xbf16, #il>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x64xf32, #wg>
    %d = attn_block.dot %x, %y, %z transpose_b : tensor<64x8xbf16, #opA>, tensor<64x8xbf16, #il> -> tensor<64x64xf32, #wg>
    attn_block.store %d, %o[%c0, %c0] dims [0, 1] : tensor<64x64xf32, #wg> -> memref<64x64xf32>
    return
  }
}
