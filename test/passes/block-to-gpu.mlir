// attn-to-block{target=sm_90} builds the flash kernel's GPU form and
// attn-block-launch-plan puts it in the gpu.module; attn-block-to-gpu
// lowers it op by op in the flat-pointer ABI: cp.async copies, ldmatrix operands, m16n8k16
// mma.sync, xor-shuffle row reductions, row-guarded stores.
//
// RUN: attn-opt %s --attn-fuse --attn-to-block="target=sm_90" --attn-block-launch-plan="chip=sm_90" | FileCheck %s --check-prefix=FORM
// RUN: attn-opt %s --attn-fuse --attn-to-block="target=sm_90" --attn-block-launch-plan="chip=sm_90" --attn-block-to-gpu | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="format=isa" | FileCheck %s --check-prefix=ISA

// FORM: gpu.module @main_gpu
// FORM: func.func private @main_attention_kernel(%{{.*}}: memref<?x?x?x64xbf16>
// FORM-SAME: attn_block.kernel, attn_block.num_warps = 4
// FORM: attn_block.dot

// CHECK: gpu.module @main_gpu
// CHECK: gpu.func @main_attention_kernel(%{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, {{.*}}) kernel
// CHECK-SAME: attn_block.shared_bytes = 40960
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: memref.reinterpret_cast
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: scf.for {{.*}} -> (f32, f32,
// CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: scf.if
// CHECK: vector.store {{.*}} : memref<?x?x?x64xbf16>, vector<2xbf16>
// CHECK-NOT: {{^ *(%[^ ]* = )?attn_block\.}}
// CHECK-NOT: unrealized_conversion_cast
// The redo kernel (FlashRows): the scan of its rows' marks, then the walk
// with P V's skip_zero_a (the value tile cleaned, three mma.sync a step).
// CHECK: gpu.func @main_attention_nonfinite_rows(
// CHECK: gpu.shuffle up
// CHECK: scf.if
// CHECK: arith.cmpf uno
// CHECK-NOT: {{^ *(%[^ ]* = )?attn_block\.}}
// CHECK-NOT: unrealized_conversion_cast

// ISA: gpu.binary @main_gpu
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
