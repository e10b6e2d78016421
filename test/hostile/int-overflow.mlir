// Integer attributes are signed 64-bit: a literal outside
// [-2^63, 2^63 - 1] is a parse error (2^63 used to wrap to -2^63).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @rope_offset(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer 9223372036854775808 does not fit in a signed 64-bit attribute}}
  %0 = attn.rope %q offset 9223372036854775808 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @rope_offset_u64(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer 18446744073709551615 does not fit}}
  %0 = attn.rope %q offset 18446744073709551615 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @rope_rotary_dim(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer -9223372036854775809 does not fit}}
  %0 = attn.rope %q rotary_dim -9223372036854775809 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @scores_window(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer 99999999999999999999999 does not fit}}
  %0 = attn.scores %q, %k mask sliding_window window 99999999999999999999999 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @attention_rope_offset(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer 9223372036854775808 does not fit}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_offset 9223372036854775808 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_rope_q_offset(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer 9223372036854775808 does not fit}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_q_offset 9223372036854775808 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_rope_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer 9223372036854775808 does not fit}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_dim 9223372036854775808 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_window(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{integer 9223372036854775808 does not fit}}
  %0 = attn.attention %q, %k, %v mask sliding_window window 9223372036854775808 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}
