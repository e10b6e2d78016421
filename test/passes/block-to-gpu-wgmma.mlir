// attn-to-block{target=sm_90a} builds the flash kernel's wgmma form and
// attn-block-launch-plan puts it in the gpu.module; attn-block-to-gpu
// lowers it in the flat-pointer ABI with its shared memory (Q, 2 K and 2
// V stages on 1024-byte bounds, with 1 KB of alignment slack): cp.async
// into 128-byte swizzled panels, fence.proxy.async before the barrier that
// publishes them, S = Q K^T as D / 16 m64n64k16 from two shared
// descriptors (D = A B: scale-d 0), P V as block-n / 16 m64n64k16 with P
// in registers and V N-major, each fenced, committed and waited for.
//
// RUN: attn-opt %s --attn-fuse --attn-to-block="target=sm_90a" --attn-block-launch-plan="chip=sm_90a" --attn-block-to-gpu | FileCheck %s
// RUN: attn-opt %s --attn-fuse --attn-to-block="target=sm_90a warps=8 block-n=128" --attn-block-launch-plan="chip=sm_90a" --attn-block-to-gpu | FileCheck %s --check-prefix=WG2
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a" --attn-dump-ptx=%t.ptx | FileCheck %s --check-prefix=BIN
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// CHECK: gpu.func @main_attention_kernel(%{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel
// CHECK-SAME: attn_block.shared_bytes = 41984
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "fence.proxy.async.shared::cta;"
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: "fence.proxy.async.shared::cta;"
// CHECK: "wgmma.fence.sync.aligned;"
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-SAME: $32, $33, p, 1, 1, 0, 0;
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: "wgmma.commit_group.sync.aligned;"
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: gpu.shuffle xor
// CHECK: "wgmma.fence.sync.aligned;"
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: "wgmma.commit_group.sync.aligned;"
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: gpu.barrier
// CHECK-NOT: {{^ *(%[^ ]* = )?attn_block\.}}
// CHECK-NOT: unrealized_conversion_cast

// Two warpgroups of 64 rows, 128-key tiles: 2 (128 x 64 + 2 x 2 x 128 x
// 64) + 1024 bytes.
// WG2: attn_block.shared_bytes = 82944
// WG2-SAME: known_block_size = array<i32: 256, 1, 1>
// WG2: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// WG2: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;

// BIN: gpu.binary @main_gpu
// PTX: .target sm_90a
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
