// attn.attention verifier errors: the shared score, RoPE, MTA and norm
// pieces, and the checks only the fused op has.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_head_dim(%q: tensor<1x2x3x?xf32>, %k: tensor<1x2x3x?xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op head dim D of 'q' and 'k' must be static}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x3x?xf32>, tensor<1x2x3x?xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @qk_element_types(%q: tensor<1x2x3x8xf16>, %k: tensor<1x2x3x8xbf16>, %v: tensor<1x2x3x8xf16>) {
  // expected-error @+1 {{'attn.attention' op 'q' and 'k' must have the same element type, got 'f16' and 'bf16'}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x3x8xf16>, tensor<1x2x3x8xbf16>, tensor<1x2x3x8xf16>) -> tensor<1x2x3x8xf16>
  return
}

// -----

func.func @v_element_type(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xbf16>) {
  // expected-error @+1 {{'attn.attention' op 'v' must have q's element type 'f32', got 'bf16'}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xbf16>) -> tensor<1x2x3x8xbf16>
  return
}

// -----

func.func @v_heads(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x4x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op 'v' must have shape [B, Hk, S, Dv] = [1, 2, 3, ?], got 'tensor<1x4x3x8xf32>' (dim 1 'Hk' is 2 from 'k')}}
  %0 = attn.attention %q, %k, %v : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @dynamic_value_head_dim(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x?xf32>) {
  // expected-error @+1 {{'attn.attention' op value head dim Dv must be static}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32>
  return
}

// -----

func.func @gqa(%q: tensor<1x5x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op query heads Hq = 5 must be a multiple of KV heads Hk = 2 (GQA)}}
  %0 = attn.attention %q, %k, %v : (tensor<1x5x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x5x3x8xf32>
  return
}

// -----

func.func @path_beta_shape(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %w: tensor<1x2x3x8xf32>, %b: tensor<1x2x4xf32>) {
  // expected-error @+1 {{'attn.attention' op 'beta' must have shape [B, Hk, S] = [1, 2, 3], got 'tensor<1x2x4xf32>' (dim 2 'S' is 3 from 'k')}}
  %0 = attn.attention %q, %k, %v path(%w, %b) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @scaled_without_gate(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op 'scaled' needs a forget gate 'g'}}
  %0 = attn.attention %q, %k, %v scaled : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @sliding_window_without_window(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op mask sliding_window needs a 'window' attribute >= 1}}
  %0 = attn.attention %q, %k, %v mask sliding_window : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @window_without_sliding_window(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op 'window' is only valid with mask sliding_window}}
  %0 = attn.attention %q, %k, %v mask causal window 16 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @mask_none_with_gate(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %g: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.attention' op PaTH paths and forget gates need a causal or sliding_window mask, got mask none}}
  %0 = attn.attention %q, %k, %v gate(%g) mask none : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @mask_none_with_path(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %w: tensor<1x2x3x8xf32>, %b: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'attn.attention' op PaTH paths and forget gates need a causal or sliding_window mask, got mask none}}
  %0 = attn.attention %q, %k, %v path(%w, %b) mask none : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @causal_t_greater_than_s(%q: tensor<1x2x9x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op a causal or sliding_window mask needs T <= S (queries are the last T of S positions), got T = 9, S = 3}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x9x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x9x8xf32>
  return
}

// -----

func.func @scale_nan(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op attribute 'scale' must be finite, got nan}}
  %0 = attn.attention %q, %k, %v scale 0x7FF8000000000000 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_theta_zero(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op attribute 'theta' must be positive and finite, got 0.000000e+00}}
  %0 = attn.attention %q, %k, %v rope(0.0) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_theta_negative(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op attribute 'theta' must be positive and finite, got -5.000000e+00}}
  %0 = attn.attention %q, %k, %v rope(-5.0) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_dim_odd(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op rotary dim must be even and in [2, D = 8], got 5}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_dim 5 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_dim_too_large(%q: tensor<?x?x?x8xbf16>, %k: tensor<?x?x?x8xbf16>, %v: tensor<?x?x?x8xbf16>) {
  // expected-error @+1 {{'attn.attention' op rotary dim must be even and in [2, D = 8], got 10}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_dim 10 : (tensor<?x?x?x8xbf16>, tensor<?x?x?x8xbf16>, tensor<?x?x?x8xbf16>) -> tensor<?x?x?x8xbf16>
  return
}

// -----

