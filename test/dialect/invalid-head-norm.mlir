// attn.head_norm verifier errors (the norm piece is shared with
// attn.attention).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_head_dim(%x: tensor<1x2x3x?xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'attn.head_norm' op head dim Dv must be static}}
  %0 = attn.head_norm %x, %g : (tensor<1x2x3x?xf32>, tensor<8xf32>) -> tensor<1x2x3x?xf32>
  return
}

// -----

func.func @gamma_size(%x: tensor<1x2x3x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'attn.head_norm' op 'gamma' must have shape [Dv] = [8], got 'tensor<4xf32>' (dim 0 'Dv' is 8 from 'input')}}
  %0 = attn.head_norm %x, %g : (tensor<1x2x3x8xf32>, tensor<4xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @gate_w_size(%x: tensor<?x?x?x8xbf16>, %g: tensor<8xf32>, %w: tensor<16xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'attn.head_norm' op 'gate_w' must have shape [Dv] = [8], got 'tensor<16xf32>' (dim 0 'Dv' is 8 from 'input')}}
  %0 = attn.head_norm %x, %g gate(%w, %b) : (tensor<?x?x?x8xbf16>, tensor<8xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x?x?x8xbf16>
  return
}

// -----

// The gate bias is a single scalar: a fixed size 1, not a named extent.
func.func @gate_b_size(%x: tensor<1x2x3x8xf32>, %g: tensor<8xf32>, %w: tensor<8xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'attn.head_norm' op 'gate_b' must have shape [1] = [1], got 'tensor<2xf32>' (dim 0 '1' is 1)}}
  %0 = attn.head_norm %x, %g gate(%w, %b) : (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @eps_zero(%x: tensor<1x2x3x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'attn.head_norm' op attribute 'eps' must be positive and finite, got 0.000000e+00}}
  %0 = attn.head_norm %x, %g eps 0.0 : (tensor<1x2x3x8xf32>, tensor<8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @eps_negative(%x: tensor<1x2x3x8xf16>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'attn.head_norm' op attribute 'eps' must be positive and finite, got -1.000000e-05}}
  %0 = attn.head_norm %x, %g eps -1.0e-05 : (tensor<1x2x3x8xf16>, tensor<8xf32>) -> tensor<1x2x3x8xf16>
  return
}

// -----

func.func @eps_inf(%x: tensor<1x2x3x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'attn.head_norm' op attribute 'eps' must be positive and finite, got INF}}
  %0 = attn.head_norm %x, %g eps 0x7FF0000000000000 : (tensor<1x2x3x8xf32>, tensor<8xf32>) -> tensor<1x2x3x8xf32>
  return
}
