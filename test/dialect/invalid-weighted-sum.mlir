// attn.weighted_sum verifier errors.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_value_head_dim(%p: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) {
  // expected-error @+1 {{'attn.weighted_sum' op value head dim Dv must be static}}
  %0 = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return
}

// -----

func.func @result_element_type(%p: tensor<1x2x3x3xf32>, %v: tensor<1x2x3x8xbf16>) {
  // expected-error @+1 {{'attn.weighted_sum' op result element type must be v's element type 'bf16', got 'f32'}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x2x3x3xf32>, tensor<1x2x3x8xbf16>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @gqa(%p: tensor<1x6x3x3xf32>, %v: tensor<1x4x3x8xf32>) {
  // expected-error @+1 {{'attn.weighted_sum' op query heads Hq = 6 must be a multiple of KV heads Hk = 4 (GQA)}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x6x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x6x3x8xf32>
  return
}

// -----

func.func @key_length(%p: tensor<1x2x3x5xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'attn.weighted_sum' op 'v' must have shape [B, Hk, S, Dv] = [1, ?, 5, ?], got 'tensor<1x2x4x8xf32>' (dim 2 'S' is 5 from 'probs')}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x2x3x5xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @result_value_dim(%p: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x8xf16>) {
  // expected-error @+1 {{'attn.weighted_sum' op 'result' must have shape [B, Hq, T, Dv] = [?, ?, ?, 8], got 'tensor<?x?x?x16xf16>' (dim 3 'Dv' is 8 from 'v')}}
  %0 = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x8xf16>) -> tensor<?x?x?x16xf16>
  return
}

// -----

func.func @result_rows(%p: tensor<1x2x3x3xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.weighted_sum' op 'result' must have shape [B, Hq, T, Dv] = [1, 2, 3, 8], got 'tensor<1x2x4x8xf32>' (dim 2 'T' is 3 from 'probs')}}
  %0 = attn.weighted_sum %p, %v : (tensor<1x2x3x3xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x4x8xf32>
  return
}
