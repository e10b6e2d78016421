// Packed sequences (cu_seqlens) on attn.scores, attn.scores_grad, MTA's
// pieces and their gradients, and attn.attention: round trip, and the
// verifier's refusals.
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @roundtrip
// CHECK: attn.scores %{{.*}}, %{{.*}} gate(%{{.*}}) cu_seqlens(%{{.*}}) : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>) -> tensor<1x2x?x?xf32>
// CHECK: attn.scores_grad %{{.*}}, %{{.*}} gate(%{{.*}}) cu_seqlens(%{{.*}}), %{{.*}} : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>, tensor<1x2x?x?xf32>) -> (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>)
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} rope(1.000000e+04) path(%{{.*}}, %{{.*}}) cu_seqlens(%{{.*}}) mask sliding_window window 8 :
func.func @roundtrip(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                     %g: tensor<1x2x?xf32>, %w: tensor<1x2x?x16xf32>, %b: tensor<1x2x?xf32>,
                     %cu: tensor<?xi32>, %ds: tensor<1x2x?x?xf32>) {
  %s = attn.scores %q, %k gate(%g) cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>) -> tensor<1x2x?x?xf32>
  %dq, %dk, %dg = attn.scores_grad %q, %k gate(%g) cu_seqlens(%cu), %ds
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>, tensor<1x2x?x?xf32>)
      -> (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>)
  %o = attn.attention %q, %k, %v rope(1.0e+04) path(%w, %b) cu_seqlens(%cu) mask sliding_window window 8
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>)
      -> tensor<1x2x?x16xf32>
  return
}

// -----

func.func @queries_not_keys(%q: tensor<1x2x3x16xf32>, %k: tensor<1x2x5x16xf32>, %cu: tensor<?xi32>) {
  // expected-error @+1 {{'attn.scores' op packed sequences (cu_seqlens) need T == S, got T = 3, S = 5}}
  %s = attn.scores %q, %k cu_seqlens(%cu)
      : (tensor<1x2x3x16xf32>, tensor<1x2x5x16xf32>, tensor<?xi32>) -> tensor<1x2x3x5xf32>
  return
}

// -----

func.func @one_offset(%q: tensor<1x2x?x16xf32>, %cu: tensor<1xi32>) {
  // expected-error @+1 {{'attn.scores' op 'cu_seqlens' holds N + 1 >= 2 offsets, got 'tensor<1xi32>'}}
  %s = attn.scores %q, %q cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1xi32>) -> tensor<1x2x?x?xf32>
  return
}

// -----

func.func @i64_offsets(%q: tensor<1x2x?x16xf32>, %cu: tensor<?xi64>) {
  // expected-error @+1 {{operand #2 must be 1D tensor of 32-bit signless integer values}}
  %s = attn.scores %q, %q cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<?xi64>) -> tensor<1x2x?x?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @mta_pieces
// CHECK: attn.kq_conv pre %{{.*}}, %{{.*}} cu_seqlens(%{{.*}}) : tensor<1x2x?x?xf32>, tensor<2x2x3xf32>, tensor<?xi32>
// CHECK: attn.head_mix post %{{.*}}, %{{.*}} cu_seqlens(%{{.*}}) : tensor<1x2x?x?xf32>, tensor<2x2xf32>, tensor<?xi32>
// CHECK: attn.kq_conv_grad pre %{{.*}}, %{{.*}}, %{{.*}} cu_seqlens(%{{.*}}) : (tensor<1x2x?x?xf32>, tensor<2x2x3xf32>, tensor<1x2x?x?xf32>, tensor<?xi32>) -> (tensor<1x2x?x?xf32>, tensor<2x2x3xf32>)
// CHECK: attn.head_mix_grad post %{{.*}}, %{{.*}}, %{{.*}} cu_seqlens(%{{.*}}) : (tensor<1x2x?x?xf32>, tensor<2x2xf32>, tensor<1x2x?x?xf32>, tensor<?xi32>) -> (tensor<1x2x?x?xf32>, tensor<2x2xf32>)
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kq_conv_pre(%{{.*}}) head_mix_post(%{{.*}}) cu_seqlens(%{{.*}}) :
func.func @mta_pieces(%q: tensor<1x2x?x16xf32>, %s: tensor<1x2x?x?xf32>, %th: tensor<2x2x3xf32>,
                      %w: tensor<2x2xf32>, %cu: tensor<?xi32>) {
  %c = attn.kq_conv pre %s, %th cu_seqlens(%cu) : tensor<1x2x?x?xf32>, tensor<2x2x3xf32>, tensor<?xi32>
  %m = attn.head_mix post %s, %w cu_seqlens(%cu) : tensor<1x2x?x?xf32>, tensor<2x2xf32>, tensor<?xi32>
  %dx, %dk = attn.kq_conv_grad pre %s, %th, %c cu_seqlens(%cu)
      : (tensor<1x2x?x?xf32>, tensor<2x2x3xf32>, tensor<1x2x?x?xf32>, tensor<?xi32>)
      -> (tensor<1x2x?x?xf32>, tensor<2x2x3xf32>)
  %dy, %dw = attn.head_mix_grad post %s, %w, %m cu_seqlens(%cu)
      : (tensor<1x2x?x?xf32>, tensor<2x2xf32>, tensor<1x2x?x?xf32>, tensor<?xi32>)
      -> (tensor<1x2x?x?xf32>, tensor<2x2xf32>)
  %o = attn.attention %q, %q, %q kq_conv_pre(%th) head_mix_post(%w) cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<2x2x3xf32>,
         tensor<2x2xf32>, tensor<?xi32>) -> tensor<1x2x?x16xf32>
  return
}

// -----

func.func @kq_conv_queries_not_keys(%s: tensor<1x2x3x5xf32>, %th: tensor<2x2x3xf32>, %cu: tensor<?xi32>) {
  // expected-error @+1 {{'attn.kq_conv' op packed sequences (cu_seqlens) need T == S, got T = 3, S = 5}}
  %c = attn.kq_conv pre %s, %th cu_seqlens(%cu) : tensor<1x2x3x5xf32>, tensor<2x2x3xf32>, tensor<?xi32>
  return
}

// -----

func.func @head_mix_one_offset(%s: tensor<1x2x?x?xf32>, %w: tensor<2x2xf32>, %cu: tensor<1xi32>) {
  // expected-error @+1 {{'attn.head_mix' op 'cu_seqlens' holds N + 1 >= 2 offsets, got 'tensor<1xi32>'}}
  %m = attn.head_mix pre %s, %w cu_seqlens(%cu) : tensor<1x2x?x?xf32>, tensor<2x2xf32>, tensor<1xi32>
  return
}

// -----

func.func @with_rope_q_offset(%q: tensor<1x2x?x16xf32>, %cu: tensor<?xi32>) {
  // expected-error @+1 {{'attn.attention' op packed sequences (cu_seqlens) are not supported with rope_q_offset (positions restart at each sequence's start)}}
  %o = attn.attention %q, %q, %q rope(1.0e+04) rope_q_offset 3 cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<?xi32>) -> tensor<1x2x?x16xf32>
  return
}
