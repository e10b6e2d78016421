// Round trip of the GPU side of the block program: layouts as tile
// encodings, shared buffers, cp.async copies with their groups and waits,
// barriers, layout conversions, wgmma reading shared tiles. Custom
// form -> custom form, and through the generic form.
//
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

#blocked = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#row = #attn_block.slice<dim = 1, parent = #mma>
#swz = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>

// CHECK-DAG: #[[BLOCKED:.*]] = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[MMA:.*]] = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
// CHECK-DAG: #[[A:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[B:.*]] = #attn_block.dot_operand<opIdx = 1, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[ROW:.*]] = #attn_block.slice<dim = 1, parent = #[[MMA]]>
// CHECK-DAG: #[[NV:.*]] = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
// CHECK-DAG: #[[SWZ:.*]] = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>

// CHECK-LABEL: func.func @mma_sync_step
// CHECK-SAME: attn_block.kernel, attn_block.num_warps = 4 : i64
func.func @mma_sync_step(%k: memref<?x?x?x64xbf16>, %q: tensor<64x64xbf16, #opA>,
                         %acc: tensor<64x64xf32, #mma>, %j0: index, %j1: index)
    -> (tensor<64x64xf32, #mma>, tensor<64xf32, #row>)
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[BUF:.*]] = attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #[[SWZ]]>
  %buf = attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #swz>
  // CHECK: %[[S0:.*]] = attn_block.local_index %[[BUF]][%{{.*}}] : !attn_block.smem<2x64x64xbf16, #[[SWZ]]> -> !attn_block.smem<64x64xbf16, #[[SWZ]]>
  %s0 = attn_block.local_index %buf[%c0] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
  // CHECK: %[[S1:.*]] = attn_block.local_index %[[BUF]][%{{.*}}]
  %s1 = attn_block.local_index %buf[%c1] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
  // CHECK: %[[T0:.*]] = attn_block.async_copy %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] dims [2, 3] padding 0.000000e+00 into %[[S0]] : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #[[SWZ]]>
  %t0 = attn_block.async_copy %k[%c0, %c0, %j0, %c0] dims [2, 3] padding 0.0 into %s0 : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
  // CHECK: %[[G0:.*]] = attn_block.async_commit_group %[[T0]]
  %g0 = attn_block.async_commit_group %t0
  %t1 = attn_block.async_copy %k[%c0, %c0, %j1, %c0] dims [2, 3] padding 0.0 into %s1 : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
  %g1 = attn_block.async_commit_group %t1
  // CHECK: attn_block.async_wait %[[G0]] pending 1
  attn_block.async_wait %g0 pending 1
  // CHECK: attn_block.barrier
  attn_block.barrier
  // CHECK: attn_block.local_load %[[S0]] : !attn_block.smem<64x64xbf16, #[[SWZ]]> -> tensor<64x64xbf16, #[[B]]>
  %kt = attn_block.local_load %s0 : !attn_block.smem<64x64xbf16, #swz> -> tensor<64x64xbf16, #opB>
  // CHECK: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} transpose_b : tensor<64x64xbf16, #[[A]]>, tensor<64x64xbf16, #[[B]]> -> tensor<64x64xf32, #[[MMA]]>
  %s = attn_block.dot %q, %kt, %acc transpose_b : tensor<64x64xbf16, #opA>, tensor<64x64xbf16, #opB> -> tensor<64x64xf32, #mma>
  // CHECK: attn_block.reduce max %{{.*}} axis 1 : tensor<64x64xf32, #[[MMA]]> -> tensor<64xf32, #[[ROW]]>
  %m = attn_block.reduce max %s axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
  // CHECK: attn_block.convert_layout %{{.*}} : tensor<64x64xf32, #[[MMA]]> -> tensor<64x64xf32, #[[BLOCKED]]>
  %sb = attn_block.convert_layout %s : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
  // CHECK: attn_block.local_store %{{.*}}, %[[S1]] : tensor<64x64xbf16, #[[BLOCKED]]> -> !attn_block.smem<64x64xbf16, #[[SWZ]]>
  %sh = arith.truncf %sb : tensor<64x64xf32, #blocked> to tensor<64x64xbf16, #blocked>
  attn_block.local_store %sh, %s1 : tensor<64x64xbf16, #blocked> -> !attn_block.smem<64x64xbf16, #swz>
  // CHECK: attn_block.async_wait pending 0
  attn_block.async_wait pending 0
  return %s, %m : tensor<64x64xf32, #mma>, tensor<64xf32, #row>
}

#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#wgA = #attn_block.dot_operand<opIdx = 0, parent = #wg, kWidth = 2>
#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>

// A copy into a wgmma-read buffer: wait, proxy fence, barrier, then the
// dot reads the tile in place.
// CHECK-LABEL: func.func @wgmma_step
// CHECK: attn_block.async_wait %{{.*}} pending 0
// CHECK-NEXT: attn_block.fence_async_shared
// CHECK-NEXT: attn_block.barrier
// CHECK: attn_block.dot {{.*}} transpose_b : tensor<64x64xbf16, #[[NV]]>, tensor<64x64xbf16, #[[NV]]> -> tensor<64x64xf32, #{{.*}}>
func.func @wgmma_step(%k: memref<?x?x?x64xbf16>, %acc: tensor<64x64xf32, #wg>)
    -> tensor<64x64xf32, #wg>
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %qb = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv>
  %kb = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv>
  %t = attn_block.async_copy %k[%c0, %c0, %c0, %c0] dims [2, 3] padding 0.0 into %kb : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #nv>
  %g = attn_block.async_commit_group %t
  attn_block.async_wait %g pending 0
  attn_block.fence_async_shared
  attn_block.barrier
  %qt = attn_block.local_load %qb : !attn_block.smem<64x64xbf16, #nv> -> tensor<64x64xbf16, #nv>
  %kt = attn_block.local_load %kb : !attn_block.smem<64x64xbf16, #nv> -> tensor<64x64xbf16, #nv>
  %s = attn_block.dot %qt, %kt, %acc transpose_b : tensor<64x64xbf16, #nv>, tensor<64x64xbf16, #nv> -> tensor<64x64xf32, #wg>
  return %s : tensor<64x64xf32, #wg>
}

// A dependent kernel waits for the kernel before it right before it reads
// what that kernel wrote; copies of its other inputs go out first. The
// occupancy hint is a kernel attribute.
// A prologue kernel lets the next one start first thing.
// CHECK-LABEL: func.func @dependent
// CHECK-SAME: attn_block.min_blocks_per_sm = 5 : i64
// CHECK-NEXT: attn_block.launch_dependents
// CHECK: attn_block.async_commit_group
// CHECK-NEXT: attn_block.griddep_wait
// CHECK-NEXT: attn_block.load
func.func @dependent(%v: memref<?x?x?x64xbf16>, %g: memref<?x?x?xf32>)
    -> tensor<64xf32, #row>
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64, attn_block.min_blocks_per_sm = 5 : i64} {
  attn_block.launch_dependents
  %c0 = arith.constant 0 : index
  %vb = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #swz>
  %t = attn_block.async_copy %v[%c0, %c0, %c0, %c0] dims [2, 3] padding 0.0 into %vb : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
  %grp = attn_block.async_commit_group %t
  attn_block.griddep_wait
  %gi = attn_block.load %g[%c0, %c0, %c0] dims [2] padding 0.0 : memref<?x?x?xf32> -> tensor<64xf32, #row>
  return %gi : tensor<64xf32, #row>
}
