// Verifier errors of attn.attention's LSE result and of attn.attention_grad:
// the forward's checks, then the output, LSE and cotangent shapes and one
// gradient per float operand, of its type.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @lse_shape(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'attn.attention' op 'lse' must have shape [B, Hq, T] = [1, 2, 8], got 'tensor<1x2x7xf32>'}}
  %o, %l = attn.attention %q, %q, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x7xf32>)
  return
}

// -----

func.func @grad_count(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expects 3 results (one per float operand), got 2}}
  %0:2 = attn.attention_grad %q, %q, %q, %q, %l, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

func.func @grad_type(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>, %g: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op result 3 must have the type of the operand it is the gradient of, 'tensor<1x2x8xf32>', got 'tensor<1x2x8x16xf32>'}}
  %0:4 = attn.attention_grad %q, %q, %q gate(%g), %q, %l, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

func.func @grad_cotangent(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>, %do: tensor<1x2x9x16xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'grad' must have shape [B, Hq, T, Dv] = [1, 2, 8, 16], got 'tensor<1x2x9x16xf32>'}}
  %0:3 = attn.attention_grad %q, %q, %q, %q, %l, %do : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x9x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

func.func @grad_forward_checks(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op rope_style, rope_dim, rope_offset and rope_q_offset need rope(theta)}}
  %0:3 = attn.attention_grad %q, %q, %q rope_offset 2, %q, %l, %q : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}
