// attn.rope verifier errors.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_head_dim(%x: tensor<1x2x3x?xf32>) {
  // expected-error @+1 {{'attn.rope' op head dim D must be static}}
  %0 = attn.rope %x : tensor<1x2x3x?xf32>
  return
}

// -----

func.func @positions_length(%x: tensor<1x2x3x8xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{'attn.rope' op 'positions' must have shape [T] = [3], got 'tensor<4xi64>' (dim 0 'T' is 3 from 'input')}}
  %0 = attn.rope %x positions(%p) : tensor<1x2x3x8xf32>, tensor<4xi64>
  return
}

// -----

func.func @rotary_dim_odd(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.rope' op rotary dim must be even and in [2, D = 8], got 3}}
  %0 = attn.rope %x rotary_dim 3 : tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rotary_dim_too_large(%x: tensor<?x?x?x8xbf16>) {
  // expected-error @+1 {{'attn.rope' op rotary dim must be even and in [2, D = 8], got 16}}
  %0 = attn.rope %x rotary_dim 16 : tensor<?x?x?x8xbf16>
  return
}

// -----

func.func @rotary_dim_zero(%x: tensor<1x2x3x8xf16>) {
  // expected-error @+1 {{'attn.rope' op rotary dim must be even and in [2, D = 8], got 0}}
  %0 = attn.rope %x rotary_dim 0 : tensor<1x2x3x8xf16>
  return
}

// -----

func.func @rotary_dim_negative(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.rope' op rotary dim must be even and in [2, D = 8], got -2}}
  %0 = attn.rope %x rotary_dim -2 : tensor<1x2x3x8xf32>
  return
}

// -----

// Without rotary_dim the whole (odd) head dim would rotate.
func.func @odd_head_dim(%x: tensor<1x2x3x7xf32>) {
  // expected-error @+1 {{'attn.rope' op rotary dim must be even and in [2, D = 7], got 7}}
  %0 = attn.rope %x : tensor<1x2x3x7xf32>
  return
}

// -----

func.func @head_dim_one(%x: tensor<1x2x3x1xf32>) {
  // expected-error @+1 {{'attn.rope' op rotary dim must be even and in [2, D = 1], got 1}}
  %0 = attn.rope %x : tensor<1x2x3x1xf32>
  return
}

// -----

func.func @theta_zero(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.rope' op attribute 'theta' must be positive and finite, got 0.000000e+00}}
  %0 = attn.rope %x theta 0.0 : tensor<1x2x3x8xf32>
  return
}

// -----

func.func @theta_negative(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.rope' op attribute 'theta' must be positive and finite, got -1.000000e+04}}
  %0 = attn.rope %x theta -1.0e+04 : tensor<1x2x3x8xf32>
  return
}

// -----

func.func @theta_inf(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.rope' op attribute 'theta' must be positive and finite, got INF}}
  %0 = attn.rope %x theta 0x7FF0000000000000 : tensor<1x2x3x8xf32>
  return
}

// -----

func.func @theta_nan(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.rope' op attribute 'theta' must be positive and finite, got nan}}
  %0 = attn.rope %x theta 0x7FF8000000000000 : tensor<1x2x3x8xf32>
  return
}
