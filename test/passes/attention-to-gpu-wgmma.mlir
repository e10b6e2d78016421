// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a warps=8 block-n=128 overlap=true" | FileCheck %s
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a" | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a warps=2" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a m-tiles=2" 2>&1 | FileCheck %s --check-prefix=MTILES
// RUN: not attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a block-n=32" 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90 overlap=true" 2>&1 | FileCheck %s --check-prefix=OVERLAP

// sm_90a: the attention kernel multiplies with warpgroup MMA (wgmma, inline
// PTX) on 128-byte swizzled shared tiles instead of ldmatrix + mma.sync.
// FoX + RoPE, GQA, D = 128, bf16.

// CHECK: gpu.module @main_gpu [#nvvm.target<O = 3, chip = "sm_90a">] attributes {attn.plan = {
// CHECK-SAME: block_m = 128 : i64, block_n = 128 : i64
// CHECK-SAME: overlap = 1 : i64
// The tiles (2 * (128 * 128 + 2 * 128 * 256)), FoX's A tile (256), its
// record slot per stage (2 * 4 * (4 * 128 + 4)), padding so the last slot's
// descriptor span (16 x 128 bf16) stays inside (2032) and 1024 bytes to
// align the tiles on the swizzle pattern.
// CHECK-SAME: smem_bytes = 171280 : i64
// CHECK-SAME: threads = 256 : i64
// CHECK-SAME: wgmma = 1 : i64
// The gate kernel writes G and each key's initial score u_j (a 16-byte
// record row).
// CHECK: gpu.func @gate
// CHECK:   gpu.barrier
// CHECK:   scf.if
// CHECK:     memref.store {{.*}} : memref<?xf32>
// CHECK:     vector.store {{.*}} : memref<?xf32>, vector<4xf32>
// RoPE on q happens in the kernel (its Q tile, in shared memory): the
// cos/sin tables and the first query's table row are arguments.
// CHECK: gpu.func @attention({{.*}}, %{{.*}}: index, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index) kernel
// CHECK-NOT: nvgpu.ldmatrix
// CHECK:   memref.extract_aligned_pointer_as_index
// CHECK:   nvgpu.device_async_copy
// V's second stage starts as zeros (the first step multiplies it by P = 0).
// CHECK:   vector.store {{.*}} : memref<{{.*}}xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// Q's group lands before the loop; RoPE rotates the Q tile.
// CHECK:   nvgpu.device_async_wait {{.*}} {numGroups = 2 : i32}
// CHECK:   vector.load {{.*}} : memref<?xf32>, vector<8xf32>
// CHECK:   arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK:   scf.for
// The next tile's record travels with its K tile: 16 bytes per copy.
// CHECK:     nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 4 {bypassL1} : memref<?xf32> to memref<1032xf32, #gpu.address_space<workgroup>>
// K_{j+1} in flight; K_j (and its record) and V_{j-1} landed (two newest
// groups pending).
// CHECK:     nvgpu.device_async_wait {{.*}} {numGroups = 2 : i32}
// CHECK:     "fence.proxy.async.shared::cta;"
// G'_j0 from the record's tail.
// CHECK:     memref.load {{.*}} : memref<1032xf32, #gpu.address_space<workgroup>>
// CHECK:     "wgmma.fence.sync.aligned;"
// S = u + Q K^T: the bias step from zero (scale-d operand 66), then every
// k16 step of Q K^T accumulates (operand 130), both operands from shared
// memory (descriptors), K-major.
// CHECK-NOT: wgmma.mma_async
// CHECK:     setp.ne.b32 p, $66, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, $64, $65, p, 1, 1, 0, 0;
// CHECK:     setp.ne.b32 p, $130, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, $128, $129, p, 1, 1, 0, 0;
// CHECK:     "wgmma.commit_group.sync.aligned;"
// O += P_{j-1} V_{j-1}: P from registers, V N-major (transposed B), issued
// behind S_j; the softmax waits for S_j only.
// CHECK:     wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;
// CHECK:     "wgmma.commit_group.sync.aligned;"
// CHECK:     "wgmma.wait_group.sync.aligned 1;"
// CHECK:     math.exp2
// CHECK:     "wgmma.wait_group.sync.aligned 0;"
// CHECK:     gpu.barrier
// CHECK:     nvgpu.device_async_copy
// CHECK:   scf.yield
// The last step's P V after the loop.
// CHECK:   wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;
// CHECK:   "wgmma.wait_group.sync.aligned 0;"
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: gpu.return

// One warpgroup, 64-key tiles: S is m64n64, P V stays m64n128 (Dv = 128).
// Without the overlap each product is waited for where it is issued.
// SMALL: block_m = 64 : i64, block_n = 64 : i64
// SMALL-SAME: overlap = 0 : i64
// SMALL: known_block_size = array<i32: 128, 1, 1>
// Two blocks per SM at D = 128: no occupancy hint.
// SMALL-NOT: nvvm.minctasm
// SMALL: scf.for
// SMALL:   nvgpu.device_async_wait {{.*}} {numGroups = 1 : i32}
// SMALL:   wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// SMALL:   "wgmma.wait_group.sync.aligned 0;"
// SMALL:   math.exp2
// SMALL:   wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SMALL:   "wgmma.wait_group.sync.aligned 0;"
// SMALL:   gpu.barrier
// SMALL:   scf.yield

// WARPS: GPU option warps must be 4 or 8 (one or two warpgroups) for the sm_90a wgmma kernel, got 2
// MTILES: GPU option m-tiles must be 1 for the sm_90a wgmma kernel (a warpgroup owns 64 rows), got 2
// BLOCKN: GPU option block-n must be 64 or 128 for the sm_90a wgmma kernel
// OVERLAP: GPU option overlap needs the sm_90a wgmma kernel (chip=sm_90a)

func.func @main(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) gate(%g) : (tensor<?x4x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16>
  return %o : tensor<?x4x?x128xbf16>
}
