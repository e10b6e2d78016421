// attn_block.dot's transpose_a (A stored [K, M]) and attn_block.store's add
// (a reducing store) on every backend: they print and parse; the CPU
// lowering transposes A (linalg.transpose) and adds with memref.atomic_rmw
// (programs run on several threads); mma.sync loads the transposed A with
// ldmatrix.trans after a local_store of an accumulator tile into a swizzled
// buffer; wgmma reads it M-major through its descriptor with the
// instruction's transpose bit for A; the GPU reducing store is one atomic
// f32 add per element. The flash backward's dQ (FlashGradToBlock.cpp) is
// built of these.
// RUN: attn-opt %s | attn-opt | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s --attn-block-strip-gpu --attn-block-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --attn-block-to-gpu | FileCheck %s --check-prefix=GPU
// mma.sync: the transposed A [64, 64] is 4 ldmatrix.x4.trans, B [64, 128]
// 32 (.trans: B is [K, N]); 4 k16 steps x 16 n8 tiles of mma; the
// [64, 128] f32 tile is 64 atomic adds per thread.
// RUN: attn-opt %s --attn-block-to-gpu | awk "/gpu.func @mma_sync/,/gpu.return/" | grep -c "transpose = true" | FileCheck %s --check-prefix=TRANS
// RUN: attn-opt %s --attn-block-to-gpu | awk "/gpu.func @mma_sync/,/gpu.return/" | grep -c "nvvm.mma.sync" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-block-to-gpu | awk "/gpu.func @mma_sync/,/gpu.return/" | grep -c "memref.atomic_rmw addf" | FileCheck %s --check-prefix=ATOMIC
// TRANS: {{^}}36{{$}}
// MMA: {{^}}64{{$}}
// ATOMIC: {{^}}64{{$}}

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#sh = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128, 16]>
#wgS = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
gpu.module @m {
  // ROUND-LABEL: func.func private @mma_sync
  // ROUND: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} transpose_a :
  // ROUND: attn_block.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] dims [0, 1] add :
  // CPU-LABEL: func.func private @mma_sync
  // CPU: linalg.transpose
  // CPU: memref.atomic_rmw addf
  // GPU-LABEL: gpu.func @mma_sync
  // GPU: vector.store %{{.*}} : memref<?xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
  // GPU: gpu.barrier
  // GPU: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
  // GPU: nvvm.mma.sync
  // GPU: memref.atomic_rmw addf
  func.func private @mma_sync(%s: memref<64x64xf32>, %k: memref<64x128xbf16>, %o: memref<?x128xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %ds = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #sh>
    %kb = attn_block.local_alloc : !attn_block.smem<64x128xbf16, #sh>
    %t = attn_block.async_copy %k[%c0, %c0] dims [0, 1] padding 0.0 into %kb : memref<64x128xbf16> -> !attn_block.smem<64x128xbf16, #sh>
    %g = attn_block.async_commit_group %t
    attn_block.async_wait %g pending 0
    %x = attn_block.load %s[%c0, %c0] dims [0, 1] padding 0.0 : memref<64x64xf32> -> tensor<64x64xf32, #mma>
    %h = arith.truncf %x : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
    attn_block.local_store %h, %ds : tensor<64x64xbf16, #mma> -> !attn_block.smem<64x64xbf16, #sh>
    attn_block.barrier
    %a = attn_block.local_load %ds : !attn_block.smem<64x64xbf16, #sh> -> tensor<64x64xbf16, #opA>
    %b = attn_block.local_load %kb : !attn_block.smem<64x128xbf16, #sh> -> tensor<64x128xbf16, #opB>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x128xf32, #mma>
    %d = attn_block.dot %a, %b, %z transpose_a : tensor<64x64xbf16, #opA>, tensor<64x128xbf16, #opB> -> tensor<64x128xf32, #mma>
    attn_block.store %d, %o[%c0, %c0] dims [0, 1] add : tensor<64x128xf32, #mma> -> memref<?x128xf32>
    return
  }

  // GPU-LABEL: gpu.func @wgmma
  // GPU: arith.xori
  // GPU: vector.store %{{.*}} : memref<?xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
  // GPU: "fence.proxy.async.shared::cta;"
  // GPU: gpu.barrier
  // GPU: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
  // GPU-SAME: p, 1, 1, 1, 1;
  // GPU-COUNT-3: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
  // GPU: "wgmma.wait_group.sync.aligned 0;"
  // GPU: memref.atomic_rmw addf
  func.func private @wgmma(%s: memref<64x64xf32>, %k: memref<64x128xbf16>, %o: memref<?x128xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %ds = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv>
    %kb = attn_block.local_alloc : !attn_block.smem<64x128xbf16, #nv>
    %t = attn_block.async_copy %k[%c0, %c0] dims [0, 1] padding 0.0 into %kb : memref<64x128xbf16> -> !attn_block.smem<64x128xbf16, #nv>
    %g = attn_block.async_commit_group %t
    attn_block.async_wait %g pending 0
    %x = attn_block.load %s[%c0, %c0] dims [0, 1] padding 0.0 : memref<64x64xf32> -> tensor<64x64xf32, #wgS>
    %h = arith.truncf %x : tensor<64x64xf32, #wgS> to tensor<64x64xbf16, #wgS>
    attn_block.local_store %h, %ds : tensor<64x64xbf16, #wgS> -> !attn_block.smem<64x64xbf16, #nv>
    attn_block.fence_async_shared
    attn_block.barrier
    %a = attn_block.local_load %ds : !attn_block.smem<64x64xbf16, #nv> -> tensor<64x64xbf16, #nv>
    %b = attn_block.local_load %kb : !attn_block.smem<64x128xbf16, #nv> -> tensor<64x128xbf16, #nv>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x128xf32, #wg>
    %d = attn_block.dot %a, %b, %z transpose_a : tensor<64x64xbf16, #nv>, tensor<64x128xbf16, #nv> -> tensor<64x128xf32, #wg>
    attn_block.store %d, %o[%c0, %c0] dims [0, 1] add : tensor<64x128xf32, #wg> -> memref<?x128xf32>
    return
  }
}
