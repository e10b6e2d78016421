// attn_block.async_store_add and async_store_wait, the reducing store of a
// tile staged in shared memory: they print and parse; on the CPU the adds
// happen at issue (a reducing store of the buffer's tile, its rows bounded
// by the memref); on the GPU thread r adds row r with one
// cp.reduce.async.bulk (rows outside the memref issue nothing) and the wait
// is cp.async.bulk.wait_group. The flash backward's dQ (grad-dq=reduce,
// FlashGradToBlock.cpp) uses them from sm_90 on.
// RUN: attn-opt %s | attn-opt | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s --attn-block-strip-gpu | FileCheck %s --check-prefix=STRIP
// RUN: attn-opt %s --attn-block-strip-gpu --attn-block-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --attn-block-to-gpu | FileCheck %s --check-prefix=GPU

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#p = #attn_block.padded_shared<rowStride = 72>
gpu.module @m {
  // ROUND-LABEL: func.func private @stage_and_add
  // ROUND: attn_block.async_store_wait pending 0 read
  // ROUND: attn_block.async_store_add %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] dims [1, 2] :
  // ROUND: attn_block.async_store_wait pending 0{{$}}
  // STRIP-LABEL: func.func private @stage_and_add
  // STRIP-NOT: async_store
  // STRIP: %[[T:.*]] = attn_block.load %{{.*}}[%{{.*}}, %{{.*}}] dims [0, 1] padding 0.000000e+00 in_bounds : memref<64x64xf32, strided<[72, 1], offset: ?>> -> tensor<64x64xf32>
  // STRIP: attn_block.store %[[T]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] dims [1, 2] add : tensor<64x64xf32> -> memref<?x?x64xf32>
  // STRIP-NOT: async_store
  // CPU-LABEL: func.func private @stage_and_add
  // CPU: memref.atomic_rmw addf
  // GPU-LABEL: gpu.func @stage_and_add
  // GPU: nvvm.cp.async.bulk.wait_group 0 {read}
  // GPU: vector.store %{{.*}} : memref<?xf32, #gpu.address_space<workgroup>>, vector<2xf32>
  // GPU: "fence.proxy.async.shared::cta;"
  // GPU: gpu.barrier
  // GPU: gpu.thread_id x
  // GPU: scf.if
  // GPU: llvm.inline_asm has_side_effects {{.*}}"{ .reg .u64 g; cvta.to.global.u64 g, $0; cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [g], [$1], $2; cp.async.bulk.commit_group; }", "l,r,r"
  // GPU-NOT: cp.reduce
  // GPU: nvvm.cp.async.bulk.wait_group 0{{$}}
  func.func private @stage_and_add(%s: memref<64x64xf32>, %o: memref<?x?x64xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %h = attn_block.program_id 1
    %i0 = attn_block.program_id 0
    %buf = attn_block.local_alloc : !attn_block.smem<64x64xf32, #p>
    attn_block.async_store_wait pending 0 read
    %x = attn_block.load %s[%c0, %c0] dims [0, 1] padding 0.0 : memref<64x64xf32> -> tensor<64x64xf32, #mma>
    attn_block.local_store %x, %buf : tensor<64x64xf32, #mma> -> !attn_block.smem<64x64xf32, #p>
    attn_block.fence_async_shared
    attn_block.barrier
    attn_block.async_store_add %buf into %o[%h, %i0, %c0] dims [1, 2] : !attn_block.smem<64x64xf32, #p> -> memref<?x?x64xf32>
    attn_block.async_store_wait pending 0
    return
  }
}
