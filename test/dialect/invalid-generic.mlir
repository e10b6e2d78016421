// Errors only the generic op form can produce: operand groups the custom
// syntax cannot express (one half of a pair), bad enum values and attribute
// kinds, and inconsistent operand segments.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @scores_w_without_beta(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %w: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op a PaTH path needs both 'w' and 'beta'}}
  %0 = "attn.scores"(%q, %k, %w) <{mask = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scores_beta_without_w(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %b: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.scores' op a PaTH path needs both 'w' and 'beta'}}
  %0 = "attn.scores"(%q, %k, %b) <{mask = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 1, 0, 0>}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @attention_w_without_beta(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %w: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op a PaTH path needs both 'w' and 'beta'}}
  %0 = "attn.attention"(%q, %k, %v, %w) <{mask = 0 : i32, norm_eps = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, rope_offset = 0 : i64, rope_style = 0 : i32}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @head_norm_gate_w_without_b(%x: tensor<1x2x3x8xf32>, %g: tensor<8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'attn.head_norm' op a norm gate needs both its weight and its bias}}
  %0 = "attn.head_norm"(%x, %g, %w) <{eps = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @head_norm_gate_b_without_w(%x: tensor<1x2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'attn.head_norm' op a norm gate needs both its weight and its bias}}
  %0 = "attn.head_norm"(%x, %g, %b) <{eps = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @attention_norm_gate_half(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %n: tensor<8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'attn.attention' op a norm gate needs both its weight and its bias}}
  %0 = "attn.attention"(%q, %k, %v, %n, %w) <{mask = 0 : i32, norm_eps = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0>, rope_offset = 0 : i64, rope_style = 0 : i32}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @attention_norm_gate_b_without_norm(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'attn.attention' op norm_gate needs norm(gamma)}}
  %0 = "attn.attention"(%q, %k, %v, %b) <{mask = 0 : i32, norm_eps = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0>, rope_offset = 0 : i64, rope_style = 0 : i32}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_bad_style_value(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{Invalid attribute `style` in property conversion: 5 : i32}}
  %0 = "attn.rope"(%x) <{offset = 0 : i64, style = 5 : i32, theta = 1.0e4 : f64}> : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @scores_bad_mask_value(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{Invalid attribute `mask` in property conversion: 3 : i32}}
  %0 = "attn.scores"(%q, %k) <{mask = 3 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @kq_conv_bad_stage_value(%s: tensor<1x2x3x3xf32>, %t: tensor<2x1x1xf32>) {
  // expected-error @+1 {{Invalid attribute `stage` in property conversion: 2 : i32}}
  %0 = "attn.kq_conv"(%s, %t) <{stage = 2 : i32}> : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @kq_conv_missing_stage(%s: tensor<1x2x3x3xf32>, %t: tensor<2x1x1xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op requires attribute 'stage'}}
  %0 = "attn.kq_conv"(%s, %t) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @rope_f32_theta(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.rope' op attribute 'theta' failed to satisfy constraint: 64-bit float attribute}}
  %0 = "attn.rope"(%x) <{offset = 0 : i64, style = 0 : i32, theta = 1.0e4 : f32}> : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @scores_i32_window(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op attribute 'window' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = "attn.scores"(%q, %k) <{mask = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, window = 4 : i32}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scores_segment_mismatch(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op operand count (2) does not match with the total size (3) specified in attribute 'operandSegmentSizes'}}
  %0 = "attn.scores"(%q, %k) <{mask = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0>}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scores_two_gates(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %g: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.scores' op operand group starting at #2 requires 0 or 1 element, but found 2}}
  %0 = "attn.scores"(%q, %k, %g, %g) <{mask = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 2, 0>}> : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32>
  return
}
