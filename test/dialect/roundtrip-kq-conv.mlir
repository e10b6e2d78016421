// Round trip of attn.kq_conv (both stages, static and dynamic maps).
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @kq_conv_pre_dynamic
// CHECK-SAME: (%[[S:.*]]: tensor<?x?x?x?xf32>, %[[TH:.*]]: tensor<?x6x11xf32>)
// CHECK: attn.kq_conv pre %[[S]], %[[TH]] : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
// GENERIC-LABEL: sym_name = "kq_conv_pre_dynamic"
// GENERIC: "attn.kq_conv"(%{{.*}}, %{{.*}}) <{stage = 0 : i32}> : (tensor<?x?x?x?xf32>, tensor<?x6x11xf32>) -> tensor<?x?x?x?xf32>
func.func @kq_conv_pre_dynamic(%s: tensor<?x?x?x?xf32>, %theta: tensor<?x6x11xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.kq_conv pre %s, %theta : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @kq_conv_post_static
// CHECK: attn.kq_conv post %{{.*}}, %{{.*}} : tensor<2x4x8x8xf32>, tensor<4x1x1xf32>
// GENERIC-LABEL: sym_name = "kq_conv_post_static"
// GENERIC: "attn.kq_conv"(%{{.*}}, %{{.*}}) <{stage = 1 : i32}>
func.func @kq_conv_post_static(%p: tensor<2x4x8x8xf32>, %theta: tensor<4x1x1xf32>) -> tensor<2x4x8x8xf32> {
  %0 = attn.kq_conv post %p, %theta : tensor<2x4x8x8xf32>, tensor<4x1x1xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// T < S (decode-style map) and a tall kernel.
// CHECK-LABEL: func.func @kq_conv_rect
// CHECK: attn.kq_conv pre %{{.*}}, %{{.*}} : tensor<1x16x3x40xf32>, tensor<16x9x3xf32>
func.func @kq_conv_rect(%s: tensor<1x16x3x40xf32>, %theta: tensor<16x9x3xf32>) -> tensor<1x16x3x40xf32> {
  %0 = attn.kq_conv pre %s, %theta : tensor<1x16x3x40xf32>, tensor<16x9x3xf32>
  return %0 : tensor<1x16x3x40xf32>
}
