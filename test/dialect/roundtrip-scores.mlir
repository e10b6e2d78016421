// Round trip of attn.scores with every optional group.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Plain causal scores; mask causal is the default and is elided.
// CHECK-LABEL: func.func @scores_plain
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x?x64xf32>, %[[K:.*]]: tensor<?x?x?x64xf32>)
// CHECK: attn.scores %[[Q]], %[[K]] : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
// GENERIC-LABEL: sym_name = "scores_plain"
// GENERIC: "attn.scores"(%{{.*}}, %{{.*}}) <{mask = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>}>
func.func @scores_plain(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.scores %q, %k mask causal : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// PaTH path, forget gate with `scaled`, explicit scale.
// CHECK-LABEL: func.func @scores_path_gate_scaled
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^,]*}})
// CHECK: attn.scores %[[Q]], %[[K]] path(%[[W]], %[[B]]) gate(%[[G]]) scaled scale 1.250000e-01 : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16x16xf32>
// GENERIC-LABEL: sym_name = "scores_path_gate_scaled"
// GENERIC: "attn.scores"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{gate_scaled, mask = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, scale = 1.250000e-01 : f64}>
func.func @scores_path_gate_scaled(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>,
    %w: tensor<2x4x16x64xf32>, %beta: tensor<2x4x16xf32>, %g: tensor<2x4x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = attn.scores %q, %k path(%w, %beta) gate(%g) scaled scale 0.125
      : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// Path only, and gate only (FoX, unscaled).
// CHECK-LABEL: func.func @scores_path_only
// CHECK: attn.scores %{{.*}}, %{{.*}} path(%{{.*}}, %{{.*}}) : (
// CHECK-NOT: gate
// CHECK-LABEL: func.func @scores_gate_only
// CHECK: attn.scores %{{.*}}, %{{.*}} gate(%{{.*}}) : (tensor<?x?x?x32xf16>, tensor<?x?x?x32xf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
// GENERIC-LABEL: sym_name = "scores_gate_only"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0>
func.func @scores_path_only(%q: tensor<?x?x?x32xbf16>, %k: tensor<?x?x?x32xbf16>,
    %w: tensor<?x?x?x32xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.scores %q, %k path(%w, %beta)
      : (tensor<?x?x?x32xbf16>, tensor<?x?x?x32xbf16>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
func.func @scores_gate_only(%q: tensor<?x?x?x32xf16>, %k: tensor<?x?x?x32xf16>,
    %g: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.scores %q, %k gate(%g)
      : (tensor<?x?x?x32xf16>, tensor<?x?x?x32xf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// Sliding window mask.
// CHECK-LABEL: func.func @scores_sliding_window
// CHECK: attn.scores %{{.*}}, %{{.*}} gate(%{{.*}}) mask sliding_window window 128 : (
// GENERIC-LABEL: sym_name = "scores_sliding_window"
// GENERIC: <{mask = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0>, window = 128 : i64}>
func.func @scores_sliding_window(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
    %g: tensor<1x8x?xf32>) -> tensor<1x8x?x?xf32> {
  %0 = attn.scores %q, %k gate(%g) mask sliding_window window 128
      : (tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?xf32>) -> tensor<1x8x?x?xf32>
  return %0 : tensor<1x8x?x?xf32>
}

// mask none allows T > S (bidirectional / cross attention); GQA 8:2.
// CHECK-LABEL: func.func @scores_mask_none_gqa
// CHECK: attn.scores %{{.*}}, %{{.*}} mask none scale -2.500000e-01 : (tensor<3x8x32x16xbf16>, tensor<3x2x8x16xbf16>) -> tensor<3x8x32x8xf32>
// GENERIC-LABEL: sym_name = "scores_mask_none_gqa"
// GENERIC: <{mask = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, scale = -2.500000e-01 : f64}>
func.func @scores_mask_none_gqa(%q: tensor<3x8x32x16xbf16>, %k: tensor<3x2x8x16xbf16>) -> tensor<3x8x32x8xf32> {
  %0 = attn.scores %q, %k mask none scale -0.25
      : (tensor<3x8x32x16xbf16>, tensor<3x2x8x16xbf16>) -> tensor<3x8x32x8xf32>
  return %0 : tensor<3x8x32x8xf32>
}

// Decoding: T < S with a causal mask; the result may be more static than
// the operands.
// CHECK-LABEL: func.func @scores_decode
// CHECK: attn.scores %{{.*}}, %{{.*}} : (tensor<1x4x1x64xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x1x100xf32>
func.func @scores_decode(%q: tensor<1x4x1x64xf32>, %k: tensor<1x4x?x64xf32>) -> tensor<1x4x1x100xf32> {
  %0 = attn.scores %q, %k : (tensor<1x4x1x64xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x1x100xf32>
  return %0 : tensor<1x4x1x100xf32>
}
