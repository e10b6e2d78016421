// RUN: attn-opt %s --attn-attention-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: sed 's/gate(%g)/gate(%g) scale -0.1/' %s | attn-opt --attn-attention-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=NEG
// RUN: attn-opt %s --attn-attention-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-attention-to-gpu="chip=sm_90a overlap=true" | FileCheck %s --check-prefix=OVL

// Where FoX's bias enters the scores (GpuPlan::gateInAcc). With a positive
// scale its key term u is the initial value of S = Q K^T: the gate kernel
// writes one record per key tile (G'_j0, padding, then u_j in key order),
// the attention kernel copies records two tiles ahead into four shared
// slots of 68 floats (the first two with Q), reads a tile's record (a key
// pair per 8-byte load) after issuing the step's copies, before its wait
// and barrier, and every k16 step accumulates. D = 64 here: S is m64n64
// (32 accumulators, scale-d operand 66, not 34).

// The tiles (2 * (64 * 64 + 2 * 64 * 128)), four record slots
// (4 * 4 * (4 + 64)), 1024 bytes of alignment slack.
// CHECK: smem_bytes = 43072 : i64
// The gate kernel stores G, u, G again as its tile's record head for a
// tile's first key, and zeros for the last tile's keys past S.
// CHECK: gpu.func @gate
// CHECK:   scf.for
// CHECK:     scf.if
// CHECK:       memref.store %{{.*}} : memref<?xf32>
// CHECK:       memref.store %{{.*}} : memref<?xf32>
// CHECK-NOT:   memref.store
// CHECK:       arith.cmpi eq
// CHECK:       scf.if
// CHECK:         memref.store %{{.*}} : memref<?xf32>
// CHECK:   scf.yield
// CHECK:   scf.if
// CHECK:     memref.store %{{.*}} : memref<?xf32>
// CHECK-NOT: memref.store
// Five blocks per SM fit in shared memory: ptxas is asked for them.
// CHECK: gpu.func @attention
// CHECK-SAME: nvvm.minctasm = 5 : i32
// The records of the first two tiles join Q's group.
// CHECK:   nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 4 {bypassL1} : memref<?xf32> to memref<272xf32, #gpu.address_space<workgroup>>
// CHECK:   nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 4 {bypassL1} : memref<?xf32> to memref<272xf32, #gpu.address_space<workgroup>>
// CHECK:   nvgpu.device_async_create_group
// CHECK: scf.for %[[IT:[a-z0-9_]+]] = 
// CHECK:   nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 4 {bypassL1} : memref<?xf32> to memref<272xf32, #gpu.address_space<workgroup>>
// CHECK:   arith.andi %[[IT]], %c3{{.*}} : index
// CHECK:   memref.load {{.*}} : memref<272xf32, #gpu.address_space<workgroup>>
// CHECK:   vector.load {{.*}} : memref<272xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK:   nvgpu.device_async_wait
// CHECK:   gpu.barrier
// CHECK:   "wgmma.fence.sync.aligned;"
// CHECK-NOT: wgmma.mma_async
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

// mma.sync (sm_80) starts its accumulators from the same initial scores.
// MMA: gpu.func @attention
// MMA: scf.for
// MMA:   vector.load {{.*}} : memref<272xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// MMA:   nvvm.mma.sync

func.func @main(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %g: tensor<?x2x?xf32>) -> tensor<?x2x?x64xbf16> {
  %o = attn.attention %q, %k, %v gate(%g) : (tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?xf32>) -> tensor<?x2x?x64xbf16>
  return %o : tensor<?x2x?x64xbf16>
}
