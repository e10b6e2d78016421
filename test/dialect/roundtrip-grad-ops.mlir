// Round trip of the VJP ops of softmax, weighted_sum, head_norm, short_conv
// and l2norm, of attn.logsumexp and of attn.rope's `inverse`: the custom form
// is printed, re-parsed, and also goes through the generic form and back,
// giving the same custom form. The cotangent is always the last operand.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @rope_inverse
// CHECK: attn.rope %{{.*}} positions(%{{.*}}) style interleaved rotary_dim 32 inverse : tensor<?x?x?x64xbf16>, tensor<?xi64>
// CHECK: attn.rope %{{.*}} offset 3 inverse : tensor<1x2x5x8xf32>
// GENERIC-LABEL: sym_name = "rope_inverse"
// GENERIC: "attn.rope"(%{{.*}}, %{{.*}}) <{inverse, offset = 0 : i64, rotary_dim = 32 : i64, style = 1 : i32, theta = 1.000000e+04 : f64}>
func.func @rope_inverse(%x: tensor<?x?x?x64xbf16>, %pos: tensor<?xi64>, %y: tensor<1x2x5x8xf32>)
    -> (tensor<?x?x?x64xbf16>, tensor<1x2x5x8xf32>) {
  %0 = attn.rope %x positions(%pos) style interleaved rotary_dim 32 inverse : tensor<?x?x?x64xbf16>, tensor<?xi64>
  %1 = attn.rope %y offset 3 inverse : tensor<1x2x5x8xf32>
  return %0, %1 : tensor<?x?x?x64xbf16>, tensor<1x2x5x8xf32>
}

