// attn-fuse on full chains: every piece lands in its slot of attn.attention
// and the scores' attributes and operands (path, gate, scaled, mask,
// window, scale) move over unchanged. This is the inverse of
// expand-attention-chain.mlir.
// RUN: attn-opt %s -split-input-file --attn-fuse | FileCheck %s \
// RUN:   --implicit-check-not=attn.scores --implicit-check-not=attn.softmax \
// RUN:   --implicit-check-not=attn.weighted_sum --implicit-check-not=attn.kq_conv \
// RUN:   --implicit-check-not=attn.head_mix --implicit-check-not=attn.head_norm \
// RUN:   --implicit-check-not=attn.rope

// CHECK-LABEL: func.func @path_fox_window
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] path(%[[W]], %[[B]]) gate(%[[G]]) scaled mask sliding_window window 32 scale 2.500000e-01 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @path_fox_window(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>,
    %w: tensor<2x4x8x16xf32>, %beta: tensor<2x4x8xf32>, %g: tensor<2x4x8xf32>) -> tensor<2x4x8x16xf32> {
  %s = attn.scores %q, %k path(%w, %beta) gate(%g) scaled mask sliding_window window 32 scale 0.25
      : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8x8xf32>
  %p = attn.softmax %s : tensor<2x4x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// mask none with T > S.
// CHECK-LABEL: func.func @mask_none
// CHECK-NEXT: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask none : (tensor<1x2x6x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x6x8xf32>
func.func @mask_none(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x6x8xf32> {
  %s = attn.scores %q, %k mask none : (tensor<1x2x6x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x6x4xf32>
  %p = attn.softmax %s : tensor<1x2x6x4xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x6x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x6x8xf32>
  return %o : tensor<1x2x6x8xf32>
}

// -----

// Everything: RoPE (static T = S), PaTH-FoX, both MTA stages, the gated
// norm, GQA, bf16 -- the output of attn-expand-attention on
// expand-attention-chain.mlir's @everything, fused back.
// CHECK-LABEL: func.func @everything
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^,]*}}, %[[KP:[^:]*]]: {{[^,]*}}, %[[HP:[^:]*]]: {{[^,]*}}, %[[KPO:[^:]*]]: {{[^,]*}}, %[[HPO:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^,]*}}, %[[GW:[^:]*]]: {{[^,]*}}, %[[GB:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(5.000000e+05) rope_style interleaved rope_dim 32 rope_offset 7 path(%[[W]], %[[B]]) gate(%[[G]]) scaled kq_conv_pre(%[[KP]]) head_mix_pre(%[[HP]]) kq_conv_post(%[[KPO]]) head_mix_post(%[[HPO]]) norm(%[[GAM]]) norm_gate(%[[GW]], %[[GB]]) norm_eps 9.9999999999999995E-7 scale 1.250000e-01 : (tensor<2x8x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>, tensor<8x6x11xf32>, tensor<8x8xf32>, tensor<8x6x11xf32>, tensor<8x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x8x16x32xbf16>
// CHECK-NEXT: return %[[O]]
func.func @everything(%q: tensor<2x8x16x64xbf16>, %k: tensor<2x4x16x64xbf16>, %v: tensor<2x4x16x32xbf16>,
    %w: tensor<2x4x16x64xf32>, %beta: tensor<2x4x16xf32>, %g: tensor<2x8x16xf32>,
    %kp: tensor<8x6x11xf32>, %hp: tensor<8x8xf32>, %kpo: tensor<8x6x11xf32>, %hpo: tensor<8x4xf32>,
    %gamma: tensor<32xf32>, %gw: tensor<32xf32>, %gb: tensor<1xf32>) -> tensor<2x8x16x32xbf16> {
  %qr = attn.rope %q style interleaved theta 5.000000e+05 rotary_dim 32 offset 7 : tensor<2x8x16x64xbf16>
  %kr = attn.rope %k style interleaved theta 5.000000e+05 rotary_dim 32 offset 7 : tensor<2x4x16x64xbf16>
  %s = attn.scores %qr, %kr path(%w, %beta) gate(%g) scaled scale 1.250000e-01 : (tensor<2x8x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16x16xf32>
  %c1 = attn.kq_conv pre %s, %kp : tensor<2x8x16x16xf32>, tensor<8x6x11xf32>
  %m1 = attn.head_mix pre %c1, %hp : tensor<2x8x16x16xf32>, tensor<8x8xf32>
  %p = attn.softmax %m1 : tensor<2x8x16x16xf32>
  %c2 = attn.kq_conv post %p, %kpo : tensor<2x8x16x16xf32>, tensor<8x6x11xf32>
  %m2 = attn.head_mix post %c2, %hpo : tensor<2x8x16x16xf32>, tensor<8x4xf32>
  %o = attn.weighted_sum %m2, %v : (tensor<2x8x16x16xf32>, tensor<2x4x16x32xbf16>) -> tensor<2x8x16x32xbf16>
  %n = attn.head_norm %o, %gamma gate(%gw, %gb) eps 9.9999999999999995E-7 : (tensor<2x8x16x32xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x8x16x32xbf16>
  return %n : tensor<2x8x16x32xbf16>
}

// -----

// Post-softmax pieces only: kq_conv post, then head_mix post.
// CHECK-LABEL: func.func @post_only
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[TH:[^:]*]]: {{[^,]*}}, %[[WM:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: attn.attention %[[Q]], %[[K]], %[[V]] kq_conv_post(%[[TH]]) head_mix_post(%[[WM]]) :
func.func @post_only(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>, %th: tensor<16x2x3xf32>, %wm: tensor<16x4xf32>) -> tensor<?x16x?x64xf16> {
  %s = attn.scores %q, %k : (tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>) -> tensor<?x16x?x?xf32>
  %p = attn.softmax %s : tensor<?x16x?x?xf32>
  %c = attn.kq_conv post %p, %th : tensor<?x16x?x?xf32>, tensor<16x2x3xf32>
  %m = attn.head_mix post %c, %wm : tensor<?x16x?x?xf32>, tensor<16x4xf32>
  %o = attn.weighted_sum %m, %v : (tensor<?x16x?x?xf32>, tensor<?x16x?x64xf16>) -> tensor<?x16x?x64xf16>
  return %o : tensor<?x16x?x64xf16>
}

// -----

// Two layers, the second reading the first's output as its query, and an
// attn.attention written by hand, which is left alone: each chain becomes
// its own fused op.
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[A:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] scale 5.000000e-01 :
// CHECK-NEXT: %[[B:.*]] = attn.attention %[[A]], %[[K]], %[[V]] :
// CHECK-NEXT: %[[C:.*]] = attn.attention %[[B]], %[[K]], %[[V]] mask none :
// CHECK-NEXT: return %[[C]]
func.func @two_layers(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %a = attn.attention %q, %k, %v scale 0.5 : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %s1 = attn.scores %a, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p1 = attn.softmax %s1 : tensor<1x2x8x8xf32>
  %o1 = attn.weighted_sum %p1, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %s2 = attn.scores %o1, %k mask none : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p2 = attn.softmax %s2 : tensor<1x2x8x8xf32>
  %o2 = attn.weighted_sum %p2, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o2 : tensor<1x2x8x16xf32>
}
