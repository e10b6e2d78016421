// attn-to-block for a GPU target: the flash kernel in the GPU form (layouts,
// shared buffers, the cp.async pipeline), for attn-block-to-gpu. The CPU
// target gets the same kernel (sm_80's layouts, which attn-block-strip-gpu
// drops), with P kept in f32 for P V (the CPU's dots are f32).
//
// RUN: attn-opt %s --attn-to-block="target=sm_90" | FileCheck %s
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=CPU
// RUN: not attn-opt %s --attn-to-block="target=sm_70" 2>&1 | FileCheck %s --check-prefix=BADTARGET

// CHECK-DAG: #[[MMA:.*]] = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
// CHECK-DAG: #[[SW:.*]] = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-DAG: #[[A:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[B:.*]] = #attn_block.dot_operand<opIdx = 1, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[ROW:.*]] = #attn_block.slice<dim = 1, parent = #[[MMA]]>
// CHECK-LABEL: func.func private @main_attention_kernel
// CHECK-SAME: attn_block.kernel, attn_block.num_warps = 4
// CHECK: attn_block.local_alloc : !attn_block.smem<64x64xbf16, #[[SW]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #[[SW]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<2x64x128xbf16, #[[SW]]>
// CHECK: attn_block.async_copy
// CHECK: attn_block.async_commit_group
// CHECK: attn_block.async_wait pending 1
// CHECK: attn_block.barrier
// CHECK: attn_block.local_load %{{.*}} -> tensor<64x64xbf16, #[[A]]>
// CHECK: scf.for
// CHECK: attn_block.async_copy
// CHECK: attn_block.async_wait pending 1
// CHECK: attn_block.local_load %{{.*}} -> tensor<64x64xbf16, #[[B]]>
// CHECK: attn_block.dot {{.*}} transpose_b : tensor<64x64xbf16, #[[A]]>, tensor<64x64xbf16, #[[B]]> -> tensor<64x64xf32, #[[MMA]]>
// CHECK: attn_block.reduce max {{.*}} -> tensor<64xf32, #[[ROW]]>
// CHECK: attn_block.convert_layout {{.*}} : tensor<64x64xbf16, #[[MMA]]> -> tensor<64x64xbf16, #[[A]]>
// CHECK: attn_block.local_load %{{.*}} -> tensor<64x128xbf16, #[[B]]>
// CHECK: attn_block.dot {{.*}} -> tensor<64x128xf32, #[[MMA]]>
// CHECK: attn_block.barrier
// CHECK: attn_block.store {{.*}} : tensor<64x128xbf16, #[[MMA]]>
// CHECK: attn_block.launch @main_attention_kernel

// CPU-DAG: #[[MMA:.*]] = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
// CPU-DAG: #[[A:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CPU: func.func private @main_attention_kernel
// CPU-NOT: griddep_wait
// CPU: attn_block.async_copy
// CPU: attn_block.convert_layout %{{.*}} : tensor<64x64xf32, #[[MMA]]> -> tensor<64x64xf32, #[[A]]>
// CPU: attn_block.dot {{.*}} -> tensor<64x128xf32, #[[MMA]]>
// CPU: attn_block.launch @main_attention_kernel

// BADTARGET: unknown block-program target 'sm_70' (expected cpu, sm_80, sm_90 or sm_90a)
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
