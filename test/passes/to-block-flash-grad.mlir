// attn-to-block on attn.attention_grad: plain and FoX become the flash
// backward's kernels (FlashGradToBlock.cpp): the row term D, dK and dV by a
// query walk per key tile over the query heads of its KV head, dQ by the
// forward's key walk or, with grad-dq=reduce (not FoX), by reducing stores
// from the dK/dV walk (dS^T as a transposed A), and FoX's dg from the row
// and column sums of dS.
// RoPE's is the opposite rotation of the rotated inputs' dq and dk. PaTH
// has no fused backward yet (a remark; the reference lowering runs it).
// The GPU targets take the same kernels (block-launch-plan-training.mlir)
// for 16-bit operands with head dims that are multiples of 8 up to 128, and
// refuse the rest with an error.
// RUN: attn-opt %s --split-input-file --attn-to-block --verify-diagnostics | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-to-block="target=sm_80" 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --split-input-file --attn-to-block="grad-dq=reduce" --verify-diagnostics | FileCheck %s --check-prefix=REDUCE
// RUN: not attn-opt %s --attn-to-block="grad-dq=atomic" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: attn-to-block: option grad-dq must be walk (a second walk, deterministic) or reduce (reducing stores), got 'atomic'


// CHECK-LABEL: func.func private @fox_grad_grad_delta
// CHECK: attn_block.reduce sum
// CHECK-LABEL: func.func private @fox_grad_grad_dq
// CHECK: scf.for
// Two dots per key tile for S and dP (K and V transposed), one for dQ.
// CHECK: attn_block.dot {{.*}} transpose_b
// CHECK: math.exp2
// CHECK: attn_block.dot {{.*}} transpose_b
// CHECK: attn_block.dot
// CHECK-NOT: transpose_b
// CHECK: attn_block.reduce sum
// CHECK-LABEL: func.func private @fox_grad_grad_dkdv
// The query heads of the KV head, then their query tiles.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: attn_block.dot {{.*}} transpose_b
// CHECK-LABEL: func.func private @fox_grad_grad_dg
// CHECK-LABEL: func.func @fox_grad(
// CHECK: attn_block.launch @fox_grad_gate_prefix
// CHECK: attn_block.launch @fox_grad_grad_delta
// CHECK: attn_block.launch @fox_grad_grad_dq
// CHECK: attn_block.launch @fox_grad_grad_dkdv
// CHECK: attn_block.launch @fox_grad_grad_dg
// CHECK-NOT: attn.attention
// GPU: error: attn-to-block{target=sm_80}: the GPU form takes bf16 or f16 q, k, v {{.*}} not f32 operands
func.func @fox_grad(%q: tensor<?x4x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>, %g: tensor<?x4x?xf32>,
                    %o: tensor<?x4x?x32xf32>, %l: tensor<?x4x?xf32>, %do: tensor<?x4x?x32xf32>)
    -> (tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x4x?xf32>) {
  %0:4 = attn.attention_grad %q, %k, %v gate(%g), %o, %l, %do
      : (tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x4x?xf32>,
         tensor<?x4x?x32xf32>, tensor<?x4x?xf32>, tensor<?x4x?x32xf32>)
      -> (tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x4x?xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x4x?xf32>
}

// -----

// RoPE: the kernels take q and k rotated; the opposite rotation of their
// dq and dk (f32 scratch) gives the gradients. grad-dq=reduce: the delta
// kernel zeroes dQ's f32 rows, the dkdv walk adds each tile's scale dS K
// into them, and no dq walk runs.
// CHECK-LABEL: func.func private @rope_grad_grad_dq
// CHECK-NOT: transpose_a
// REDUCE-LABEL: func.func private @rope_grad_grad_delta
// REDUCE: attn_block.store {{.*}} dims [2, 3] : tensor<64x32xf32
// REDUCE-LABEL: func.func private @rope_grad_grad_dkdv
// REDUCE: attn_block.local_store
// REDUCE: attn_block.dot {{.*}} transpose_a
// REDUCE: attn_block.store {{.*}} dims [2, 3] add
// REDUCE-LABEL: func.func @rope_grad(
// REDUCE: attn_block.launch @rope_grad_grad_delta
// REDUCE-NOT: attn_block.launch @rope_grad_grad_dq
// REDUCE: attn_block.launch @rope_grad_grad_dkdv
// REDUCE-NOT: attn_block.launch @rope_grad_grad_dq
// CHECK-LABEL: func.func private @rope_grad_rope_q_inverse
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK-LABEL: func.func @rope_grad(
// CHECK: attn_block.launch @rope_grad_rope_q grid
// CHECK: attn_block.launch @rope_grad_rope_k grid
// CHECK: %[[DQ:.*]] = memref.alloc({{.*}}) : memref<?x?x?x32xbf16>
// CHECK: %[[DQT:.*]] = memref.alloc({{.*}}) : memref<?x?x?x32xf32>
// CHECK: attn_block.launch @rope_grad_grad_dq
// CHECK: attn_block.launch @rope_grad_grad_dkdv
// CHECK: attn_block.launch @rope_grad_rope_q_inverse grid({{.*}}) args(%[[DQT]], %{{.*}}, %{{.*}}, %[[DQ]])
// CHECK: attn_block.launch @rope_grad_rope_k_inverse
func.func @rope_grad(%q: tensor<?x?x?x32xbf16>, %l: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>) {
  %0:3 = attn.attention_grad %q, %q, %q rope(1.0e+04), %q, %l, %q
      : (tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x32xbf16>)
      -> (tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>)
  return %0#0, %0#1, %0#2 : tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>
}

// -----

// PaTH has no fused backward yet: a remark, and the reference lowering
// runs it.
// GPU: error: attn-to-block{target=sm_80}: no fused backward for PaTH and MTA yet
// CHECK-LABEL: func.func @path_grad(
// CHECK: attn.attention_grad
func.func @path_grad(%q: tensor<?x?x?x32xf32>, %w: tensor<?x?x?x32xf32>, %beta: tensor<?x?x?xf32>, %l: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) {
  // expected-remark @+1 {{no fused backward for PaTH and MTA yet: runs through the reference lowering}}
  %0:5 = attn.attention_grad %q, %q, %q path(%w, %beta), %q, %l, %q
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>,
         tensor<?x?x?x32xf32>, tensor<?x?x?xf32>, tensor<?x?x?x32xf32>)
      -> (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>
}

// -----

// The GPU forms pad head dims that are multiples of 8 up to 128 (the rope
// case above, D = 32, is one); 136 is refused.
// GPU: error: attn-to-block{target=sm_80}: the GPU form needs static head dims that are multiples of 8 up to 128 (16-byte chunks), got 136
// CHECK-LABEL: func.func @wide_grad(
func.func @wide_grad(%q: tensor<?x?x?x136xbf16>, %l: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>) {
  %0:3 = attn.attention_grad %q, %q, %q, %q, %l, %q
      : (tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>,
         tensor<?x?x?x136xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x136xbf16>)
      -> (tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>)
  return %0#0, %0#1, %0#2 : tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>, tensor<?x?x?x136xbf16>
}

// -----

// The forward with its row LSE: the flash kernel also stores
// (m + log2 l) ln 2 per row, -inf where no key is visible.
// CHECK-LABEL: func.func private @with_lse_attention_kernel
// CHECK-SAME: %{{[^:]*}}: memref<?x?x?x32xf32>, %[[LSE:[^:]*]]: memref<?x?x?xf32>)
// CHECK: math.log2
// CHECK: attn_block.store %{{.*}}, %[[LSE]]{{.*}} dims [2]
// CHECK-LABEL: func.func @with_lse(
// CHECK: %[[O:.*]] = memref.alloc
// CHECK: %[[L:.*]] = memref.alloc
// CHECK: attn_block.launch @with_lse_attention_kernel grid({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %[[L]])
func.func @with_lse(%q: tensor<?x?x?x32xf32>) -> (tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) {
  %o, %l = attn.attention %q, %q, %q : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>) -> (tensor<?x?x?x32xf32>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x32xf32>, tensor<?x?x?xf32>
}
