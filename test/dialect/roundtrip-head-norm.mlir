// Round trip of attn.head_norm: with and without the gate, eps default
// elided.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @head_norm_plain
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?x64xf32>, %[[G:.*]]: tensor<64xf32>)
// CHECK: attn.head_norm %[[X]], %[[G]] : (tensor<?x?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x?x64xf32>
// GENERIC-LABEL: sym_name = "head_norm_plain"
// GENERIC: "attn.head_norm"(%{{.*}}, %{{.*}}) <{eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 0>}>
func.func @head_norm_plain(%x: tensor<?x?x?x64xf32>, %gamma: tensor<64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.head_norm %x, %gamma eps 1.0e-05 : (tensor<?x?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// CHECK-LABEL: func.func @head_norm_gate_eps
// CHECK-SAME: (%[[X:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^)]*}})
// CHECK: attn.head_norm %[[X]], %[[G]] gate(%[[W]], %[[B]]) eps 9.9999999999999995E-7 : (tensor<2x4x8x32xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x4x8x32xbf16>
// GENERIC-LABEL: sym_name = "head_norm_gate_eps"
// GENERIC: "attn.head_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{eps = 9.9999999999999995E-7 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1>}>
func.func @head_norm_gate_eps(%x: tensor<2x4x8x32xbf16>, %gamma: tensor<32xf32>,
    %gw: tensor<32xf32>, %gb: tensor<1xf32>) -> tensor<2x4x8x32xbf16> {
  %0 = attn.head_norm %x, %gamma gate(%gw, %gb) eps 1.0e-06
      : (tensor<2x4x8x32xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x4x8x32xbf16>
  return %0 : tensor<2x4x8x32xbf16>
}

// Dynamic gamma / gate sizes, f16.
// CHECK-LABEL: func.func @head_norm_dynamic_params
// CHECK: attn.head_norm %{{.*}}, %{{.*}} gate(%{{.*}}, %{{.*}}) : (tensor<?x?x?x16xf16>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?x?x16xf16>
func.func @head_norm_dynamic_params(%x: tensor<?x?x?x16xf16>, %gamma: tensor<?xf32>,
    %gw: tensor<?xf32>, %gb: tensor<?xf32>) -> tensor<?x?x?x16xf16> {
  %0 = attn.head_norm %x, %gamma gate(%gw, %gb)
      : (tensor<?x?x?x16xf16>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?x?x16xf16>
  return %0 : tensor<?x?x?x16xf16>
}
