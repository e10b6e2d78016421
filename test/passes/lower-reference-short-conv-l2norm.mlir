// attn-lower-reference of the PaTH w preprocessing ops: attn.short_conv (a
// causal K-tap convolution per channel, optional SiLU) and attn.l2norm.
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// CHECK-LABEL: func.func @short_conv_silu
// CHECK-SAME: (%[[XA:[^:]*]]: tensor<?x?x?x64xf32>, %[[KA:[^:]*]]: tensor<?x64x3xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[X:.*]] = bufferization.to_buffer %[[XA]] read_only
// CHECK: %[[KER:.*]] = bufferization.to_buffer %[[KA]] read_only : tensor<?x64x3xf32> to memref<?x64x3xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x64xf32>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[T:[^ ]*]] =
// CHECK: scf.for %[[D:[^ ]*]] =
// CHECK: %[[Y:.*]] = scf.for %[[R:[^ ]*]] = %{{.*}} to %[[C3]] step {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: %[[BACK:.*]] = arith.subi %[[T]], %[[C2]] : index
// CHECK: %[[SRC:.*]] = arith.addi %[[BACK]], %[[R]] : index
// CHECK: %[[OK:.*]] = arith.cmpi sge, %[[SRC]], %{{.*}} : index
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[B]], %[[H]], %{{.*}}, %[[D]]]
// CHECK: arith.select %[[OK]], %[[V]], %[[ZERO]] : f32
// CHECK: memref.load %[[KER]][%[[H]], %[[D]], %[[R]]] : memref<?x64x3xf32>
// SiLU: y * sigmoid(y).
// CHECK: %[[NY:.*]] = arith.negf %[[Y]] : f32
// CHECK: math.exp %[[NY]] : f32
// CHECK: %[[SIG:.*]] = arith.divf %[[ONE]], %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.mulf %[[Y]], %[[SIG]] : f32
// CHECK: memref.store %[[S]], %[[OUT]][%[[B]], %[[H]], %[[T]], %[[D]]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: attn.short_conv
func.func @short_conv_silu(%x: tensor<?x?x?x64xf32>, %k: tensor<?x64x3xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.short_conv %x, %k silu : tensor<?x?x?x64xf32>, tensor<?x64x3xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// Without silu the convolution result is stored as is (narrowed to bf16).
// CHECK-LABEL: func.func @short_conv_plain
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x2x5x8xbf16>
// CHECK: %[[Y:.*]] = scf.for
// CHECK-NOT: math.exp
// CHECK: %[[N:.*]] = arith.truncf %[[Y]] : f32 to bf16
// CHECK: memref.store %[[N]], %[[OUT]]
func.func @short_conv_plain(%x: tensor<1x2x5x8xbf16>, %k: tensor<2x8x4xf32>) -> tensor<1x2x5x8xbf16> {
  %0 = attn.short_conv %x, %k : tensor<1x2x5x8xbf16>, tensor<2x8x4xf32>
  return %0 : tensor<1x2x5x8xbf16>
}

// CHECK-LABEL: func.func @l2norm
// CHECK-SAME: (%[[XA:[^:]*]]: tensor<?x?x?x64xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK: %[[X:.*]] = bufferization.to_buffer %[[XA]] read_only
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x64xf32>
// CHECK: %[[SS:.*]] = scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[SE:.*]] = arith.addf %[[SS]], %[[EPS]] : f32
// CHECK: %[[NORM:.*]] = math.sqrt %[[SE]] : f32
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[NORM]] : f32
// CHECK: scf.for
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %[[INV]] : f32
// CHECK: memref.store %[[Y]], %[[OUT]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: attn.l2norm
func.func @l2norm(%x: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.l2norm %x eps 1.0e-3 : tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}
