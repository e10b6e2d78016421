// Verifier errors of attn.scores_grad, attn.kq_conv_grad and
// attn.head_mix_grad: the forward op's checks (shared with it), the
// cotangent's shape and one gradient per differentiable operand.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @gqa(%q: tensor<1x3x8x16xf32>, %k: tensor<1x2x8x16xf32>, %ds: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op query heads Hq = 3 must be a multiple of KV heads Hk = 2 (GQA)}}
  %0:2 = attn.scores_grad %q, %k, %ds : (tensor<1x3x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x3x8x8xf32>) -> (tensor<1x3x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

func.func @path_mask_none(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %w: tensor<?x?x?x16xf32>, %b: tensor<?x?x?xf32>, %ds: tensor<?x?x?x?xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op PaTH paths and forget gates need a causal or sliding_window mask, got mask none}}
  %0:4 = attn.scores_grad %q, %k path(%w, %b) mask none, %ds : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return
}

// -----

func.func @grad_shape(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %ds: tensor<1x2x8x9xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op 'grad' must have shape [B, Hq, T, S] = [1, 2, 8, 8], got 'tensor<1x2x8x9xf32>' (dim 3 'S' is 8 from 'k')}}
  %0:2 = attn.scores_grad %q, %k, %ds : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x9xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

func.func @missing_dg(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %w: tensor<?x?x?x16xf32>, %b: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>, %ds: tensor<?x?x?x?xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op results must be (dq, dk, dw, dbeta, dg), one per differentiable operand, got 4 results}}
  %0:4 = attn.scores_grad %q, %k path(%w, %b) gate(%g), %ds : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return
}

// -----

func.func @extra_dg(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %ds: tensor<?x?x?x?xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op results must be (dq, dk), one per differentiable operand, got 3 results}}
  %0:3 = attn.scores_grad %q, %k, %ds : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return
}

// -----

func.func @too_many_results(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %ds: tensor<?x?x?x?xf32>) {
  // expected-error @+1 {{expected 2 to 5 result types (dq, dk [, dw, dbeta] [, dg]), got 1}}
  %0 = attn.scores_grad %q, %k, %ds : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xf32>)
  return
}

// -----

func.func @dq_type(%q: tensor<?x?x?x16xbf16>, %k: tensor<?x?x?x16xbf16>, %ds: tensor<?x?x?x?xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op result 'dq' must have the element type of 'q' 'bf16', got 'f32'}}
  %0:2 = attn.scores_grad %q, %k, %ds : (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xbf16>)
  return
}

// -----

func.func @dk_shape(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %ds: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op 'dk' must have shape [B, Hk, S, D] = [1, 2, 8, 16], got 'tensor<1x4x8x16xf32>' (dim 1 'Hk' is 2 from 'k')}}
  %0:2 = attn.scores_grad %q, %k, %ds : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>)
  return
}

// -----

func.func @dbeta_shape(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %w: tensor<1x2x8x16xf32>, %b: tensor<1x2x8xf32>, %ds: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'attn.scores_grad' op 'dbeta' must have shape [B, Hk, S] = [1, 2, 8], got 'tensor<1x2x7xf32>' (dim 2 'S' is 8 from 'k')}}
  %0:4 = attn.scores_grad %q, %k path(%w, %b), %ds : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x8xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x7xf32>)
  return
}

// -----

func.func @kq_even_ck(%s: tensor<1x2x4x4xf32>, %t: tensor<2x3x4xf32>, %d: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'attn.kq_conv_grad' op 'kernel' must have c_q >= 1 and an odd c_k (keys are padded (c_k-1)/2 each side), got 'tensor<2x3x4xf32>'}}
  %0:2 = attn.kq_conv_grad pre %s, %t, %d : (tensor<1x2x4x4xf32>, tensor<2x3x4xf32>, tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x3x4xf32>)
  return
}

// -----

func.func @kq_grad_shape(%s: tensor<1x2x4x4xf32>, %t: tensor<2x3x5xf32>, %d: tensor<1x2x4x5xf32>) {
  // expected-error @+1 {{'attn.kq_conv_grad' op 'grad' must have shape [B, H, T, S] = [1, 2, 4, 4], got 'tensor<1x2x4x5xf32>' (dim 3 'S' is 4 from 'input')}}
  %0:2 = attn.kq_conv_grad post %s, %t, %d : (tensor<1x2x4x4xf32>, tensor<2x3x5xf32>, tensor<1x2x4x5xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x3x5xf32>)
  return
}

// -----

func.func @kq_dkernel_shape(%s: tensor<1x2x4x4xf32>, %t: tensor<2x3x5xf32>, %d: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'attn.kq_conv_grad' op 'dkernel' must have shape [H, c_q, c_k] = [2, 3, 5], got 'tensor<2x3x3xf32>' (dim 2 'c_k' is 5 from 'kernel')}}
  %0:2 = attn.kq_conv_grad post %s, %t, %d : (tensor<1x2x4x4xf32>, tensor<2x3x5xf32>, tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x3x3xf32>)
  return
}

// -----

func.func @mix_divides(%s: tensor<1x6x4x4xf32>, %w: tensor<6x4xf32>, %d: tensor<1x6x4x4xf32>) {
  // expected-error @+1 {{'attn.head_mix_grad' op group size c_h = 4 must divide the head count H = 6}}
  %0:2 = attn.head_mix_grad pre %s, %w, %d : (tensor<1x6x4x4xf32>, tensor<6x4xf32>, tensor<1x6x4x4xf32>) -> (tensor<1x6x4x4xf32>, tensor<6x4xf32>)
  return
}

// -----

func.func @mix_dweight_shape(%s: tensor<1x4x4x4xf32>, %w: tensor<4x2xf32>, %d: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{'attn.head_mix_grad' op 'dweight' must have shape [H, 2] = [4, 2], got 'tensor<4x4xf32>' (dim 1 '2' is 2)}}
  %0:2 = attn.head_mix_grad post %s, %w, %d : (tensor<1x4x4x4xf32>, tensor<4x2xf32>, tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @mix_dx_shape(%s: tensor<1x4x4x4xf32>, %w: tensor<4x2xf32>, %d: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{'attn.head_mix_grad' op 'dx' must have shape [B, H, T, S] = [1, 4, 4, 4], got 'tensor<1x4x4x3xf32>' (dim 3 'S' is 4 from 'input')}}
  %0:2 = attn.head_mix_grad post %s, %w, %d : (tensor<1x4x4x4xf32>, tensor<4x2xf32>, tensor<1x4x4x4xf32>) -> (tensor<1x4x4x3xf32>, tensor<4x2xf32>)
  return
}
