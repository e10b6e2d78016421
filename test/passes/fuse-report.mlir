// attn-fuse is silent by default; with `report` it emits a remark per fused
// chain ("fused N ops into attn.attention", N counting the ops replaced,
// ropes included) at the chain's last op, and says why a chain, a head_norm
// or a rope pair was left unfused. A matching rope pair is always fused, also
// when q's offset cannot be proven to be k's + S - T (the fused op then
// carries rope_q_offset): no "rope not fused" remark for those.
// RUN: attn-opt %s -split-input-file --attn-fuse=report=true -verify-diagnostics
// Without `report` nothing is said, whether a chain is fused or not (inputs
// without expected-* lines, which attn-opt would otherwise list at exit).
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SILENT
// RUN: attn-opt %S/fuse-multi-use.mlir -split-input-file --attn-fuse 2>&1 \
// RUN:   | FileCheck %s --check-prefix=QUIET
// SILENT-NOT: remark
// SILENT: attn.attention
// SILENT-NOT: remark
// QUIET-NOT: remark
// QUIET: attn.softmax
// QUIET-NOT: remark

func.func @fused(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %s = attn.scores %q, %k gate(%g) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  // expected-remark @below {{fused 3 ops into attn.attention}}
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

func.func @fused_rope_mta_norm(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>,
    %th: tensor<2x3x3xf32>, %w: tensor<2x2xf32>, %gamma: tensor<16xf32>) -> tensor<1x2x4x16xf32> {
  %qr = attn.rope %q offset 4 : tensor<1x2x4x16xf32>
  %kr = attn.rope %k : tensor<1x2x8x16xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x4x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x4x8xf32>
  %c = attn.kq_conv pre %s, %th : tensor<1x2x4x8xf32>, tensor<2x3x3xf32>
  %p = attn.softmax %c : tensor<1x2x4x8xf32>
  %m = attn.head_mix post %p, %w : tensor<1x2x4x8xf32>, tensor<2x2xf32>
  %o = attn.weighted_sum %m, %v : (tensor<1x2x4x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x4x16xf32>
  // expected-remark @below {{fused 8 ops into attn.attention}}
  %n = attn.head_norm %o, %gamma : (tensor<1x2x4x16xf32>, tensor<16xf32>) -> tensor<1x2x4x16xf32>
  return %n : tensor<1x2x4x16xf32>
}

// -----

// The examples' RoPE (dynamic T and S): the ropes are fused too.
func.func @rope_dynamic(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %qr = attn.rope %q : tensor<?x?x?x64xf32>
  %kr = attn.rope %k : tensor<?x?x?x64xf32>
  %s = attn.scores %qr, %kr : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  // expected-remark @below {{fused 5 ops into attn.attention}}
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Static T < S, q's offset 1 is not k's 1 + 8 - 4: fused, with rope_q_offset.
func.func @rope_wrong_offset(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x4x16xf32> {
  %qr = attn.rope %q offset 1 : tensor<1x2x4x16xf32>
  %kr = attn.rope %k offset 1 : tensor<1x2x8x16xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x4x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x4x8xf32>
  %p = attn.softmax %s : tensor<1x2x4x8xf32>
  // expected-remark @below {{fused 5 ops into attn.attention}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x4x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}

// -----

// Ropes that do not match stay outside; the rest is fused.
func.func @rope_theta_differs(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %qr = attn.rope %q theta 5.0e+05 : tensor<1x2x8x16xf32>
  %kr = attn.rope %k : tensor<1x2x8x16xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{fused 3 ops into attn.attention}}
  // expected-remark @below {{rope not fused: q's and k's ropes differ in theta, style or rotary_dim}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @rope_k_only(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kr = attn.rope %k offset 3 : tensor<1x2x8x16xf32>
  %s = attn.scores %q, %kr : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{fused 3 ops into attn.attention}}
  // expected-remark @below {{rope not fused: only k comes from attn.rope}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// An inverse rope (a gradient) is not attn.attention's rope(theta).
func.func @rope_inverse(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %qr = attn.rope %q inverse : tensor<1x2x8x16xf32>
  %kr = attn.rope %k inverse : tensor<1x2x8x16xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{fused 3 ops into attn.attention}}
  // expected-remark @below {{rope not fused: a rope is an inverse rotation (a gradient)}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @rope_q_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %qr = attn.rope %q : tensor<1x2x8x16xf32>
  %kr = attn.rope %k : tensor<1x2x8x16xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{fused 3 ops into attn.attention}}
  // expected-remark @below {{rope not fused: the rotated q has 2 uses}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %qr : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

func.func @score_map_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{not fused: the score map has 2 uses}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %s : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}

// -----

func.func @softmax_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{not fused: the softmax output has 2 uses}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %p : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}

// -----

func.func @l2norm_between(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %n = attn.l2norm %s : tensor<1x2x8x8xf32>
  %p = attn.softmax %n : tensor<1x2x8x8xf32>
  // expected-remark @below {{not fused: expected attn.scores (then optional kq_conv pre, head_mix pre) before the softmax, found 'attn.l2norm'}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @conv_after_softmax_wrong_stage(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %c = attn.kq_conv pre %p, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  // expected-remark @below {{not fused: expected attn.softmax (then optional kq_conv post, head_mix post) before the weighted_sum, found 'attn.kq_conv' (stage pre)}}
  %o = attn.weighted_sum %c, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @mta_needs_causal(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<2x2xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k mask none : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %m = attn.head_mix pre %s, %w : tensor<1x2x8x8xf32>, tensor<2x2xf32>
  %p = attn.softmax %m : tensor<1x2x8x8xf32>
  // expected-remark @below {{not fused: MTA pieces need a causal mask in attn.attention, the scores have mask none}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @element_types(%q: tensor<1x2x8x16xf16>, %k: tensor<1x2x8x16xf16>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{not fused: v's element type f32 is not q's f16}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The weighted_sum is fused; its second use keeps the head_norm out.
func.func @norm_left_out(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %gamma: tensor<16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  // expected-remark @below {{fused 3 ops into attn.attention}}
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  // expected-remark @below {{head_norm not fused: the weighted_sum result has 2 uses}}
  %n = attn.head_norm %o, %gamma : (tensor<1x2x8x16xf32>, tensor<16xf32>) -> tensor<1x2x8x16xf32>
  return %n, %o : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}
