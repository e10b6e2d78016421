// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_80" | FileCheck %s
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct warps=8 block-n=128" | FileCheck %s --check-prefix=OPTS
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct m-tiles=2" | FileCheck %s --check-prefix=MT2

// FoX + RoPE, GQA (4 query heads on 2 kv heads), D = 128, bf16: the plan
// says what the runtime launches; the kernels are tensor-core code.

// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @main({{.*}}) -> tensor<?x4x?x128xbf16> attributes {attn.gpu_module = @main_gpu, attn_launch.plan = #attn_launch.plan<
// CHECK:   attn.attention
// CHECK: gpu.module @main_gpu [#nvvm.target<O = 3, chip = "sm_80">] attributes {attn.plan = {
// CHECK-SAME: block_m = 64 : i64, block_n = 64 : i64
// griddepcontrol needs sm_90: no dependent launch on sm_80.
// CHECK-SAME: dependent_launch = 0 : i64
// CHECK-SAME: gate = 1 : i64
// CHECK-SAME: head_dim = 128 : i64
// CHECK-SAME: rope = 1 : i64
// Q, K/V stages, FoX's four record slots: 2 * (64 * 128 + 2 * 64 * 256)
// + 4 * 4 * (4 + 64).
// CHECK-SAME: smem_bytes = 83008 : i64
// CHECK-SAME: threads = 128 : i64
// CHECK: gpu.func @rope_table(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index) kernel
// CHECK:   math.cos %{{.*}} : f64
// CHECK: gpu.func @rope(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel
// The gate kernel scans each row in rounds of 2048 keys: 256 threads, a
// shared f64 sum per warp and a shared f64 copy of the round.
// CHECK: gpu.func @gate(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index) workgroup(%{{.*}} : memref<8xf64, #gpu.address_space<workgroup>>, %{{.*}} : memref<2048xf64, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2048
// CHECK:     gpu.barrier
// CHECK-NOT: nvvm.minctasm
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: gpu.func @attention(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK:   gpu.dynamic_shared_memory
// Tile copies: the rows a thread has left, once, as i32; each 16-byte chunk
// (8 rows further on than the previous one) is one 32-bit compare.
// CHECK:   %[[LEFT:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK:   arith.cmpi slt, %c0_i32, %[[LEFT]] : i32
// CHECK:   nvgpu.device_async_copy {{.*}} {bypassL1}
// CHECK:   arith.cmpi slt, %c8_i32, %[[LEFT]] : i32
// CHECK:   nvgpu.device_async_copy {{.*}} {bypassL1}
// CHECK:   nvgpu.device_async_create_group
// CHECK:   nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:   scf.for
// CHECK:     nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK:     gpu.shuffle xor
// CHECK:     math.exp2
// CHECK:     nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}

// OPTS: block_m = 128 : i64, block_n = 128 : i64
// OPTS-SAME: dependent_launch = 1 : i64
// OPTS: threads = 256 : i64
// sm_90 (the default chip): the rope pass over k and the gate kernel let
// the attention kernel start early; it copies Q (rotated in the kernel)
// first and waits for them before it copies the first FoX records (mma.sync
// copies two with Q).
// OPTS: gpu.func @rope(
// OPTS-NEXT: nvvm.griddepcontrol launch_dependents
// OPTS: gpu.func @gate(
// OPTS-NEXT: nvvm.griddepcontrol launch_dependents
// OPTS: gpu.func @attention(
// OPTS-SAME: known_block_size = array<i32: 256, 1, 1>
// OPTS-NOT: nvvm.griddepcontrol
// OPTS: nvgpu.device_async_copy %arg0
// OPTS-NOT: nvgpu.device_async_create_group
// OPTS: nvvm.griddepcontrol wait
// OPTS-NOT: nvvm.griddepcontrol
// OPTS: nvgpu.device_async_copy %arg4
// OPTS-NOT: nvvm.griddepcontrol

// Two m16 row tiles per warp: 128 rows with 4 warps.
// MT2: block_m = 128 : i64
// MT2-SAME: m_tiles = 2 : i64
// MT2: known_block_size = array<i32: 128, 1, 1>

func.func @main(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) gate(%g) : (tensor<?x4x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16>
  return %o : tensor<?x4x?x128xbf16>
}
