// Round trip of attn.softmax.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: %attn_opt %s --mlir-print-op-generic | %attn_opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @softmax_dynamic
// CHECK-SAME: (%[[S:.*]]: tensor<?x?x?x?xf32>)
// CHECK: %[[P:.*]] = attn.softmax %[[S]] : tensor<?x?x?x?xf32>
// CHECK: return %[[P]]
// GENERIC-LABEL: sym_name = "softmax_dynamic"
// GENERIC: "attn.softmax"(%{{.*}}) : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
func.func @softmax_dynamic(%s: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.softmax %s : tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @softmax_static
// CHECK: attn.softmax %{{.*}} : tensor<2x3x5x7xf32>
func.func @softmax_static(%s: tensor<2x3x5x7xf32>) -> tensor<2x3x5x7xf32> {
  %0 = attn.softmax %s : tensor<2x3x5x7xf32>
  return %0 : tensor<2x3x5x7xf32>
}
