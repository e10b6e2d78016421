// Round trip of the vector-Jacobian products of attn.scores, attn.kq_conv
// and attn.head_mix: every combination of scores_grad's optional results.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @scores_grad_plain
// CHECK: %dq, %dk = attn.scores_grad %{{.*}}, %{{.*}} mask sliding_window window 4 scale 2.500000e-01, %{{.*}} : (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>)
// GENERIC-LABEL: sym_name = "scores_grad_plain"
// GENERIC: "attn.scores_grad"(%{{.*}}, %{{.*}}, %{{.*}}) <{mask = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 1>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0>, scale = 2.500000e-01 : f64, window = 4 : i64}>
func.func @scores_grad_plain(%q: tensor<?x?x?x16xbf16>, %k: tensor<?x?x?x16xbf16>, %ds: tensor<?x?x?x?xf32>) -> tensor<?x?x?x16xbf16> {
  %dq, %dk = attn.scores_grad %q, %k mask sliding_window window 4 scale 0.25, %ds
      : (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>)
  return %dk : tensor<?x?x?x16xbf16>
}

// CHECK-LABEL: func.func @scores_grad_gate
// CHECK: %dq, %dk, %dg = attn.scores_grad %{{.*}}, %{{.*}} gate(%{{.*}}) scaled, %{{.*}} : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
// GENERIC-LABEL: sym_name = "scores_grad_gate"
// GENERIC: resultSegmentSizes = array<i32: 1, 1, 0, 0, 1>
func.func @scores_grad_gate(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %g: tensor<?x?x?xf32>, %ds: tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  %dq, %dk, %dg = attn.scores_grad %q, %k gate(%g) scaled, %ds
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return %dg : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @scores_grad_path
// CHECK: %dq, %dk, %dw, %dbeta = attn.scores_grad %{{.*}}, %{{.*}} path(%{{.*}}, %{{.*}}), %{{.*}} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
// GENERIC-LABEL: sym_name = "scores_grad_path"
// GENERIC: resultSegmentSizes = array<i32: 1, 1, 1, 1, 0>
func.func @scores_grad_path(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %w: tensor<1x2x8x16xf32>, %beta: tensor<1x2x8xf32>, %ds: tensor<1x4x8x8xf32>) -> tensor<1x2x8xf32> {
  %dq, %dk, %dw, %dbeta = attn.scores_grad %q, %k path(%w, %beta), %ds
      : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return %dbeta : tensor<1x2x8xf32>
}

// CHECK-LABEL: func.func @scores_grad_path_gate
// CHECK: %dq, %dk, %dw, %dbeta, %dg = attn.scores_grad %{{.*}}, %{{.*}} path(%{{.*}}, %{{.*}}) gate(%{{.*}}), %{{.*}} : ({{.*}}) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>)
// GENERIC-LABEL: sym_name = "scores_grad_path_gate"
// GENERIC: resultSegmentSizes = array<i32: 1, 1, 1, 1, 1>
func.func @scores_grad_path_gate(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %w: tensor<?x?x?x16xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>, %ds: tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  %dq, %dk, %dw, %dbeta, %dg = attn.scores_grad %q, %k path(%w, %beta) gate(%g), %ds
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>)
  return %dg : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @kq_conv_grad
// CHECK: %dx, %dkernel = attn.kq_conv_grad pre %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x?x?xf32>, tensor<?x6x11xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x6x11xf32>)
// GENERIC-LABEL: sym_name = "kq_conv_grad"
// GENERIC: "attn.kq_conv_grad"(%{{.*}}, %{{.*}}, %{{.*}}) <{stage = 0 : i32}>
func.func @kq_conv_grad(%s: tensor<?x?x?x?xf32>, %theta: tensor<?x6x11xf32>, %dc: tensor<?x?x?x?xf32>) -> tensor<?x6x11xf32> {
  %dx, %dt = attn.kq_conv_grad pre %s, %theta, %dc
      : (tensor<?x?x?x?xf32>, tensor<?x6x11xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x6x11xf32>)
  return %dt : tensor<?x6x11xf32>
}

// CHECK-LABEL: func.func @head_mix_grad
// CHECK: %dx, %dweight = attn.head_mix_grad post %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x16x8x8xf32>, tensor<16x4xf32>, tensor<2x16x8x8xf32>) -> (tensor<2x16x8x8xf32>, tensor<16x4xf32>)
// GENERIC-LABEL: sym_name = "head_mix_grad"
// GENERIC: "attn.head_mix_grad"(%{{.*}}, %{{.*}}, %{{.*}}) <{stage = 1 : i32}>
func.func @head_mix_grad(%p: tensor<2x16x8x8xf32>, %w: tensor<16x4xf32>, %dm: tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32> {
  %dx, %dw = attn.head_mix_grad post %p, %w, %dm
      : (tensor<2x16x8x8xf32>, tensor<16x4xf32>, tensor<2x16x8x8xf32>) -> (tensor<2x16x8x8xf32>, tensor<16x4xf32>)
  return %dx : tensor<2x16x8x8xf32>
}
