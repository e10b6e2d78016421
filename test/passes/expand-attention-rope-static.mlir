// attn-expand-attention with RoPE and static T, S: q's rope gets the static
// offset rope_offset + S - T, no positions tensor is built.
// RUN: attn-opt %s --attn-expand-attention | FileCheck %s

// CHECK-LABEL: func.func @rope_static
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x4x3x64xf32>, %[[K:[^:]*]]: tensor<1x4x10x64xf32>, %[[V:[^:]*]]: tensor<1x4x10x64xf32>)
// CHECK-NOT: tensor.generate
// CHECK-NOT: tensor.dim
// CHECK: %[[QR:.*]] = attn.rope %[[Q]] offset 9 : tensor<1x4x3x64xf32>
// CHECK: %[[KR:.*]] = attn.rope %[[K]] offset 2 : tensor<1x4x10x64xf32>
// CHECK: %[[S:.*]] = attn.scores %[[QR]], %[[KR]] : (tensor<1x4x3x64xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x10xf32>
// CHECK: %[[P:.*]] = attn.softmax %[[S]] : tensor<1x4x3x10xf32>
// CHECK: %[[O:.*]] = attn.weighted_sum %[[P]], %[[V]] : (tensor<1x4x3x10xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32>
// CHECK: return %[[O]]
func.func @rope_static(%q: tensor<1x4x3x64xf32>, %k: tensor<1x4x10x64xf32>, %v: tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32> {
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_offset 2
      : (tensor<1x4x3x64xf32>, tensor<1x4x10x64xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32>
  return %0 : tensor<1x4x3x64xf32>
}

// T == S: the q offset is just rope_offset (0, elided); every RoPE
// attribute is forwarded to both ropes.
// CHECK-LABEL: func.func @rope_static_square
// CHECK-NOT: tensor.generate
// CHECK: %[[QR:.*]] = attn.rope %{{.*}} style interleaved theta 5.000000e+05 rotary_dim 16 : tensor<2x8x16x32xf16>
// CHECK: %[[KR:.*]] = attn.rope %{{.*}} style interleaved theta 5.000000e+05 rotary_dim 16 : tensor<2x2x16x32xf16>
// CHECK: attn.scores %[[QR]], %[[KR]] : (tensor<2x8x16x32xf16>, tensor<2x2x16x32xf16>) -> tensor<2x8x16x16xf32>
func.func @rope_static_square(%q: tensor<2x8x16x32xf16>, %k: tensor<2x2x16x32xf16>, %v: tensor<2x2x16x32xf16>) -> tensor<2x8x16x32xf16> {
  %0 = attn.attention %q, %k, %v rope(5.0e+05) rope_style interleaved rope_dim 16
      : (tensor<2x8x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>) -> tensor<2x8x16x32xf16>
  return %0 : tensor<2x8x16x32xf16>
}

// Without rope(...) no attn.rope is created.
// CHECK-LABEL: func.func @no_rope
// CHECK-NOT: attn.rope
// CHECK: attn.scores
func.func @no_rope(%q: tensor<1x4x3x64xf32>, %k: tensor<1x4x10x64xf32>, %v: tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32> {
  %0 = attn.attention %q, %k, %v
      : (tensor<1x4x3x64xf32>, tensor<1x4x10x64xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32>
  return %0 : tensor<1x4x3x64xf32>
}
