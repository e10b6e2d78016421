// Verifier errors of the VJP ops and attn.logsumexp: each names the operand
// or result and the shape or type it must have.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The custom form states one type; the generic form can disagree.
func.func @softmax_grad_types(%p: tensor<1x2x3x4xf32>, %dp: tensor<1x2x3x5xf32>) {
  // expected-error @+1 {{'attn.softmax_grad' op failed to verify that all of {probs, grad, result} have same type}}
  %0 = "attn.softmax_grad"(%p, %dp) : (tensor<1x2x3x4xf32>, tensor<1x2x3x5xf32>) -> tensor<1x2x3x4xf32>
  return
}

// -----

func.func @weighted_sum_grad_dv(%p: tensor<1x4x3x5xf32>, %v: tensor<1x2x5x8xf32>, %do: tensor<1x4x3x16xf32>) {
  // expected-error @+1 {{'attn.weighted_sum_grad' op 'grad' must have shape [B, Hq, T, Dv] = [1, 4, 3, 8], got 'tensor<1x4x3x16xf32>' (dim 3 'Dv' is 8 from 'v')}}
  %0:2 = attn.weighted_sum_grad %p, %v, %do : (tensor<1x4x3x5xf32>, tensor<1x2x5x8xf32>, tensor<1x4x3x16xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x2x5x8xf32>)
  return
}

// -----

func.func @weighted_sum_grad_cotangent_type(%p: tensor<1x4x3x5xf32>, %v: tensor<1x2x5x8xbf16>, %do: tensor<1x4x3x8xf32>) {
  // expected-error @+1 {{'attn.weighted_sum_grad' op 'grad' must have the element type of 'v', 'bf16', got 'f32'}}
  %0:2 = attn.weighted_sum_grad %p, %v, %do : (tensor<1x4x3x5xf32>, tensor<1x2x5x8xbf16>, tensor<1x4x3x8xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x2x5x8xbf16>)
  return
}

// -----

func.func @weighted_sum_grad_dv_type(%p: tensor<1x4x3x5xf32>, %v: tensor<1x2x5x8xbf16>, %do: tensor<1x4x3x8xbf16>) {
  // expected-error @+1 {{'attn.weighted_sum_grad' op 'v_grad' must have the element type of 'v', 'bf16', got 'f32'}}
  %0:2 = attn.weighted_sum_grad %p, %v, %do : (tensor<1x4x3x5xf32>, tensor<1x2x5x8xbf16>, tensor<1x4x3x8xbf16>) -> (tensor<1x4x3x5xf32>, tensor<1x2x5x8xf32>)
  return
}

// -----

func.func @weighted_sum_grad_gqa(%p: tensor<1x3x3x5xf32>, %v: tensor<1x2x5x8xf32>, %do: tensor<1x3x3x8xf32>) {
  // expected-error @+1 {{'attn.weighted_sum_grad' op query heads Hq = 3 must be a multiple of KV heads Hk = 2 (GQA)}}
  %0:2 = attn.weighted_sum_grad %p, %v, %do : (tensor<1x3x3x5xf32>, tensor<1x2x5x8xf32>, tensor<1x3x3x8xf32>) -> (tensor<1x3x3x5xf32>, tensor<1x2x5x8xf32>)
  return
}

// -----

func.func @weighted_sum_grad_dv_shape(%p: tensor<1x4x3x5xf32>, %v: tensor<1x2x5x8xf32>, %do: tensor<1x4x3x8xf32>) {
  // expected-error @+1 {{'attn.weighted_sum_grad' op 'v_grad' must have shape [B, Hk, S, Dv] = [1, 2, 5, 8], got 'tensor<1x4x5x8xf32>' (dim 1 'Hk' is 2 from 'v')}}
  %0:2 = attn.weighted_sum_grad %p, %v, %do : (tensor<1x4x3x5xf32>, tensor<1x2x5x8xf32>, tensor<1x4x3x8xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x4x5x8xf32>)
  return
}

// -----

func.func @weighted_sum_grad_dp_shape(%p: tensor<1x4x3x5xf32>, %v: tensor<1x2x5x8xf32>, %do: tensor<1x4x3x8xf32>) {
  // expected-error @+1 {{'attn.weighted_sum_grad' op 'probs_grad' must have shape [B, Hq, T, S] = [1, 4, 3, 5], got 'tensor<1x4x5x5xf32>' (dim 2 'T' is 3 from 'probs')}}
  %0:2 = attn.weighted_sum_grad %p, %v, %do : (tensor<1x4x3x5xf32>, tensor<1x2x5x8xf32>, tensor<1x4x3x8xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x2x5x8xf32>)
  return
}

