// attn-lower-reference of attn.weighted_sum: o[b, h, i, e] =
// sum_j p[b, h, i, j] v[b, h / (Hq / Hk), j, e], accumulated in f32 and
// stored in v's element type; a zero p is selected away (v may be NaN).
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// CHECK-LABEL: func.func @weighted_sum_bf16
// CHECK-SAME: (%[[PA:[^:]*]]: tensor<?x?x?x?xf32>, %[[VA:[^:]*]]: tensor<?x?x?x48xbf16>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C48:.*]] = arith.constant 48 : index
// CHECK: %[[P:.*]] = bufferization.to_buffer %[[PA]] read_only : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
// CHECK: %[[V:.*]] = bufferization.to_buffer %[[VA]] read_only : tensor<?x?x?x48xbf16> to memref<?x?x?x48xbf16>
// CHECK: %[[BD:.*]] = memref.dim %[[P]], %{{.*}}
// CHECK: %[[HQ:.*]] = memref.dim %[[P]], %{{.*}}
// CHECK: %[[TD:.*]] = memref.dim %[[P]], %{{.*}}
// CHECK: %[[SD:.*]] = memref.dim %[[P]], %{{.*}}
// CHECK: %[[HK:.*]] = memref.dim %[[V]], %{{.*}}
// CHECK: %[[GROUP:.*]] = arith.divsi %[[HQ]], %[[HK]] : index
// CHECK: %[[OUT:.*]] = memref.alloc(%[[BD]], %[[HQ]], %[[TD]]) : memref<?x?x?x48xbf16>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: scf.for %[[E:[^ ]*]] = %{{.*}} to %[[C48]] step
// CHECK: %[[KH:.*]] = arith.divsi %[[H]], %[[GROUP]] : index
// CHECK: %[[ACC:.*]] = scf.for %[[J:[^ ]*]] = %{{.*}} to %[[SD]] step {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK-DAG: %[[PIJ:.*]] = memref.load %[[P]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK-DAG: memref.load %[[V]][%[[B]], %[[KH]], %[[J]], %[[E]]] : memref<?x?x?x48xbf16>
// CHECK-DAG: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: %[[SKIP:.*]] = arith.cmpf oeq, %[[PIJ]], %[[ZERO]] : f32
// CHECK: arith.select %[[SKIP]], %{{.*}}, %[[SUM]] : f32
// CHECK: %[[NARROW:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK: memref.store %[[NARROW]], %[[OUT]][%[[B]], %[[H]], %[[I]], %[[E]]] : memref<?x?x?x48xbf16>
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x?x48xbf16> to tensor<?x?x?x48xbf16>
// CHECK-NOT: attn.weighted_sum
func.func @weighted_sum_bf16(%p: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x48xbf16>) -> tensor<?x?x?x48xbf16> {
  %0 = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x48xbf16>) -> tensor<?x?x?x48xbf16>
  return %0 : tensor<?x?x?x48xbf16>
}

// f32 values: no extension or truncation.
// CHECK-LABEL: func.func @weighted_sum_f32_static
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x8x4x16xf32>
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: bufferization.to_tensor %[[OUT]]
func.func @weighted_sum_f32_static(%p: tensor<2x8x4x4xf32>, %v: tensor<2x2x4x16xf32>) -> tensor<2x8x4x16xf32> {
  %0 = attn.weighted_sum %p, %v : (tensor<2x8x4x4xf32>, tensor<2x2x4x16xf32>) -> tensor<2x8x4x16xf32>
  return %0 : tensor<2x8x4x16xf32>
}
