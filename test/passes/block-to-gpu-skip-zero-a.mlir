// attn_block.dot's skip_zero_a on the GPU: mma.sync multiplies B with its
// non-finite elements read as 0 and counts, with A's non-zeros read as 1,
// the +inf and -inf each output meets (two more m16n8k16 a step), then adds
// +inf / -inf where a count is positive; wgmma refuses it by name
// (docs/input-limits.md, "Non-finite values").
//
// RUN: not attn-opt %s --split-input-file --attn-block-to-gpu 2>&1 | FileCheck %s
// P [64, 64] x V [64, 64]: 4 k16 steps x 8 n8 tiles, three mma each.
// RUN: not attn-opt %s --split-input-file --attn-block-to-gpu 2>&1 | awk "/gpu.func @skip/,/gpu.return/" | grep -c "nvvm.mma.sync" | FileCheck %s --check-prefix=MMA
// MMA: {{^}}96{{$}}

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#sh = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
gpu.module @m {
  // CHECK-LABEL: gpu.func @skip
  // B's elements: finite ones kept (ONE: ordered, so NaN is not), NaN.
  // CHECK: arith.cmpf one, %{{.*}}, %{{.*}} : bf16
  // CHECK: arith.cmpf uno, %{{.*}}, %{{.*}} : bf16
  // A's non-zeros (UNE: a NaN counts).
  // CHECK: arith.cmpf une, %{{.*}}, %{{.*}} : bf16
  // CHECK-COUNT-3: nvvm.mma.sync
  // CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
  // CHECK: arith.addf
  func.func private @skip(%p: memref<64x64xbf16>, %v: memref<64x64xbf16>, %o: memref<64x64xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %sp = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #sh>
    %sv = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #sh>
    %t0 = attn_block.async_copy %p[%c0, %c0] dims [0, 1] padding 0.0 into %sp : memref<64x64xbf16> -> !attn_block.smem<64x64xbf16, #sh>
    %t1 = attn_block.async_copy %v[%c0, %c0] dims [0, 1] padding 0.0 into %sv : memref<64x64xbf16> -> !attn_block.smem<64x64xbf16, #sh>
    %g = attn_block.async_commit_group %t0, %t1
    attn_block.async_wait %g pending 0
    attn_block.barrier
    %a = attn_block.local_load %sp : !attn_block.smem<64x64xbf16, #sh> -> tensor<64x64xbf16, #opA>
    %b = attn_block.local_load %sv : !attn_block.smem<64x64xbf16, #sh> -> tensor<64x64xbf16, #opB>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x64xf32, #mma>
    %d = attn_block.dot %a, %b, %z {skip_zero_a} : tensor<64x64xbf16, #opA>, tensor<64x64xbf16, #opB> -> tensor<64x64xf32, #mma>
    attn_block.store %d, %o[%c0, %c0] dims [0, 1] : tensor<64x64xf32, #mma> -> memref<64x64xf32>
    return
  }
}

// -----

#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #wg, kWidth = 2>
#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
gpu.module @m {
  func.func private @wgmma(%v: memref<64x64xbf16>, %o: memref<64x64xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %sv = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv>
    %t = attn_block.async_copy %v[%c0, %c0] dims [0, 1] padding 0.0 into %sv : memref<64x64xbf16> -> !attn_block.smem<64x64xbf16, #nv>
    %g = attn_block.async_commit_group %t
    attn_block.async_wait %g pending 0
    attn_block.fence_async_shared
    attn_block.barrier
    %b = attn_block.local_load %sv : !attn_block.smem<64x64xbf16, #nv> -> tensor<64x64xbf16, #nv>
    %one = arith.constant 1.0 : bf16
    %a = tensor.splat %one : tensor<64x64xbf16, #opA>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x64xf32, #wg>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.dot': skip_zero_a is lowered for mma.sync only
    %d = attn_block.dot %a, %b, %z {skip_zero_a} : tensor<64x64xbf16, #opA>, tensor<64x64xbf16, #nv> -> tensor<64x64xf32, #wg>
    attn_block.store %d, %o[%c0, %c0] dims [0, 1] : tensor<64x64xf32, #wg> -> memref<64x64xf32>
    return
  }
}
