// Round trip of the attn_block ops added for MTA: attn_block.stencil and the
// in_bounds form of load/store (custom form, generic form and back). The
// MTA kernels attn-to-block makes re-parse byte for byte.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse --attn-to-block > %t.mta.mlir
// RUN: attn-opt %t.mta.mlir > %t.mta2.mlir
// RUN: diff %t.mta.mlir %t.mta2.mlir
// RUN: attn-opt %t.mta.mlir --mlir-print-op-generic | attn-opt > %t.mta3.mlir
// RUN: diff %t.mta.mlir %t.mta3.mlir

// CHECK-LABEL: func.func @stencil
// CHECK-NEXT: %[[C:.*]] = attn_block.stencil %arg0, %arg1 : tensor<69x74xf32>, tensor<6x11xf32> -> tensor<64x64xf32>
// CHECK-NEXT: %[[D:.*]] = attn_block.stencil %[[C]], %arg2 : tensor<64x64xf32>, tensor<1x1xf32> -> tensor<64x64xf32>
// CHECK-NEXT: return %[[D]]
// GENERIC: "attn_block.stencil"(%{{.*}}, %{{.*}}) : (tensor<69x74xf32>, tensor<6x11xf32>) -> tensor<64x64xf32>
func.func @stencil(%s: tensor<69x74xf32>, %k: tensor<6x11xf32>, %one: tensor<1x1xf32>) -> tensor<64x64xf32> {
  %c = attn_block.stencil %s, %k : tensor<69x74xf32>, tensor<6x11xf32> -> tensor<64x64xf32>
  %d = attn_block.stencil %c, %one : tensor<64x64xf32>, tensor<1x1xf32> -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @in_bounds
// CHECK-NEXT: %[[T:.*]] = attn_block.load %arg0[%arg1, %arg1, %arg1, %arg1, %arg1] dims [3, 4] padding 0.000000e+00 in_bounds : memref<?x?x?x16x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: %[[U:.*]] = attn_block.load %arg0[%arg1, %arg1, %arg1, %arg1, %arg1] dims [3, 4] padding 0.000000e+00 : memref<?x?x?x16x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: attn_block.store %[[T]], %arg0[%arg1, %arg1, %arg1, %arg1, %arg1] dims [3, 4] in_bounds : tensor<16x8xf32> -> memref<?x?x?x16x8xf32>
// CHECK-NEXT: attn_block.store %[[U]], %arg0[%arg1, %arg1, %arg1, %arg1, %arg1] dims [3, 4] : tensor<16x8xf32> -> memref<?x?x?x16x8xf32>
// GENERIC: "attn_block.load"(%{{.*}}) <{dims = array<i64: 3, 4>, in_bounds, padding = 0.000000e+00 : f64}>
// GENERIC: "attn_block.store"(%{{.*}}) <{dims = array<i64: 3, 4>, in_bounds}>
func.func @in_bounds(%m: memref<?x?x?x16x8xf32>, %i: index) {
  %t = attn_block.load %m[%i, %i, %i, %i, %i] dims [3, 4] padding 0.0 in_bounds : memref<?x?x?x16x8xf32> -> tensor<16x8xf32>
  %u = attn_block.load %m[%i, %i, %i, %i, %i] dims [3, 4] padding 0.0 : memref<?x?x?x16x8xf32> -> tensor<16x8xf32>
  attn_block.store %t, %m[%i, %i, %i, %i, %i] dims [3, 4] in_bounds : tensor<16x8xf32> -> memref<?x?x?x16x8xf32>
  attn_block.store %u, %m[%i, %i, %i, %i, %i] dims [3, 4] : tensor<16x8xf32> -> memref<?x?x?x16x8xf32>
  return
}
