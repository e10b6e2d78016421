// attn.scores verifier errors (the score piece is shared with
// attn.attention, see invalid-attention.mlir).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_head_dim(%q: tensor<1x2x3x?xf32>, %k: tensor<1x2x3x?xf32>) {
  // expected-error @+1 {{'attn.scores' op head dim D of 'q' and 'k' must be static}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @element_type_mismatch(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xbf16>) {
  // expected-error @+1 {{'attn.scores' op 'q' and 'k' must have the same element type, got 'f32' and 'bf16'}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xbf16>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @head_dim_mismatch(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x16xf32>) {
  // expected-error @+1 {{'attn.scores' op 'k' must have shape [B, Hk, S, D] = [?, ?, ?, 8], got 'tensor<?x?x?x16xf32>' (dim 3 'D' is 8 from 'q')}}
  %0 = attn.scores %q, %k : (tensor<?x?x?x8xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x?xf32>
  return
}

// -----

func.func @batch_mismatch(%q: tensor<2x4x3x8xf16>, %k: tensor<3x4x3x8xf16>) {
  // expected-error @+1 {{'attn.scores' op 'k' must have shape [B, Hk, S, D] = [2, ?, ?, 8], got 'tensor<3x4x3x8xf16>' (dim 0 'B' is 2 from 'q')}}
  %0 = attn.scores %q, %k : (tensor<2x4x3x8xf16>, tensor<3x4x3x8xf16>) -> tensor<2x4x3x3xf32>
  return
}

// -----

func.func @gqa_not_divisible(%q: tensor<1x6x3x8xf32>, %k: tensor<1x4x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op query heads Hq = 6 must be a multiple of KV heads Hk = 4 (GQA)}}
  %0 = attn.scores %q, %k : (tensor<1x6x3x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x6x3x3xf32>
  return
}

// -----

func.func @gqa_more_kv_heads(%q: tensor<1x2x3x8xf32>, %k: tensor<1x4x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op query heads Hq = 2 must be a multiple of KV heads Hk = 4 (GQA)}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @gqa_zero_kv_heads(%q: tensor<1x2x3x8xf32>, %k: tensor<1x0x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op query heads Hq = 2 must be a multiple of KV heads Hk = 0 (GQA)}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x8xf32>, tensor<1x0x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @path_w_shape(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x5x8xf32>, %w: tensor<1x2x4x8xf32>, %b: tensor<1x2x5xf32>) {
  // expected-error @+1 {{'attn.scores' op 'w' must have shape [B, Hk, S, D] = [1, 2, 5, 8], got 'tensor<1x2x4x8xf32>' (dim 2 'S' is 5 from 'k')}}
  %0 = attn.scores %q, %k path(%w, %b) : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x5xf32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

// PaTH parameters are per KV head.
func.func @path_beta_heads(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x5x8xf32>, %w: tensor<1x2x5x8xf32>, %b: tensor<1x4x5xf32>) {
  // expected-error @+1 {{'attn.scores' op 'beta' must have shape [B, Hk, S] = [1, 2, 5], got 'tensor<1x4x5xf32>' (dim 1 'Hk' is 2 from 'k')}}
  %0 = attn.scores %q, %k path(%w, %b) : (tensor<1x4x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x4x5xf32>) -> tensor<1x4x5x5xf32>
  return
}

// -----

// The forget gate is per query head.
func.func @gate_heads(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x5x8xf32>, %g: tensor<1x2x5xf32>) {
  // expected-error @+1 {{'attn.scores' op 'g' must have shape [B, Hq, S] = [1, 4, 5], got 'tensor<1x2x5xf32>' (dim 1 'Hq' is 4 from 'q')}}
  %0 = attn.scores %q, %k gate(%g) : (tensor<1x4x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5xf32>) -> tensor<1x4x5x5xf32>
  return
}

// -----

func.func @gate_length(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x7x8xf32>, %g: tensor<?x?x6xf32>) {
  // expected-error @+1 {{'attn.scores' op 'g' must have shape [B, Hq, S] = [?, ?, 7], got 'tensor<?x?x6xf32>' (dim 2 'S' is 7 from 'k')}}
  %0 = attn.scores %q, %k gate(%g) : (tensor<?x?x?x8xf32>, tensor<?x?x7x8xf32>, tensor<?x?x6xf32>) -> tensor<?x?x?x7xf32>
  return
}

// -----

func.func @scaled_without_gate(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op 'scaled' needs a forget gate 'g'}}
  %0 = attn.scores %q, %k scaled : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scaled_with_path_only(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %w: tensor<1x2x3x8xf32>, %b: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.scores' op 'scaled' needs a forget gate 'g'}}
  %0 = attn.scores %q, %k path(%w, %b) scaled : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @sliding_window_without_window(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op mask sliding_window needs a 'window' attribute >= 1}}
  %0 = attn.scores %q, %k mask sliding_window : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @sliding_window_zero(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op mask sliding_window needs a 'window' attribute >= 1}}
  %0 = attn.scores %q, %k mask sliding_window window 0 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @sliding_window_negative(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op mask sliding_window needs a 'window' attribute >= 1}}
  %0 = attn.scores %q, %k mask sliding_window window -4 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

