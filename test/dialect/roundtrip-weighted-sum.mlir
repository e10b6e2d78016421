// Round trip of attn.weighted_sum: element types, GQA, static and dynamic.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @weighted_sum_f32
// CHECK-SAME: (%[[P:.*]]: tensor<?x?x?x?xf32>, %[[V:.*]]: tensor<?x?x?x64xf32>)
// CHECK: attn.weighted_sum %[[P]], %[[V]] : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// GENERIC-LABEL: sym_name = "weighted_sum_f32"
// GENERIC: "attn.weighted_sum"(%{{.*}}, %{{.*}}) : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
func.func @weighted_sum_f32(%p: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// GQA: 8 query heads read 2 KV heads; Dv (48) differs from D.
// CHECK-LABEL: func.func @weighted_sum_gqa_f16
// CHECK: attn.weighted_sum %{{.*}}, %{{.*}} : (tensor<2x8x16x16xf32>, tensor<2x2x16x48xf16>) -> tensor<2x8x16x48xf16>
func.func @weighted_sum_gqa_f16(%p: tensor<2x8x16x16xf32>, %v: tensor<2x2x16x48xf16>) -> tensor<2x8x16x48xf16> {
  %0 = attn.weighted_sum %p, %v : (tensor<2x8x16x16xf32>, tensor<2x2x16x48xf16>) -> tensor<2x8x16x48xf16>
  return %0 : tensor<2x8x16x48xf16>
}

// CHECK-LABEL: func.func @weighted_sum_bf16_mixed
// CHECK: attn.weighted_sum %{{.*}}, %{{.*}} : (tensor<1x4x?x?xf32>, tensor<?x4x?x32xbf16>) -> tensor<1x?x3x32xbf16>
func.func @weighted_sum_bf16_mixed(%p: tensor<1x4x?x?xf32>, %v: tensor<?x4x?x32xbf16>) -> tensor<1x?x3x32xbf16> {
  %0 = attn.weighted_sum %p, %v : (tensor<1x4x?x?xf32>, tensor<?x4x?x32xbf16>) -> tensor<1x?x3x32xbf16>
  return %0 : tensor<1x?x3x32xbf16>
}
