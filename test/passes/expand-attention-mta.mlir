// attn-expand-attention on MTA configurations: only the pieces present are
// created, in order, and the norm without gate keeps its eps.
// RUN: attn-opt %s --attn-expand-attention | FileCheck %s

// CHECK-LABEL: func.func @mta_pre_only
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[TH:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[S:.*]] = attn.scores %[[Q]], %[[K]] : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
// CHECK-NEXT: %[[C:.*]] = attn.kq_conv pre %[[S]], %[[TH]] : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[C]] : tensor<?x?x?x?xf32>
// CHECK-NEXT: attn.weighted_sum %[[P]], %[[V]]
// CHECK-NOT: attn.head_mix
// CHECK-NOT: attn.head_norm
func.func @mta_pre_only(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %th: tensor<?x6x11xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.attention %q, %k, %v kq_conv_pre(%th)
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x6x11xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// CHECK-LABEL: func.func @mta_post_mix_norm
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[HM:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[S:.*]] = attn.scores %[[Q]], %[[K]]
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[S]] : tensor<?x16x?x?xf32>
// CHECK-NEXT: %[[M:.*]] = attn.head_mix post %[[P]], %[[HM]] : tensor<?x16x?x?xf32>, tensor<16x4xf32>
// CHECK-NEXT: %[[O:.*]] = attn.weighted_sum %[[M]], %[[V]] : (tensor<?x16x?x?xf32>, tensor<?x16x?x64xf16>) -> tensor<?x16x?x64xf16>
// CHECK-NEXT: %[[N:.*]] = attn.head_norm %[[O]], %[[GAM]] eps 1.000000e-03 : (tensor<?x16x?x64xf16>, tensor<64xf32>) -> tensor<?x16x?x64xf16>
// CHECK-NEXT: return %[[N]]
func.func @mta_post_mix_norm(%q: tensor<?x16x?x64xf16>, %k: tensor<?x16x?x64xf16>, %v: tensor<?x16x?x64xf16>,
    %hm: tensor<16x4xf32>, %gamma: tensor<64xf32>) -> tensor<?x16x?x64xf16> {
  %0 = attn.attention %q, %k, %v head_mix_post(%hm) norm(%gamma) norm_eps 1.0e-3
      : (tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<?x16x?x64xf16>, tensor<16x4xf32>, tensor<64xf32>) -> tensor<?x16x?x64xf16>
  return %0 : tensor<?x16x?x64xf16>
}

// Ops other than attn.attention are left alone.
// CHECK-LABEL: func.func @unfused_untouched
// CHECK-NEXT: attn.scores
// CHECK-NEXT: attn.softmax
// CHECK-NEXT: return
func.func @unfused_untouched(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x3xf32>
  %p = attn.softmax %s : tensor<1x2x3x3xf32>
  return %p : tensor<1x2x3x3xf32>
}
