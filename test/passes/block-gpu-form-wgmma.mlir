// attn-to-block for sm_90a: the flash kernel's GPU form for warpgroup MMA.
// Q, K and V go into 128-byte swizzled buffers that the dots read in place
// (wgmma descriptors); S and O are in the accumulator layouts of their
// instructions (m64n64k16, m64n128k16), P is the register A of P V, and a
// fence_async_shared makes each waited copy visible to wgmma.
//
// RUN: attn-opt %s --attn-to-block="target=sm_90a" | FileCheck %s
// RUN: attn-opt %s --attn-to-block="target=sm_90a" --attn-block-strip-gpu | FileCheck %s --check-prefix=STRIP
// RUN: not attn-opt %s --attn-to-block="target=sm_90a block-n=512" 2>&1 | FileCheck %s --check-prefix=BIGN

// CHECK-DAG: #[[S:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
// CHECK-DAG: #[[O:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128, 16]>
// CHECK-DAG: #[[NV:.*]] = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
// CHECK-DAG: #[[P:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[O]], kWidth = 2>
// CHECK-DAG: #[[ROWS:.*]] = #attn_block.slice<dim = 1, parent = #[[S]]>
// CHECK-DAG: #[[ROWO:.*]] = #attn_block.slice<dim = 1, parent = #[[O]]>
// CHECK-LABEL: func.func private @main_attention_kernel
// (min_blocks_per_sm: 57 KB of buffers, 3 blocks per SM; gpu_occupancy::occupancyHint)
// CHECK-SAME: attn_block.kernel, attn_block.min_blocks_per_sm = 3 : i64, attn_block.num_warps = 4
// CHECK: %[[SQ:.*]] = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #[[NV]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #[[NV]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<2x64x128xbf16, #[[NV]]>
// CHECK: attn_block.async_copy
// CHECK: attn_block.async_wait pending 1
// CHECK-NEXT: attn_block.fence_async_shared
// CHECK-NEXT: attn_block.barrier
// CHECK: %[[QA:.*]] = attn_block.local_load %[[SQ]] : !attn_block.smem<64x64xbf16, #[[NV]]> -> tensor<64x64xbf16, #[[NV]]>
// CHECK: scf.for
// CHECK: attn_block.async_wait pending 1
// CHECK-NEXT: attn_block.fence_async_shared
// CHECK-NEXT: attn_block.barrier
// CHECK: %[[KT:.*]] = attn_block.local_load %{{.*}} -> tensor<64x64xbf16, #[[NV]]>
// CHECK: attn_block.dot %[[QA]], %[[KT]], %{{.*}} transpose_b : tensor<64x64xbf16, #[[NV]]>, tensor<64x64xbf16, #[[NV]]> -> tensor<64x64xf32, #[[S]]>
// CHECK: attn_block.reduce max {{.*}} -> tensor<64xf32, #[[ROWS]]>
// CHECK: attn_block.convert_layout {{.*}} : tensor<64x64xbf16, #[[S]]> -> tensor<64x64xbf16, #[[P]]>
// CHECK: %[[VT:.*]] = attn_block.local_load %{{.*}} -> tensor<64x128xbf16, #[[NV]]>
// CHECK: attn_block.convert_layout {{.*}} : tensor<64xf32, #[[ROWS]]> -> tensor<64xf32, #[[ROWO]]>
// CHECK: attn_block.dot %{{.*}}, %[[VT]], %{{.*}} : tensor<64x64xbf16, #[[P]]>, tensor<64x128xbf16, #[[NV]]> -> tensor<64x128xf32, #[[O]]>
// CHECK: attn_block.barrier
// CHECK: attn_block.store {{.*}} : tensor<64x128xbf16, #[[O]]>

// STRIP-NOT: #attn_block.nvmma_shared
// STRIP-NOT: attn_block.fence_async_shared
// STRIP: attn_block.dot {{.*}} transpose_b : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>

// BIGN: the sm_90a GPU form needs block-n <= 256 (the N of m64nNk16), got 512
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
