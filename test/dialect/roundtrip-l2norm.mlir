// Round trip of attn.l2norm (eps default 1e-6 elided).
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @l2norm_default
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?x64xf32>)
// CHECK: attn.l2norm %[[X]] : tensor<?x?x?x64xf32>
// GENERIC-LABEL: sym_name = "l2norm_default"
// GENERIC: "attn.l2norm"(%{{.*}}) <{eps = 9.9999999999999995E-7 : f64}> : (tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
func.func @l2norm_default(%x: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.l2norm %x eps 1.0e-06 : tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// CHECK-LABEL: func.func @l2norm_eps
// CHECK: attn.l2norm %{{.*}} eps 1.000000e-03 : tensor<2x3x4x8xbf16>
// CHECK: attn.l2norm %{{.*}} eps 9.9999999999999998E-13 : tensor<2x3x?x8xf16>
func.func @l2norm_eps(%x: tensor<2x3x4x8xbf16>, %y: tensor<2x3x?x8xf16>) -> (tensor<2x3x4x8xbf16>, tensor<2x3x?x8xf16>) {
  %0 = attn.l2norm %x eps 1.0e-3 : tensor<2x3x4x8xbf16>
  %1 = attn.l2norm %y eps 1.0e-12 : tensor<2x3x?x8xf16>
  return %0, %1 : tensor<2x3x4x8xbf16>, tensor<2x3x?x8xf16>
}
