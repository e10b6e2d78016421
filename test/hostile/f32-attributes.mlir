// Attributes are f64 but the ops compute in f32: a value that is inf or
// below the smallest normal number in f32 is refused (scale 1e300 used to
// give NaN results with exit status 0).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @scores_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{attribute 'scale' = 1.000000e+300 is not representable in f32}}
  %0 = attn.scores %q, %k scale 1.0e+300 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @scores_tiny_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{attribute 'scale' = 1.000000e-40 is not representable in f32}}
  %0 = attn.scores %q, %k scale 1.0e-40 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @head_norm_eps(%o: tensor<1x2x4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{attribute 'eps' = 9.999889e-321 is not representable in f32}}
  %0 = attn.head_norm %o, %g eps 1.0e-320 : (tensor<1x2x4x8xf32>, tensor<8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @l2norm_eps(%x: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{attribute 'eps' = 1.000000e-50 is not representable in f32}}
  %0 = attn.l2norm %x eps 1.0e-50 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @rope_theta(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{attribute 'theta' = 1.000000e+39 is not representable in f32}}
  %0 = attn.rope %q theta 1.0e+39 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{attribute 'scale' = -1.000000e+300 is not representable in f32}}
  %0 = attn.attention %q, %k, %v scale -1.0e+300 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_norm_eps(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %n: tensor<8xf32>) {
  // expected-error @+1 {{attribute 'eps' = 1.000000e-45 is not representable in f32}}
  %0 = attn.attention %q, %k, %v norm(%n) norm_eps 1.0e-45 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_rope_theta(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{attribute 'theta' = 1.000000e+300 is not representable in f32}}
  %0 = attn.attention %q, %k, %v rope(1.0e+300) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}
