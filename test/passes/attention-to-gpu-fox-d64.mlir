// RUN: attn-opt %s --attn-attention-to-gpu="chip=sm_90a" | FileCheck %s

// FoX at D = 64 on sm_90a keeps the bias per score (GpuPlan::gateInMma is
// for D >= 128): the kernel copies 4-byte G tiles, the gate kernel writes
// G only (no key extension records), and S = Q K^T is the four k16 steps
// alone.

// The tiles (2 * (64 * 64 + 2 * 64 * 128)), G tiles (4 * 2 * 64), 1024
// bytes of alignment slack.
// CHECK: smem_bytes = 42496 : i64
// CHECK: gpu.func @gate
// CHECK-NOT: vector.store {{.*}} vector<4xf32>
// CHECK: gpu.func @attention
// CHECK: scf.for
// CHECK:   nvgpu.device_async_copy %arg4[{{.*}}], %{{.*}}[{{.*}}], 1, {{.*}} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
// CHECK:   "wgmma.fence.sync.aligned;"
// CHECK-NOT: {$64, $65, $66, $67}
// CHECK:   wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, $32, $33, p, 1, 1, 0, 0;
// CHECK:   math.fma

func.func @main(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %g: tensor<?x2x?xf32>) -> tensor<?x2x?x64xbf16> {
  %o = attn.attention %q, %k, %v gate(%g) : (tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?xf32>) -> tensor<?x2x?x64xbf16>
  return %o : tensor<?x2x?x64xbf16>
}
