// A banded B (attn_block.dot's b_band, MTA's Toeplitz operands): the
// mma.sync lowering leaves out the m16n8k16 steps whose k16 x n8 piece of B
// lies wholly outside lo <= k - n <= hi. [64, 96] x [96, 80] with band
// [3, 13] (MTA's 6x11 pre conv, 8-key margins: k - n - 3 in [0, 11)): 20
// of the 6 x 10 steps remain. Without the band all 60 run.
// RUN: attn-opt %s --attn-block-to-gpu | FileCheck %s
// RUN: attn-opt %s --attn-block-to-gpu | grep -c "nvvm.mma.sync" | FileCheck %s --check-prefix=MMA
// RUN: sed 's/ {b_band = array<i64: 3, 13>}//' %s | attn-opt --attn-block-to-gpu | grep -c "nvvm.mma.sync" | FileCheck %s --check-prefix=FULL
// MMA: {{^}}20{{$}}
// FULL: {{^}}60{{$}}

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#pad = #attn_block.padded_shared<rowStride = 104>
#padB = #attn_block.padded_shared<rowStride = 88>
gpu.module @m {
  // CHECK-LABEL: gpu.func @band
  // CHECK: nvvm.mma.sync
  func.func private @band(%toe: memref<?x96x80xf16>, %s: memref<?x64x96xf16>, %o: memref<64x80xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %r = attn_block.program_id 0
    %sa = attn_block.local_alloc : !attn_block.smem<64x96xf16, #pad>
    %tb = attn_block.local_alloc : !attn_block.smem<96x80xf16, #padB>
    %t0 = attn_block.async_copy %s[%r, %c0, %c0] dims [1, 2] padding 0.0 into %sa : memref<?x64x96xf16> -> !attn_block.smem<64x96xf16, #pad>
    %t1 = attn_block.async_copy %toe[%r, %c0, %c0] dims [1, 2] padding 0.0 into %tb : memref<?x96x80xf16> -> !attn_block.smem<96x80xf16, #padB>
    %g = attn_block.async_commit_group %t0, %t1
    attn_block.async_wait %g pending 0
    attn_block.barrier
    %x = attn_block.local_load %sa : !attn_block.smem<64x96xf16, #pad> -> tensor<64x96xf16, #opA>
    %y = attn_block.local_load %tb : !attn_block.smem<96x80xf16, #padB> -> tensor<96x80xf16, #opB>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x80xf32, #mma>
    %d = attn_block.dot %x, %y, %z {b_band = array<i64: 3, 13>} : tensor<64x96xf16, #opA>, tensor<96x80xf16, #opB> -> tensor<64x80xf32, #mma>
    attn_block.store %d, %o[%c0, %c0] dims [0, 1] : tensor<64x80xf32, #mma> -> memref<64x80xf32>
    return
  }
}