// CHECK-LABEL: func.func @softmax_grad
// CHECK-SAME: (%[[P:.*]]: tensor<?x?x?x?xf32>, %[[DP:.*]]: tensor<?x?x?x?xf32>)
// CHECK: attn.softmax_grad %[[P]], %[[DP]] : tensor<?x?x?x?xf32>
// GENERIC: "attn.softmax_grad"(%{{.*}}, %{{.*}}) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
func.func @softmax_grad(%p: tensor<?x?x?x?xf32>, %dp: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.softmax_grad %p, %dp : tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// GQA, bf16 values: dp is f32, dv in v's type.
// CHECK-LABEL: func.func @weighted_sum_grad
// CHECK-SAME: (%[[P:.*]]: tensor<2x8x5x7xf32>, %[[V:.*]]: tensor<2x4x7x16xbf16>, %[[DO:.*]]: tensor<2x8x5x16xbf16>)
// CHECK: = attn.weighted_sum_grad %[[P]], %[[V]], %[[DO]] : (tensor<2x8x5x7xf32>, tensor<2x4x7x16xbf16>, tensor<2x8x5x16xbf16>) -> (tensor<2x8x5x7xf32>, tensor<2x4x7x16xbf16>)
func.func @weighted_sum_grad(%p: tensor<2x8x5x7xf32>, %v: tensor<2x4x7x16xbf16>, %do: tensor<2x8x5x16xbf16>)
    -> (tensor<2x8x5x7xf32>, tensor<2x4x7x16xbf16>) {
  %dp, %dv = attn.weighted_sum_grad %p, %v, %do
      : (tensor<2x8x5x7xf32>, tensor<2x4x7x16xbf16>, tensor<2x8x5x16xbf16>)
      -> (tensor<2x8x5x7xf32>, tensor<2x4x7x16xbf16>)
  return %dp, %dv : tensor<2x8x5x7xf32>, tensor<2x4x7x16xbf16>
}

// Without and with the gate: the gate's gradients are results exactly when
// its operands are (operand and result segment sizes); results are named
// after the operands whose cotangents they are.
// CHECK-LABEL: func.func @head_norm_grad
// CHECK: %input_grad, %gamma_grad = attn.head_norm_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x?x64xf32>, tensor<64xf32>, tensor<?x?x?x64xf32>) -> (tensor<?x?x?x64xf32>, tensor<64xf32>)
// CHECK: %{{.*}}, %{{.*}}, %gate_w_grad, %gate_b_grad = attn.head_norm_grad %{{.*}}, %{{.*}} gate(%{{.*}}, %{{.*}}), %{{.*}} eps 9.9999999999999995E-7 : (tensor<?x?x?x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>, tensor<?x?x?x64xf16>) -> (tensor<?x?x?x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>)
// GENERIC: "attn.head_norm_grad"(%{{.*}}, %{{.*}}, %{{.*}}) <{eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1>, resultSegmentSizes = array<i32: 1, 1, 0, 0>}>
// GENERIC: "attn.head_norm_grad"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{eps = 9.9999999999999995E-7 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 1, 1, 1>}>
func.func @head_norm_grad(%o: tensor<?x?x?x64xf32>, %gamma: tensor<64xf32>, %dy: tensor<?x?x?x64xf32>,
                          %o16: tensor<?x?x?x64xf16>, %w: tensor<64xf32>, %b: tensor<1xf32>, %dy16: tensor<?x?x?x64xf16>)
    -> (tensor<?x?x?x64xf32>, tensor<1xf32>) {
  %dx, %dg = attn.head_norm_grad %o, %gamma, %dy
      : (tensor<?x?x?x64xf32>, tensor<64xf32>, tensor<?x?x?x64xf32>) -> (tensor<?x?x?x64xf32>, tensor<64xf32>)
  %dx2, %dg2, %dw, %db = attn.head_norm_grad %o16, %gamma gate(%w, %b), %dy16 eps 1.0e-06
      : (tensor<?x?x?x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>, tensor<?x?x?x64xf16>)
      -> (tensor<?x?x?x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>)
  return %dx, %db : tensor<?x?x?x64xf32>, tensor<1xf32>
}

// CHECK-LABEL: func.func @short_conv_grad
// CHECK: = attn.short_conv_grad %{{.*}}, %{{.*}}, %{{.*}} silu : tensor<?x4x?x64xf32>, tensor<4x64x3xf32>
// CHECK: = attn.short_conv_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4x?x64xf32>, tensor<4x64x3xf32>
func.func @short_conv_grad(%x: tensor<?x4x?x64xf32>, %k: tensor<4x64x3xf32>, %dy: tensor<?x4x?x64xf32>)
    -> (tensor<?x4x?x64xf32>, tensor<4x64x3xf32>) {
  %dx, %dk = attn.short_conv_grad %x, %k, %dy silu : tensor<?x4x?x64xf32>, tensor<4x64x3xf32>
  %dx2, %dk2 = attn.short_conv_grad %x, %k, %dy : tensor<?x4x?x64xf32>, tensor<4x64x3xf32>
  return %dx, %dk2 : tensor<?x4x?x64xf32>, tensor<4x64x3xf32>
}

// The default eps (1e-6) is elided.
// CHECK-LABEL: func.func @l2norm_grad
// CHECK: attn.l2norm_grad %{{.*}}, %{{.*}} : tensor<?x?x?x16xf32>
// CHECK: attn.l2norm_grad %{{.*}}, %{{.*}} eps 1.000000e-03 : tensor<?x?x?x16xf32>
func.func @l2norm_grad(%x: tensor<?x?x?x16xf32>, %dy: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %0 = attn.l2norm_grad %x, %dy eps 1.0e-06 : tensor<?x?x?x16xf32>
  %1 = attn.l2norm_grad %x, %0 eps 1.0e-03 : tensor<?x?x?x16xf32>
  return %1 : tensor<?x?x?x16xf32>
}

// CHECK-LABEL: func.func @logsumexp
// CHECK: attn.logsumexp %{{.*}} : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: attn.logsumexp %{{.*}} : tensor<2x3x5x9xf32> -> tensor<2x3x5xf32>
func.func @logsumexp(%s: tensor<?x?x?x?xf32>, %t: tensor<2x3x5x9xf32>) -> (tensor<?x?x?xf32>, tensor<2x3x5xf32>) {
  %0 = attn.logsumexp %s : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = attn.logsumexp %t : tensor<2x3x5x9xf32> -> tensor<2x3x5xf32>
  return %0, %1 : tensor<?x?x?xf32>, tensor<2x3x5xf32>
}
