// BUG: attn.l2norm has no verifier (no hasVerifier in AttnOps.td), so a
// non-positive or non-finite eps is accepted, while attn.head_norm and
// attn.attention reject the same values for their eps ("attribute 'eps'
// must be positive and finite"). With eps <= 0 the reference lowering
// computes x / sqrt(sum x^2 + eps), which is NaN or inf for small rows.
// Expected: the same diagnostic as head_norm.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @l2norm_negative_eps(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.l2norm' op attribute 'eps' must be positive and finite, got -1.000000e+00}}
  %0 = attn.l2norm %x eps -1.0 : tensor<1x2x3x8xf32>
  return
}

// -----

func.func @l2norm_zero_eps(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.l2norm' op attribute 'eps' must be positive and finite, got 0.000000e+00}}
  %0 = attn.l2norm %x eps 0.0 : tensor<1x2x3x8xf32>
  return
}

// -----

func.func @l2norm_nan_eps(%x: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.l2norm' op attribute 'eps' must be positive and finite, got nan}}
  %0 = attn.l2norm %x eps 0x7FF8000000000000 : tensor<1x2x3x8xf32>
  return
}
