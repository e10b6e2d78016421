// Round trip of the attn_block ops added for PaTH (extract_row, insert_row):
// custom form, generic form and back, and their CPU lowering (rank-reducing
// tensor slices of one row). attn-to-block's PaTH kernels re-parse byte for
// byte.
//
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: attn-opt %s --attn-block-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-fuse --attn-to-block > %t.path.mlir
// RUN: attn-opt %t.path.mlir > %t.path2.mlir
// RUN: diff %t.path.mlir %t.path2.mlir
// RUN: attn-opt %t.path.mlir --mlir-print-op-generic | attn-opt > %t.path3.mlir
// RUN: diff %t.path.mlir %t.path3.mlir

// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x32xf32>, %[[R:[^:]*]]: tensor<32xf32>, %[[I:[^:]*]]: index)
// CHECK-NEXT: %[[X:.*]] = attn_block.extract_row %[[A]][%[[I]]] : tensor<64x32xf32> -> tensor<32xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[X]], %[[R]] : tensor<32xf32>
// CHECK-NEXT: %[[B:.*]] = attn_block.insert_row %[[Y]], %[[A]][%[[I]]] : tensor<32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: return %[[B]]
// GENERIC-LABEL: sym_name = "rows"
// GENERIC: "attn_block.extract_row"(%{{.*}}, %{{.*}}) : (tensor<64x32xf32>, index) -> tensor<32xf32>
// GENERIC: "attn_block.insert_row"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<32xf32>, tensor<64x32xf32>, index) -> tensor<64x32xf32>
// CPU-LABEL: func.func @rows
// CPU-NEXT: %[[X:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0] [1, 32] [1, 1] : tensor<64x32xf32> to tensor<32xf32>
// CPU-NEXT: %[[Y:.*]] = arith.addf %[[X]], %{{.*}} : tensor<32xf32>
// CPU-NEXT: tensor.insert_slice %[[Y]] into %{{.*}}[%{{.*}}, 0] [1, 32] [1, 1] : tensor<32xf32> into tensor<64x32xf32>
// CPU-NOT: attn_block.
func.func @rows(%a: tensor<64x32xf32>, %r: tensor<32xf32>, %i: index) -> tensor<64x32xf32> {
  %x = attn_block.extract_row %a[%i] : tensor<64x32xf32> -> tensor<32xf32>
  %y = arith.addf %x, %r : tensor<32xf32>
  %b = attn_block.insert_row %y, %a[%i] : tensor<32xf32> -> tensor<64x32xf32>
  return %b : tensor<64x32xf32>
}

// Constant row indices inside the tile are fine, and f64 tiles too.
// CHECK-LABEL: func.func @constant_rows
// CHECK: attn_block.extract_row %{{.*}}[%{{.*}}] : tensor<4x8xf64> -> tensor<8xf64>
// CHECK: attn_block.insert_row %{{.*}}, %{{.*}}[%{{.*}}] : tensor<8xf64> -> tensor<4x8xf64>
func.func @constant_rows(%a: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %x = attn_block.extract_row %a[%c3] : tensor<4x8xf64> -> tensor<8xf64>
  %b = attn_block.insert_row %x, %a[%c0] : tensor<8xf64> -> tensor<4x8xf64>
  return %b : tensor<4x8xf64>
}
