// BUG: verifyQK (AttnVerifiers.cpp) only requires the *bound* head dim D to
// be static, so q with a dynamic D is accepted as soon as k's D is static
// (and vice versa). The ops then read D from q's type
// (ScoresOp/AttentionOp::getScaleOrDefault, LowerScores): the default scale
// becomes 1/sqrt(kDynamic) = NaN and the reference lowering emits a loop
// bound of -9223372036854775808. The dialect documents head dims as static
// and the message says "head dim D of 'q' and 'k' must be static", so all
// the forms below should be rejected with it. With k's D dynamic and RoPE
// enabled, attn.attention verifies but attn-expand-attention then produces
// an invalid attn.rope ("head dim D must be static"), and
// --attn-reference-to-llvm silently lowers the rope with a D of kDynamic.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @scores_dynamic_q_head_dim(%q: tensor<1x2x4x?xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'attn.scores' op head dim D of 'q' and 'k' must be static}}
  %0 = attn.scores %q, %k : (tensor<1x2x4x?xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @attention_dynamic_q_head_dim(%q: tensor<?x?x?x?xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op head dim D of 'q' and 'k' must be static}}
  %0 = attn.attention %q, %k, %v : (tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return
}

// -----

func.func @scores_dynamic_k_head_dim(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x?xf16>) {
  // expected-error @+1 {{'attn.scores' op head dim D of 'q' and 'k' must be static}}
  %0 = attn.scores %q, %k : (tensor<1x2x4x8xf16>, tensor<1x2x4x?xf16>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @attention_rope_dynamic_k_head_dim(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x64xf32>) {
  // expected-error @+1 {{'attn.attention' op head dim D of 'q' and 'k' must be static}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) : (tensor<?x?x?x64xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return
}
