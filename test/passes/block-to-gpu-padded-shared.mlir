// The padded shared buffers of MTA's stencil on the GPU: local_store of an
// f16 mma tile (one 4-byte vector store per register pair at
// row * rowStride + column), a local_subview (the parent's offset plus
// row * rowStride + column), ldmatrix A and .trans B reads of windows at a
// dynamic row, and cp.async into a window whose 960 chunks do not spread
// evenly over 128 threads (the last round repeats the last chunk).
// RUN: attn-opt %s --attn-block-to-gpu | FileCheck %s
// A [64, 96]: 6 ldmatrix.x4; B [96, 80] with .trans: 6 x 5; 6 k16 steps x
// 10 n8 tiles of mma.
// RUN: attn-opt %s --attn-block-to-gpu | grep -c "transpose = false" | FileCheck %s --check-prefix=A
// RUN: attn-opt %s --attn-block-to-gpu | grep -c "transpose = true" | FileCheck %s --check-prefix=B
// RUN: attn-opt %s --attn-block-to-gpu | grep -c "nvvm.mma.sync" | FileCheck %s --check-prefix=MMA
// A: {{^}}6{{$}}
// B: {{^}}30{{$}}
// MMA: {{^}}60{{$}}

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#pad = #attn_block.padded_shared<rowStride = 104>
#padB = #attn_block.padded_shared<rowStride = 88>
gpu.module @m {
  // CHECK-LABEL: gpu.func @stencil
  // The score tile: [64, 96] f16 over 4 warps, 12 n8 tiles of two pairs.
  // CHECK-COUNT-24: vector.store %{{.*}} : memref<?xf16, #gpu.address_space<workgroup>>, vector<2xf16>
  // CHECK-NOT: vector.store
  // 960 chunks over 128 threads: 8 rounds, the last one clamped to the
  // last chunk (959).
  // CHECK-COUNT-7: nvgpu.device_async_copy
  // CHECK: arith.minui %{{.*}}, %c959
  // CHECK: nvgpu.device_async_copy
  // CHECK-NOT: nvgpu.device_async_copy
  // CHECK: nvvm.cp.async.wait.group 0
  // The window at the program's row: its offset is row * 104 + column.
  // CHECK: arith.muli %block_id_x, %c104{{.*}} : index
  // (Each ldmatrix sits right before its first mma: counted below.)
  // CHECK: nvgpu.ldmatrix
  // CHECK: nvvm.mma.sync
  func.func private @stencil(%s: memref<64x96xf32>, %toe: memref<?x?x96x80xf16>, %o: memref<64x80xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %r = attn_block.program_id 0
    %buf = attn_block.local_alloc : !attn_block.smem<128x96xf16, #pad>
    %tb = attn_block.local_alloc : !attn_block.smem<96x80xf16, #padB>
    %sc = attn_block.load %s[%c0, %c0] dims [0, 1] padding 0.0 : memref<64x96xf32> -> tensor<64x96xf32, #mma>
    %h = arith.truncf %sc : tensor<64x96xf32, #mma> to tensor<64x96xf16, #mma>
    %top = attn_block.local_subview %buf[%c0, %c0] : !attn_block.smem<128x96xf16, #pad> -> !attn_block.smem<64x96xf16, #pad>
    attn_block.local_store %h, %top : tensor<64x96xf16, #mma> -> !attn_block.smem<64x96xf16, #pad>
    %t = attn_block.async_copy %toe[%c0, %r, %c0, %c0] dims [2, 3] padding 0.0 into %tb : memref<?x?x96x80xf16> -> !attn_block.smem<96x80xf16, #padB>
    %g = attn_block.async_commit_group %t
    attn_block.async_wait %g pending 0
    attn_block.barrier
    %w = attn_block.local_subview %buf[%r, %c0] : !attn_block.smem<128x96xf16, #pad> -> !attn_block.smem<64x96xf16, #pad>
    %x = attn_block.local_load %w : !attn_block.smem<64x96xf16, #pad> -> tensor<64x96xf16, #opA>
    %y = attn_block.local_load %tb : !attn_block.smem<96x80xf16, #padB> -> tensor<96x80xf16, #opB>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x80xf32, #mma>
    %d = attn_block.dot %x, %y, %z : tensor<64x96xf16, #opA>, tensor<96x80xf16, #opB> -> tensor<64x80xf32, #mma>
    attn_block.store %d, %o[%c0, %c0] dims [0, 1] : tensor<64x80xf32, #mma> -> memref<64x80xf32>
    return
  }
}
