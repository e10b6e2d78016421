// The symbolic shape checker (ShapeCheck.cpp) behind every verifier: the
// message names the operand, its expected shape with the sizes known so
// far, the offending dim and which operand fixed that size. (Its "must be a
// ranked tensor" and "must have rank N" messages cannot be reached: the ODS
// type constraints of every op reject such operands first, see
// invalid-types.mlir.)
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// A size left dynamic by q and k is fixed by the first operand that has it
// static (here w), and later operands are checked against it.
func.func @origin_is_first_static_operand(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>, %w: tensor<?x?x5x8xf32>, %b: tensor<?x?x4xf32>) {
  // expected-error @+1 {{'attn.scores' op 'beta' must have shape [B, Hk, S] = [?, ?, 5], got 'tensor<?x?x4xf32>' (dim 2 'S' is 5 from 'w')}}
  %0 = attn.scores %q, %k path(%w, %b) : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x5x8xf32>, tensor<?x?x4xf32>) -> tensor<?x?x?x?xf32>
  return
}

// -----

// With several mismatching dims the first one is reported; the expected
// shape shows only what was known before this operand.
func.func @first_mismatch_reported(%q: tensor<2x4x3x8xf32>, %k: tensor<3x4x3x16xf32>) {
  // expected-error @+1 {{'attn.scores' op 'k' must have shape [B, Hk, S, D] = [2, ?, ?, 8], got 'tensor<3x4x3x16xf32>' (dim 0 'B' is 2 from 'q')}}
  %0 = attn.scores %q, %k : (tensor<2x4x3x8xf32>, tensor<3x4x3x16xf32>) -> tensor<2x4x3x3xf32>
  return
}

// -----

// Sizes bound by operands are checked against the result too.
func.func @result_batch_from_k(%q: tensor<?x2x3x8xf32>, %k: tensor<4x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op 'result' must have shape [B, Hq, T, S] = [4, 2, 3, 3], got 'tensor<5x2x3x3xf32>' (dim 0 'B' is 4 from 'k')}}
  %0 = attn.scores %q, %k : (tensor<?x2x3x8xf32>, tensor<4x2x3x8xf32>) -> tensor<5x2x3x3xf32>
  return
}

// -----

// A fixed size (a literal in the expected shape) has no origin.
func.func @literal_dim(%x: tensor<?x?x?x4xf32>, %g: tensor<4xf32>, %w: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'attn.head_norm' op 'gate_b' must have shape [1] = [1], got 'tensor<3xf32>' (dim 0 '1' is 1)}}
  %0 = attn.head_norm %x, %g gate(%w, %b) : (tensor<?x?x?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<?x?x?x4xf32>
  return
}

// -----

// The static group size of head_mix is a literal of the weight's shape.
func.func @literal_group_size(%s: tensor<1x8x4x4xf32>, %w: tensor<4x2xf32>) {
  // expected-error @+1 {{'attn.head_mix' op 'weight' must have shape [H, 2] = [8, 2], got 'tensor<4x2xf32>' (dim 0 'H' is 8 from 'input')}}
  %0 = attn.head_mix pre %s, %w : tensor<1x8x4x4xf32>, tensor<4x2xf32>
  return
}

// -----

// Dynamic sizes never conflict: this verifies.
func.func @dynamic_is_compatible(%q: tensor<?x4x?x8xf32>, %k: tensor<2x?x7x8xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.scores %q, %k gate(%g) : (tensor<?x4x?x8xf32>, tensor<2x?x7x8xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

// Kernel heads of the fused op are the query heads, bound by q.
func.func @fused_kernel_origin(%q: tensor<1x4x3x8xf32>, %k: tensor<1x4x3x8xf32>, %v: tensor<1x4x3x8xf32>, %t: tensor<4x3x3xf32>, %t2: tensor<2x3x3xf32>) {
  // expected-error @+1 {{'attn.attention' op 'kq_conv_post' must have shape [Hq, c_q, c_k] = [4, ?, ?], got 'tensor<2x3x3xf32>' (dim 0 'Hq' is 4 from 'q')}}
  %0 = attn.attention %q, %k, %v kq_conv_pre(%t) kq_conv_post(%t2) : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<4x3x3xf32>, tensor<2x3x3xf32>) -> tensor<1x4x3x8xf32>
  return
}