func.func @rope_odd_head_dim(%q: tensor<1x2x3x9xf32>, %k: tensor<1x2x3x9xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op rotary dim must be even and in [2, D = 9], got 9}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) : (tensor<1x2x3x9xf32>, tensor<1x2x3x9xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

// RoPE positions index the cos/sin tables attn-to-block builds, from 0.
func.func @rope_offset_negative(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op rope positions must be non-negative: rope_offset and rope_q_offset must be >= 0}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_offset -1 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

// A non-negative rope_offset does not excuse a negative rope_q_offset.
func.func @rope_q_offset_negative(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op rope positions must be non-negative: rope_offset and rope_q_offset must be >= 0}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_offset 4 rope_q_offset -2 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_style_without_rope(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op rope_style, rope_dim, rope_offset and rope_q_offset need rope(theta)}}
  %0 = attn.attention %q, %k, %v rope_style interleaved : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_dim_without_rope(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op rope_style, rope_dim, rope_offset and rope_q_offset need rope(theta)}}
  %0 = attn.attention %q, %k, %v rope_dim 4 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @rope_offset_without_rope(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op rope_style, rope_dim, rope_offset and rope_q_offset need rope(theta)}}
  %0 = attn.attention %q, %k, %v rope_offset 12 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @mta_mask_none(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %t: tensor<2x3x3xf32>) {
  // expected-error @+1 {{'attn.attention' op MTA convolutions and head mixing need a causal mask}}
  %0 = attn.attention %q, %k, %v kq_conv_pre(%t) mask none : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<2x3x3xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @mta_sliding_window(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %w: tensor<2x2xf32>) {
  // expected-error @+1 {{'attn.attention' op MTA convolutions and head mixing need a causal mask}}
  %0 = attn.attention %q, %k, %v head_mix_post(%w) mask sliding_window window 2 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<2x2xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @kq_conv_pre_even_ck(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %t: tensor<2x6x10xf32>) {
  // expected-error @+1 {{'attn.attention' op 'kq_conv_pre' must have c_q >= 1 and an odd c_k (keys are padded (c_k-1)/2 each side), got 'tensor<2x6x10xf32>'}}
  %0 = attn.attention %q, %k, %v kq_conv_pre(%t) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<2x6x10xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @kq_conv_post_dynamic(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %t: tensor<2x?x11xf32>) {
  // expected-error @+1 {{'attn.attention' op kernel sizes of 'kq_conv_post' [H, c_q, c_k] must be static, got 'tensor<2x?x11xf32>'}}
  %0 = attn.attention %q, %k, %v kq_conv_post(%t) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<2x?x11xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

// MTA kernels act on query heads (here Hq = 4 with Hk = 2).
func.func @kq_conv_pre_heads(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %t: tensor<2x6x11xf32>) {
  // expected-error @+1 {{'attn.attention' op 'kq_conv_pre' must have shape [Hq, c_q, c_k] = [4, ?, ?], got 'tensor<2x6x11xf32>' (dim 0 'Hq' is 4 from 'q')}}
  %0 = attn.attention %q, %k, %v kq_conv_pre(%t) : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<2x6x11xf32>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @head_mix_pre_group(%q: tensor<1x4x3x8xf32>, %k: tensor<1x4x3x8xf32>, %v: tensor<1x4x3x8xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'attn.attention' op group size c_h = 3 must divide the head count Hq = 4}}
  %0 = attn.attention %q, %k, %v head_mix_pre(%w) : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<4x3xf32>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @head_mix_post_zero_group(%q: tensor<1x4x3x8xf32>, %k: tensor<1x4x3x8xf32>, %v: tensor<1x4x3x8xf32>, %w: tensor<4x0xf32>) {
  // expected-error @+1 {{'attn.attention' op group size c_h = dim 1 of 'head_mix_post' [H, c_h] must be >= 1, got 'tensor<4x0xf32>'}}
  %0 = attn.attention %q, %k, %v head_mix_post(%w) : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<4x0xf32>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @head_mix_post_heads(%q: tensor<1x4x3x8xf32>, %k: tensor<1x4x3x8xf32>, %v: tensor<1x4x3x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{'attn.attention' op 'head_mix_post' must have shape [Hq, 4] = [4, 4], got 'tensor<8x4xf32>' (dim 0 'Hq' is 4 from 'q')}}
  %0 = attn.attention %q, %k, %v head_mix_post(%w) : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<8x4xf32>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @norm_gamma_size(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x16xf32>, %n: tensor<8xf32>) {
  // expected-error @+1 {{'attn.attention' op 'gamma' must have shape [Dv] = [16], got 'tensor<8xf32>' (dim 0 'Dv' is 16 from 'v')}}
  %0 = attn.attention %q, %k, %v norm(%n) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x16xf32>, tensor<8xf32>) -> tensor<1x2x3x16xf32>
  return
}

// -----

func.func @norm_gate_b_size(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %n: tensor<8xf32>, %gw: tensor<8xf32>, %gb: tensor<8xf32>) {
  // expected-error @+1 {{'attn.attention' op 'gate_b' must have shape [1] = [1], got 'tensor<8xf32>' (dim 0 '1' is 1)}}
  %0 = attn.attention %q, %k, %v norm(%n) norm_gate(%gw, %gb) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @norm_gate_without_norm(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %gw: tensor<8xf32>, %gb: tensor<1xf32>) {
  // expected-error @+1 {{'attn.attention' op norm_gate needs norm(gamma)}}
  %0 = attn.attention %q, %k, %v norm_gate(%gw, %gb) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @norm_eps_zero(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %n: tensor<8xf32>) {
  // expected-error @+1 {{'attn.attention' op attribute 'eps' must be positive and finite, got 0.000000e+00}}
  %0 = attn.attention %q, %k, %v norm(%n) norm_eps 0.0 : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<8xf32>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @result_element_type(%q: tensor<1x2x3x8xf16>, %k: tensor<1x2x3x8xf16>, %v: tensor<1x2x3x8xf16>) {
  // expected-error @+1 {{'attn.attention' op result element type must be v's element type 'f16', got 'f32'}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x3x8xf16>, tensor<1x2x3x8xf16>, tensor<1x2x3x8xf16>) -> tensor<1x2x3x8xf32>
  return
}

// -----

func.func @result_shape(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x16xf32>) {
  // expected-error @+1 {{'attn.attention' op 'result' must have shape [B, Hq, T, Dv] = [1, 4, 3, 16], got 'tensor<1x4x5x16xf32>' (dim 2 'T' is 3 from 'q')}}
  %0 = attn.attention %q, %k, %v : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x16xf32>) -> tensor<1x4x5x16xf32>
  return
}
