// attn-expand-attention: every optional piece of attn.attention becomes its
// op in the documented order
//   scores -> kq_conv pre -> head_mix pre -> softmax -> kq_conv post
//          -> head_mix post -> weighted_sum -> head_norm
// and the score attributes (path, gate, scaled, mask, window, scale) move to
// attn.scores.
// RUN: attn-opt %s --attn-expand-attention | FileCheck %s

// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[S:.*]] = attn.scores %[[Q]], %[[K]] : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[S]] : tensor<?x?x?x?xf32>
// CHECK-NEXT: %[[O:.*]] = attn.weighted_sum %[[P]], %[[V]] : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @plain(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// CHECK-LABEL: func.func @path_fox_window
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[S:.*]] = attn.scores %[[Q]], %[[K]] path(%[[W]], %[[B]]) gate(%[[G]]) scaled mask sliding_window window 32 scale 2.500000e-01 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8x8xf32>
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[S]] : tensor<2x4x8x8xf32>
// CHECK-NEXT: %[[O:.*]] = attn.weighted_sum %[[P]], %[[V]] : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @path_fox_window(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>,
    %w: tensor<2x4x8x16xf32>, %beta: tensor<2x4x8xf32>, %g: tensor<2x4x8xf32>) -> tensor<2x4x8x16xf32> {
  %0 = attn.attention %q, %k, %v path(%w, %beta) gate(%g) scaled mask sliding_window window 32 scale 0.25
      : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// mask none is forwarded (T > S is fine without a causal mask).
// CHECK-LABEL: func.func @mask_none
// CHECK: attn.scores %{{.*}}, %{{.*}} mask none : (tensor<1x2x6x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x6x4xf32>
func.func @mask_none(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x6x8xf32> {
  %0 = attn.attention %q, %k, %v mask none : (tensor<1x2x6x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// Everything: RoPE, PaTH-FoX, both MTA stages, the gated norm, GQA, bf16.
// CHECK-LABEL: func.func @everything
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^,]*}}, %[[KP:[^:]*]]: {{[^,]*}}, %[[HP:[^:]*]]: {{[^,]*}}, %[[KPO:[^:]*]]: {{[^,]*}}, %[[HPO:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^,]*}}, %[[GW:[^:]*]]: {{[^,]*}}, %[[GB:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[QR:.*]] = attn.rope %[[Q]] style interleaved theta 5.000000e+05 rotary_dim 32 offset 7 : tensor<2x8x16x64xbf16>
// CHECK-NEXT: %[[KR:.*]] = attn.rope %[[K]] style interleaved theta 5.000000e+05 rotary_dim 32 offset 7 : tensor<2x4x16x64xbf16>
// CHECK-NEXT: %[[S:.*]] = attn.scores %[[QR]], %[[KR]] path(%[[W]], %[[B]]) gate(%[[G]]) scaled scale 1.250000e-01 : (tensor<2x8x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16x16xf32>
// CHECK-NEXT: %[[C1:.*]] = attn.kq_conv pre %[[S]], %[[KP]] : tensor<2x8x16x16xf32>, tensor<8x6x11xf32>
// CHECK-NEXT: %[[M1:.*]] = attn.head_mix pre %[[C1]], %[[HP]] : tensor<2x8x16x16xf32>, tensor<8x8xf32>
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[M1]] : tensor<2x8x16x16xf32>
// CHECK-NEXT: %[[C2:.*]] = attn.kq_conv post %[[P]], %[[KPO]] : tensor<2x8x16x16xf32>, tensor<8x6x11xf32>
// CHECK-NEXT: %[[M2:.*]] = attn.head_mix post %[[C2]], %[[HPO]] : tensor<2x8x16x16xf32>, tensor<8x4xf32>
// CHECK-NEXT: %[[O:.*]] = attn.weighted_sum %[[M2]], %[[V]] : (tensor<2x8x16x16xf32>, tensor<2x4x16x32xbf16>) -> tensor<2x8x16x32xbf16>
// CHECK-NEXT: %[[N:.*]] = attn.head_norm %[[O]], %[[GAM]] gate(%[[GW]], %[[GB]]) eps 9.9999999999999995E-7 : (tensor<2x8x16x32xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x8x16x32xbf16>
// CHECK-NEXT: return %[[N]]
func.func @everything(%q: tensor<2x8x16x64xbf16>, %k: tensor<2x4x16x64xbf16>, %v: tensor<2x4x16x32xbf16>,
    %w: tensor<2x4x16x64xf32>, %beta: tensor<2x4x16xf32>, %g: tensor<2x8x16xf32>,
    %kp: tensor<8x6x11xf32>, %hp: tensor<8x8xf32>, %kpo: tensor<8x6x11xf32>, %hpo: tensor<8x4xf32>,
    %gamma: tensor<32xf32>, %gw: tensor<32xf32>, %gb: tensor<1xf32>) -> tensor<2x8x16x32xbf16> {
  %o = attn.attention %q, %k, %v rope(5.0e+05) rope_style interleaved rope_dim 32 rope_offset 7
      path(%w, %beta) gate(%g) scaled kq_conv_pre(%kp) head_mix_pre(%hp) kq_conv_post(%kpo) head_mix_post(%hpo)
      norm(%gamma) norm_gate(%gw, %gb) norm_eps 1.0e-6 scale 0.125
      : (tensor<2x8x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>, tensor<8x6x11xf32>, tensor<8x8xf32>, tensor<8x6x11xf32>, tensor<8x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x8x16x32xbf16>
  return %o : tensor<2x8x16x32xbf16>
}
