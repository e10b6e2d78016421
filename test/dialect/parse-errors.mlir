// Malformed custom syntax: unknown keywords, bad enum values, groups out of
// order, missing pieces and truncated input are parse errors (never
// crashes).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @unknown_keyword(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = attn.rope %q bogus 1.0 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @unknown_op(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{custom op 'attn.bogus' is unknown}}
  %0 = attn.bogus %q : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @bad_rope_style(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{custom op 'attn.rope' expected string or keyword containing one of the following enum values for attribute 'style' [half, interleaved]}}
  %0 = attn.rope %q style diagonal : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @bad_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{custom op 'attn.scores' expected string or keyword containing one of the following enum values for attribute 'mask' [causal, none, sliding_window]}}
  %0 = attn.scores %q, %k mask diagonal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @bad_stage(%s: tensor<1x2x4x4xf32>, %w: tensor<2x3x3xf32>) {
  // expected-error @+1 {{custom op 'attn.kq_conv' expected string or keyword containing one of the following enum values for attribute 'stage' [pre, post]}}
  %0 = attn.kq_conv middle %s, %w : tensor<1x2x4x4xf32>, tensor<2x3x3xf32>
  return
}

// -----

func.func @missing_stage(%s: tensor<1x2x4x4xf32>, %w: tensor<2x2xf32>) {
  // expected-error @+1 {{custom op 'attn.head_mix' expected string or keyword containing one of the following enum values for attribute 'stage' [pre, post]}}
  %0 = attn.head_mix %s, %w : tensor<1x2x4x4xf32>, tensor<2x2xf32>
  return
}

// -----

func.func @bad_attention_rope_style(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{custom op 'attn.attention' expected string or keyword containing one of the following enum values for attribute 'rope_style' [half, interleaved]}}
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_style neox : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @rope_without_parens(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected '('}}
  %0 = attn.attention %q, %k, %v rope 1.0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @path_missing_comma(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %w: tensor<1x2x4x8xf32>, %b: tensor<1x2x4xf32>) {
  // expected-error @+1 {{expected ','}}
  %0 = attn.scores %q, %k path(%w %b) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// A path is always the pair (w, beta).
func.func @path_missing_beta(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %w: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected ','}}
  %0 = attn.scores %q, %k path(%w) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// Optional groups have a fixed order: mask before scale.
func.func @groups_out_of_order(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = attn.scores %q, %k scale 0.5 mask none : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @window_without_value(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected an integer}}
  %0 = attn.scores %q, %k mask sliding_window window : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @integer_theta(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+2 {{unexpected decimal integer literal for a floating point value}}
  // expected-note @+1 {{add a trailing dot to make the literal a float}}
  %0 = attn.rope %q theta 10000 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @float_rotary_dim(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected an integer}}
  %0 = attn.rope %q rotary_dim 2.5 : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @silu_with_value(%x: tensor<1x2x4x8xf32>, %k: tensor<2x8x3xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = attn.short_conv %x, %k silu(true) : tensor<1x2x4x8xf32>, tensor<2x8x3xf32>
  return
}

// -----

func.func @positions_type_missing(%q: tensor<1x2x4x8xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{custom op 'attn.rope' number of operands and types do not match: got 1 operands and 0 types}}
  %0 = attn.rope %q positions(%p) : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @functional_type_arity(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{custom op 'attn.scores' number of operands and types do not match: got 2 operands and 1 types}}
  %0 = attn.scores %q, %k : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @extra_operand(%x: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = attn.softmax %x, %x : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @undefined_value(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  %0 = attn.l2norm %zz : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @truncated_type(%s: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{expected non-function type}}
  %0 = attn.softmax %s :
}

// -----

func.func @truncated_after_operands(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = attn.scores %q, %k
}

// -----

func.func @truncated_group(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %g: tensor<1x2x4xf32>) {
  // expected-error @+1 {{expected ')'}}
  %0 = attn.scores %q, %k gate(%g
}

// -----

// Truncated in the middle of the last op of the file.
func.func @truncated_at_eof(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected ')'}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
