// An operand group that is written must hold its operands: `gate()` used to
// parse as "no gate" and the feature silently disappeared (the oracle saw
// the same program, so --check passed).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @scores_gate(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.scores %q, %k gate() : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @scores_path_empty(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.scores %q, %k path(,) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @scores_path_no_beta(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %w: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.scores %q, %k path(%w, ) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @rope_positions(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.rope %q positions() : tensor<1x2x4x8xf32>
  return
}

// -----

func.func @head_norm_gate(%o: tensor<1x2x4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.head_norm %o, %g gate(, ) : (tensor<1x2x4x8xf32>, tensor<8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_gate(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v gate() : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_path(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v path(,) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_kq_conv_pre(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v kq_conv_pre() : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_head_mix_pre(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v head_mix_pre() : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_kq_conv_post(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v kq_conv_post() : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_head_mix_post(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v head_mix_post() : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_norm(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v norm() : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_norm_gate(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %n: tensor<8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = attn.attention %q, %k, %v norm(%n) norm_gate(,) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<8xf32>) -> tensor<1x2x4x8xf32>
  return
}
