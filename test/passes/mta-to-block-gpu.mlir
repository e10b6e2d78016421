// MTA's GPU form (MtaToBlockGpu.cpp, docs/block-program.md "MTA's GPU
// form"): attn-to-block{target=sm_90} lowers the released configuration to
// the rope kernels (q, k rotated into hi/lo pairs), the LSE pass and the
// output pass over (64-query tile, batch x head group) programs, 4 warps,
// mma.sync layouts; the stencils read their score scratch back shifted with
// in_bounds loads in the accumulator layout. Pre-only: one kernel whose
// softmax state is the key loop's carried values (no mixing: one head per
// program), no state scratch.
// RUN: attn-opt %attn_examples/mta_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" | FileCheck %s
// RUN: attn-opt %attn_examples/mta_pre_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" | FileCheck %s --check-prefix=PRE
// RUN: not attn-opt %s --split-input-file --attn-to-block="target=sm_90" 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: func.func private @main_rope_q(
// CHECK-SAME: %arg4: memref<?x?x?x128xbf16>)
// CHECK: func.func private @main_mta_lse_kernel(
// CHECK-SAME: attn_block.num_warps = 4
// CHECK: attn_block.local_alloc : !attn_block.smem<80x128xbf16
// The scores as q_hi k_hi^T + q_lo k_hi^T + q_hi k_lo^T (RoPE's pairs).
// CHECK-COUNT-3: attn_block.dot {{.*}} transpose_b : tensor<64x128xbf16, {{.*}} -> tensor<64x80xf32, #mma>
// CHECK: attn_block.store {{.*}} in_bounds : tensor<64x80xf32
// CHECK: attn_block.barrier
// CHECK: scf.for
// CHECK: attn_block.load {{.*}} in_bounds : memref<?x?x192x80xf32> -> tensor<64x64xf32
// CHECK: func.func private @main_mta_output_kernel(
// CHECK: attn_block.local_alloc : !attn_block.smem<96x128xbf16
// CHECK: -> tensor<64x96xf32
// CHECK: attn_block.launch @main_rope_table
// CHECK: attn_block.launch @main_rope_q
// CHECK: attn_block.launch @main_rope_k
// CHECK: attn_block.launch @main_mta_lse_kernel
// CHECK: attn_block.launch @main_mta_output_kernel

// PRE: func.func private @main_mta_kernel(
// PRE: %{{.*}}:3 = scf.for {{.*}} iter_args(
// PRE-SAME: tensor<64xf32, #{{.*}}>, tensor<64xf32, #{{.*}}>, tensor<64x128xf32, #{{.*}}>
// PRE-NOT: func.func private
// PRE: attn_block.launch @main_mta_kernel

// BAD: error: attn-to-block{target=sm_90}: the MTA GPU form takes bf16 or f16 q, k, v (the m16n8k16 mma.sync operands)
func.func @f32(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>,
               %tp: tensor<1x2x3xf32>) -> tensor<1x1x64x64xf32> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%tp)
      : (tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x2x3xf32>) -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

// BAD: error: attn-to-block{target=sm_90}: the MTA GPU form takes key-query kernels of up to 65 x 17 taps (a row tile above, 8 keys each side), got 2 x 19
func.func @wide(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>,
                %tp: tensor<1x2x19xf32>) -> tensor<1x1x64x64xbf16> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%tp)
      : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x2x19xf32>) -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}

// -----

// BAD: error: attn-to-block{target=sm_90}: the MTA GPU form needs head dims 64 or 128, got 32
func.func @d32(%q: tensor<1x1x64x32xbf16>, %k: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x32xbf16>,
               %tp: tensor<1x2x3xf32>) -> tensor<1x1x64x32xbf16> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%tp)
      : (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x2x3xf32>) -> tensor<1x1x64x32xbf16>
  return %o : tensor<1x1x64x32xbf16>
}
