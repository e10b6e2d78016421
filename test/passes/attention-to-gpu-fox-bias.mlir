// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a" | FileCheck %s
// RUN: sed 's/gate(%g)/gate(%g) scale -0.1/' %s | attn-opt --attn-attention-to-gpu="lowering=direct chip=sm_90a" | FileCheck %s --check-prefix=NEG
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_80" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a overlap=true" | FileCheck %s --check-prefix=OVL

// Where FoX's bias enters the scores (GpuPlan::gateInAcc). With a positive
// scale its key term u is the initial value of S = Q K^T. With wgmma
// (GpuPlan::gateInMma) the gate kernel writes one record per key tile: 16
// bytes per key (u_j as three bf16 pieces), then G'_j0; the attention
// kernel copies a tile's record with its K tile into a slot per stage (65
// chunks of 16 bytes), and S starts with one more k16 wgmma: a constant
// shared A tile (ones in columns 0-2) times the record, without swizzle.
// D = 64 here: S is m64n64 (32 accumulators).

// The tiles (2 * (64 * 64 + 2 * 64 * 128)), the A tile (256), two record
// slots (2 * 4 * (4 * 64 + 4)), padding so the last slot's descriptor span
// (16 x 64 bf16 = 2048 bytes) stays inside (1008), 1024 bytes of alignment
// slack.
// CHECK: smem_bytes = 45328 : i64
// The gate kernel lets the attention kernel launch early (programmatic
// dependent launch, sm_90+). 256 threads scan a round of 2048 keys (8
// consecutive keys each): warp shuffles (f64 as two i32), then each thread
// adds the totals of the warps before its own, one barrier between the
// thread sums and the round's values. It stores G, the key's record row,
// and G again after its tile's record for a tile's first key; zero rows for
// the last tile's keys past S.
// CHECK: gpu.func @gate({{.*}}) workgroup(%{{.*}} : memref<8xf64, #gpu.address_space<workgroup>>, %{{.*}} : memref<2048xf64, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2048
// CHECK:     gpu.barrier
// CHECK:     gpu.shuffle up %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK:     scf.if
// CHECK:       memref.store %{{.*}} : memref<8xf64, #gpu.address_space<workgroup>>
// CHECK:     gpu.barrier
// CHECK-COUNT-8: memref.load %{{.*}} : memref<8xf64, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK:     vector.store %{{.*}} : memref<2048xf64, #gpu.address_space<workgroup>>, vector<4xf64>
// CHECK:     vector.store %{{.*}} : memref<2048xf64, #gpu.address_space<workgroup>>, vector<4xf64>
// CHECK-NEXT: gpu.barrier
// u's three bf16 pieces come from the f32 u.
// CHECK:     arith.truncf %{{.*}} : f64 to f32
// CHECK:     arith.truncf %{{.*}} : f32 to bf16
// CHECK:     arith.extf %{{.*}} : bf16 to f32
// CHECK:     arith.truncf %{{.*}} : f32 to bf16
// CHECK:     arith.extf %{{.*}} : bf16 to f32
// CHECK:     arith.truncf %{{.*}} : f32 to bf16
// CHECK:     scf.if
// CHECK:       memref.store %{{.*}} : memref<?xf32>
// CHECK:       vector.store %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK-NOT:   memref.store
// CHECK:       arith.cmpi eq
// CHECK:       scf.if
// CHECK:         memref.store %{{.*}} : memref<?xf32>
// CHECK:   scf.yield
// CHECK:   scf.if
// CHECK:     vector.store %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK-NOT: memref.store
// Five blocks per SM fit in shared memory: ptxas is asked for them.
// CHECK: gpu.func @attention
// CHECK-SAME: nvvm.minctasm = 5 : i32
// The A tile: ones in columns 0-2 (bf16 0x3F80 = 16256) for 8 rows, zeros.
// CHECK:   arith.constant dense<[1065369472, 16256, 0, 0]> : vector<4xi32>
// CHECK:   vector.store %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// Q and the first K and V tiles are inputs: copied before the kernel waits
// for the gate kernel's results; the first record joins the first K tile's
// group after the wait.
// CHECK:   nvgpu.device_async_create_group
// CHECK:   nvgpu.device_async_copy %arg1
// CHECK:   nvgpu.device_async_copy %arg2
// CHECK-NOT: memref<520xf32
// CHECK:   nvvm.griddepcontrol wait
// CHECK:   arith.cmpi slt, %{{.*}}, %c65
// CHECK:   nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 4 {bypassL1} : memref<?xf32> to memref<520xf32, #gpu.address_space<workgroup>>
// CHECK:   nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK:   arith.cmpi slt, %{{.*}}, %c65
// CHECK:   nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 4 {bypassL1} : memref<?xf32> to memref<520xf32, #gpu.address_space<workgroup>>
// CHECK:   nvgpu.device_async_create_group
// CHECK:   nvgpu.device_async_wait
// CHECK:   gpu.barrier
// CHECK:   memref.load {{.*}} : memref<520xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: vector.load {{.*}} : memref<520xf32
// CHECK:   "wgmma.fence.sync.aligned;"
// The bias step: fresh accumulators (scale-d operand 34), A and B from
// shared memory, bf16; then Q K^T accumulates (scale-d operand 66).
// CHECK:   setp.ne.b32 p, $34, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, $32, $33, p, 1, 1, 0, 0;
// CHECK:   setp.ne.b32 p, $66, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, $64, $65, p, 1, 1, 0, 0;
// CHECK:   "wgmma.wait_group.sync.aligned 0;"

// A negative scale keeps the bias per score (max and masks cannot work on
// raw scores): 4-byte G tiles, S from zero, one FMA per score.
// NEG: smem_bytes = 42496 : i64
// NEG: gpu.func @attention
// NEG: scf.for
// NEG:   nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 1, {{.*}} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
// NEG:   "wgmma.fence.sync.aligned;"
// NEG:   setp.ne.b32 p, $34, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, $32, $33, p, 1, 1, 0, 0;
// NEG:   "wgmma.wait_group.sync.aligned 0;"
// NEG:   math.fma

// With the overlap (P of the previous step live, 96 registers would spill)
// the kernel carries no occupancy hint.
// OVL: overlap = 1 : i64
// OVL: gpu.func @attention
// OVL-NOT: nvvm.minctasm

// mma.sync (sm_80) starts its accumulators from the same initial scores,
// read from records of G'_j0, padding and u_j in key order (four slots of
// 68 floats), two 8-byte loads per pair of columns.
// MMA: gpu.func @attention
// MMA: scf.for
// MMA:   vector.load {{.*}} : memref<272xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// MMA:   nvvm.mma.sync

func.func @main(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %g: tensor<?x2x?xf32>) -> tensor<?x2x?x64xbf16> {
  %o = attn.attention %q, %k, %v gate(%g) : (tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?xf32>) -> tensor<?x2x?x64xbf16>
  return %o : tensor<?x2x?x64xbf16>
}
