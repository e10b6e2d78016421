// The ODS type constraints of the attn ops: element types, ranks, tensor
// kinds, and the type-equality traits.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @rope_i32_input(%x: tensor<1x2x3x4xi32>) {
  // expected-error @+1 {{'attn.rope' op operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x3x4xi32>'}}
  %0 = attn.rope %x : tensor<1x2x3x4xi32>
  return
}

// -----

func.func @rope_f64_input(%x: tensor<1x2x3x4xf64>) {
  // expected-error @+1 {{operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x3x4xf64>'}}
  %0 = attn.rope %x : tensor<1x2x3x4xf64>
  return
}

// -----

func.func @rope_rank3_input(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'attn.rope' op operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2x3x4xf32>'}}
  %0 = attn.rope %x : tensor<2x3x4xf32>
  return
}

// -----

func.func @rope_positions_i32(%x: tensor<1x2x3x4xf32>, %p: tensor<3xi32>) {
  // expected-error @+1 {{'attn.rope' op operand #1 must be 1D tensor of 64-bit signless integer values, but got 'tensor<3xi32>'}}
  %0 = attn.rope %x positions(%p) : tensor<1x2x3x4xf32>, tensor<3xi32>
  return
}

// -----

func.func @rope_positions_rank2(%x: tensor<1x2x3x4xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{'attn.rope' op operand #1 must be 1D tensor of 64-bit signless integer values, but got 'tensor<1x3xi64>'}}
  %0 = attn.rope %x positions(%p) : tensor<1x2x3x4xf32>, tensor<1x3xi64>
  return
}

// -----

func.func @rope_result_type(%x: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.rope' op failed to verify that all of {input, result} have same type}}
  %0 = "attn.rope"(%x) <{offset = 0 : i64, style = 0 : i32, theta = 1.0e4 : f64}> : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf16>
  return
}

// -----

func.func @scores_i32_q(%q: tensor<1x2x3x4xi32>, %k: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.scores' op operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x3x4xi32>'}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x4xi32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scores_rank5_k(%q: tensor<1x2x3x4xf32>, %k: tensor<1x1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.scores' op operand #1 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x1x2x3x4xf32>'}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x4xf32>, tensor<1x1x2x3x4xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scores_f16_result(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.scores' op result #0 must be 4D tensor of 32-bit float values, but got 'tensor<1x2x3x3xf16>'}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x3xf16>
  return
}

// -----

// PaTH and gate parameters are f32 whatever the activations.
func.func @scores_bf16_w(%q: tensor<1x2x3x4xbf16>, %k: tensor<1x2x3x4xbf16>, %w: tensor<1x2x3x4xbf16>, %b: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.scores' op operand #2 must be 4D tensor of 32-bit float values, but got 'tensor<1x2x3x4xbf16>'}}
  %0 = attn.scores %q, %k path(%w, %b) : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scores_rank4_beta(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %w: tensor<1x2x3x4xf32>, %b: tensor<1x2x3x1xf32>) {
  // expected-error @+1 {{'attn.scores' op operand #3 must be 3D tensor of 32-bit float values, but got 'tensor<1x2x3x1xf32>'}}
  %0 = attn.scores %q, %k path(%w, %b) : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x1xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scores_f16_gate(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %g: tensor<1x2x3xf16>) {
  // expected-error @+1 {{'attn.scores' op operand #2 must be 3D tensor of 32-bit float values, but got 'tensor<1x2x3xf16>'}}
  %0 = attn.scores %q, %k gate(%g) : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf16>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @kq_conv_f16_map(%s: tensor<1x2x3x3xf16>, %t: tensor<2x1x1xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op operand #0 must be 4D tensor of 32-bit float values, but got 'tensor<1x2x3x3xf16>'}}
  %0 = attn.kq_conv pre %s, %t : tensor<1x2x3x3xf16>, tensor<2x1x1xf32>
  return
}

// -----

func.func @kq_conv_rank2_kernel(%s: tensor<1x2x3x3xf32>, %t: tensor<2x3xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op operand #1 must be 3D tensor of 32-bit float values, but got 'tensor<2x3xf32>'}}
  %0 = attn.kq_conv pre %s, %t : tensor<1x2x3x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @head_mix_rank3_weight(%s: tensor<1x2x3x3xf32>, %w: tensor<2x2x1xf32>) {
  // expected-error @+1 {{'attn.head_mix' op operand #1 must be 2D tensor of 32-bit float values, but got 'tensor<2x2x1xf32>'}}
  %0 = attn.head_mix pre %s, %w : tensor<1x2x3x3xf32>, tensor<2x2x1xf32>
  return
}

// -----

func.func @head_mix_bf16_weight(%s: tensor<1x2x3x3xf32>, %w: tensor<2x2xbf16>) {
  // expected-error @+1 {{'attn.head_mix' op operand #1 must be 2D tensor of 32-bit float values, but got 'tensor<2x2xbf16>'}}
  %0 = attn.head_mix post %s, %w : tensor<1x2x3x3xf32>, tensor<2x2xbf16>
  return
}

// -----

func.func @softmax_f16(%x: tensor<1x2x3x4xf16>) {
  // expected-error @+1 {{'attn.softmax' op operand #0 must be 4D tensor of 32-bit float values, but got 'tensor<1x2x3x4xf16>'}}
  %0 = attn.softmax %x : tensor<1x2x3x4xf16>
  return
}

// -----

func.func @softmax_result_shape(%x: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.softmax' op requires the same type for all operands and results}}
  %0 = "attn.softmax"(%x) : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x5xf32>
  return
}

// -----

func.func @weighted_sum_bf16_probs(%p: tensor<1x2x3x3xbf16>, %v: tensor<1x2x3x4xbf16>) {
  // expected-error @+1 {{'attn.weighted_sum' op operand #0 must be 4D tensor of 32-bit float values, but got 'tensor<1x2x3x3xbf16>'}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x2x3x3xbf16>, tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16>
  return
}

// -----

func.func @weighted_sum_i8_result(%p: tensor<1x2x3x3xf32>, %v: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.weighted_sum' op result #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x3x4xi8>'}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xi8>
  return
}

// -----

func.func @head_norm_memref_gamma(%x: tensor<1x2x3x4xf32>, %g: memref<4xf32>) {
  // expected-error @+1 {{'attn.head_norm' op operand #1 must be 1D tensor of 32-bit float values, but got 'memref<4xf32>'}}
  %0 = attn.head_norm %x, %g : (tensor<1x2x3x4xf32>, memref<4xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @head_norm_f16_gate_b(%x: tensor<1x2x3x4xf32>, %g: tensor<4xf32>, %w: tensor<4xf32>, %b: tensor<1xf16>) {
  // expected-error @+1 {{'attn.head_norm' op operand #3 must be 1D tensor of 32-bit float values, but got 'tensor<1xf16>'}}
  %0 = attn.head_norm %x, %g gate(%w, %b) : (tensor<1x2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1xf16>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @head_norm_result_type(%x: tensor<1x2x3x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'attn.head_norm' op failed to verify that all of {input, result} have same type}}
  %0 = attn.head_norm %x, %g : (tensor<1x2x3x4xf32>, tensor<4xf32>) -> tensor<1x2x3x4xbf16>
  return
}

// -----

func.func @short_conv_f16_kernel(%x: tensor<1x2x3x4xf16>, %k: tensor<2x4x3xf16>) {
  // expected-error @+1 {{'attn.short_conv' op operand #1 must be 3D tensor of 32-bit float values, but got 'tensor<2x4x3xf16>'}}
  %0 = attn.short_conv %x, %k : tensor<1x2x3x4xf16>, tensor<2x4x3xf16>
  return
}

// -----

func.func @short_conv_result_type(%x: tensor<1x2x3x4xf32>, %k: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'attn.short_conv' op failed to verify that all of {input, result} have same type}}
  %0 = "attn.short_conv"(%x, %k) : (tensor<1x2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<1x2x3x5xf32>
  return
}

// -----

func.func @l2norm_rank2(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'attn.l2norm' op operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<3x4xf32>'}}
  %0 = attn.l2norm %x : tensor<3x4xf32>
  return
}

// -----

// The custom form only accepts ranked tensors; the generic form reaches the
// ODS check.
func.func @l2norm_unranked_generic(%x: tensor<*xf32>) {
  // expected-error @+1 {{'attn.l2norm' op operand #0 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<*xf32>'}}
  %0 = "attn.l2norm"(%x) <{eps = 1.0e-6 : f64}> : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @l2norm_result_type(%x: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.l2norm' op requires the same type for all operands and results}}
  %0 = "attn.l2norm"(%x) <{eps = 1.0e-6 : f64}> : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf16>
  return
}

// -----

func.func @attention_i32_v(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xi32>) {
  // expected-error @+1 {{'attn.attention' op operand #2 must be 4D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x3x4xi32>'}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attention_rank3_kernel(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>, %t: tensor<2x3xf32>) {
  // expected-error @+1 {{'attn.attention' op operand #3 must be 3D tensor of 32-bit float values, but got 'tensor<2x3xf32>'}}
  %0 = attn.attention %q, %k, %v kq_conv_pre(%t) : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<2x3xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @attention_f16_norm(%q: tensor<1x2x3x4xf16>, %k: tensor<1x2x3x4xf16>, %v: tensor<1x2x3x4xf16>, %n: tensor<4xf16>) {
  // expected-error @+1 {{'attn.attention' op operand #3 must be 1D tensor of 32-bit float values, but got 'tensor<4xf16>'}}
  %0 = attn.attention %q, %k, %v norm(%n) : (tensor<1x2x3x4xf16>, tensor<1x2x3x4xf16>, tensor<1x2x3x4xf16>, tensor<4xf16>) -> tensor<1x2x3x4xf16>
  return
}