// -----

// The gate's operands without the gate's gradients.
func.func @head_norm_grad_gate_results(%o: tensor<1x2x3x8xf32>, %g: tensor<8xf32>, %w: tensor<8xf32>, %b: tensor<1xf32>, %dy: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.head_norm_grad' op results 'gate_w_grad' and 'gate_b_grad' must be present exactly when the gate operands are}}
  %0:2 = "attn.head_norm_grad"(%o, %g, %w, %b, %dy) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1x2x3x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @head_norm_grad_cotangent_type(%o: tensor<1x2x3x8xf32>, %g: tensor<8xf32>, %dy: tensor<1x2x3x8xbf16>) {
  // expected-error @+1 {{'attn.head_norm_grad' op 'grad' must have the element type of 'input', 'f32', got 'bf16'}}
  %0:2 = attn.head_norm_grad %o, %g, %dy : (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<1x2x3x8xbf16>) -> (tensor<1x2x3x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @head_norm_grad_gamma_grad(%o: tensor<1x2x3x8xf32>, %g: tensor<8xf32>, %dy: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.head_norm_grad' op 'gamma_grad' must have shape [Dv] = [8], got 'tensor<4xf32>' (dim 0 'Dv' is 8 from 'input')}}
  %0:2 = attn.head_norm_grad %o, %g, %dy : (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<1x2x3x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @head_norm_grad_gate_b_grad(%o: tensor<1x2x3x8xf32>, %g: tensor<8xf32>, %w: tensor<8xf32>, %b: tensor<1xf32>, %dy: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.head_norm_grad' op 'gate_b_grad' must have shape [1] = [1], got 'tensor<8xf32>' (dim 0 '1' is 1)}}
  %0:4 = attn.head_norm_grad %o, %g gate(%w, %b), %dy : (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1x2x3x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @short_conv_grad_kernel(%x: tensor<1x2x3x8xf32>, %k: tensor<2x4x3xf32>, %dy: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.short_conv_grad' op 'kernel' must have shape [H, D, K] = [2, 8, ?], got 'tensor<2x4x3xf32>' (dim 1 'D' is 8 from 'input')}}
  %0:2 = attn.short_conv_grad %x, %k, %dy : tensor<1x2x3x8xf32>, tensor<2x4x3xf32>
  return
}

// -----

func.func @short_conv_grad_dynamic_k(%x: tensor<1x2x3x8xf32>, %k: tensor<2x8x?xf32>, %dy: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.short_conv_grad' op kernel size K = dim 2 of 'kernel' [H, D, K] must be static and >= 1, got 'tensor<2x8x?xf32>'}}
  %0:2 = attn.short_conv_grad %x, %k, %dy : tensor<1x2x3x8xf32>, tensor<2x8x?xf32>
  return
}

// -----

func.func @short_conv_grad_types(%x: tensor<1x2x3x8xf32>, %k: tensor<2x8x3xf32>, %dy: tensor<1x2x3x8xbf16>) {
  // expected-error @+1 {{'attn.short_conv_grad' op failed to verify that all of {input, grad, input_grad} have same type}}
  %0:2 = "attn.short_conv_grad"(%x, %k, %dy) : (tensor<1x2x3x8xf32>, tensor<2x8x3xf32>, tensor<1x2x3x8xbf16>) -> (tensor<1x2x3x8xf32>, tensor<2x8x3xf32>)
  return
}

// -----

func.func @l2norm_grad_eps(%x: tensor<1x2x3x8xf32>, %dy: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.l2norm_grad' op attribute 'eps' must be positive and finite, got 0.000000e+00}}
  %0 = attn.l2norm_grad %x, %dy eps 0.0 : tensor<1x2x3x8xf32>
  return
}

// -----

func.func @logsumexp_shape(%s: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.logsumexp' op 'result' must have shape [B, H, T] = [1, 2, 3], got 'tensor<1x2x4xf32>' (dim 2 'T' is 3 from 'input')}}
  %0 = attn.logsumexp %s : tensor<1x2x3x4xf32> -> tensor<1x2x4xf32>
  return
}

// -----

func.func @logsumexp_rank(%s: tensor<1x2x3x4xf32>) {
  // expected-error @+1 {{'attn.logsumexp' op result #0 must be 3D tensor of 32-bit float values}}
  %0 = attn.logsumexp %s : tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  return
}