// mask causal is the default.
func.func @window_without_sliding_window(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op 'window' is only valid with mask sliding_window}}
  %0 = attn.scores %q, %k window 4 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @window_with_mask_none(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op 'window' is only valid with mask sliding_window}}
  %0 = attn.scores %q, %k mask none window 4 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @mask_none_with_path(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %w: tensor<1x2x3x8xf32>, %b: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.scores' op PaTH paths and forget gates need a causal or sliding_window mask, got mask none}}
  %0 = attn.scores %q, %k path(%w, %b) mask none : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @mask_none_with_gate(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %g: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.scores' op PaTH paths and forget gates need a causal or sliding_window mask, got mask none}}
  %0 = attn.scores %q, %k gate(%g) mask none : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scale_inf(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op attribute 'scale' must be finite, got INF}}
  %0 = attn.scores %q, %k scale 0x7FF0000000000000 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @scale_nan(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op attribute 'scale' must be finite, got nan}}
  %0 = attn.scores %q, %k scale 0x7FF8000000000000 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @causal_t_greater_than_s(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.scores' op a causal or sliding_window mask needs T <= S (queries are the last T of S positions), got T = 5, S = 3}}
  %0 = attn.scores %q, %k : (tensor<1x2x5x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x5x3xf32>
  return
}

// -----

func.func @sliding_window_t_greater_than_s(%q: tensor<?x?x4x8xf32>, %k: tensor<?x?x2x8xf32>) {
  // expected-error @+1 {{'attn.scores' op a causal or sliding_window mask needs T <= S (queries are the last T of S positions), got T = 4, S = 2}}
  %0 = attn.scores %q, %k mask sliding_window window 2 : (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>) -> tensor<?x?x4x2xf32>
  return
}

// -----

func.func @result_shape(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'attn.scores' op 'result' must have shape [B, Hq, T, S] = [1, 2, 3, 4], got 'tensor<1x2x3x3xf32>' (dim 3 'S' is 4 from 'k')}}
  %0 = attn.scores %q, %k : (tensor<1x2x3x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

// With GQA the map has the query heads.
func.func @result_heads(%q: tensor<?x8x?x8xf32>, %k: tensor<?x2x?x8xf32>) {
  // expected-error @+1 {{'attn.scores' op 'result' must have shape [B, Hq, T, S] = [?, 8, ?, ?], got 'tensor<?x2x?x?xf32>' (dim 1 'Hq' is 8 from 'q')}}
  %0 = attn.scores %q, %k : (tensor<?x8x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x?xf32>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<1x2x4x0xf32>, %k: tensor<1x2x4x0xf32>) {
  // expected-error @+1 {{'attn.scores' op head dim D of 'q' and 'k' must be >= 1}}
  %0 = attn.scores %q, %k : (tensor<1x2x4x0xf32>, tensor<1x2x4x0xf32>) -> tensor<1x2x4x4xf32>
  return
}
