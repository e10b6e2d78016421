// attn-lower-reference of attn.kq_conv: a 4-deep nest over [B, H, T, S]
// with a c_q x c_k reduction; sources outside the map, right of their own
// diagonal or equal to -inf count as 0 (NaN stays NaN: une); outputs right
// of the diagonal are -inf (pre) or 0 (post).
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// CHECK-LABEL: func.func @kq_conv_pre
// CHECK-SAME: (%[[SA:[^:]*]]: tensor<?x?x?x?xf32>, %[[TA:[^:]*]]: tensor<?x6x11xf32>)
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C11:.*]] = arith.constant 11 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[X:.*]] = bufferization.to_buffer %[[SA]] read_only : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
// CHECK: %[[TH:.*]] = bufferization.to_buffer %[[TA]] read_only : tensor<?x6x11xf32> to memref<?x6x11xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x?xf32>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: %[[CONV:.*]] = scf.for %[[A:[^ ]*]] = %{{.*}} to %[[C6]] step {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: arith.subi %[[I]], %[[C5]] : index
// CHECK: scf.for %[[BB:[^ ]*]] = %{{.*}} to %[[C11]] step {{.*}} iter_args
// CHECK: arith.subi %[[J]], %[[C5]] : index
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] : memref<?x?x?x?xf32>
// CHECK: arith.cmpf une, %[[V]], %[[NEGINF]] : f32
// CHECK: %[[SRC:.*]] = arith.select %{{.*}}, %[[V]], %[[ZERO]] : f32
// CHECK: %[[KW:.*]] = memref.load %[[TH]][%[[H]], %[[A]], %[[BB]]] : memref<?x6x11xf32>
// CHECK: arith.mulf %[[KW]], %[[SRC]] : f32
// CHECK: %[[RIGHT:.*]] = arith.cmpi sgt, %[[J]], %{{.*}} : index
// CHECK: %[[R:.*]] = arith.select %[[RIGHT]], %[[NEGINF]], %[[CONV]] : f32
// CHECK: memref.store %[[R]], %[[OUT]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: attn.kq_conv
func.func @kq_conv_pre(%s: tensor<?x?x?x?xf32>, %t: tensor<?x6x11xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.kq_conv pre %s, %t : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// Stage post: the right of the diagonal is 0, not -inf.
// CHECK-LABEL: func.func @kq_conv_post
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x2x4x4xf32>
// CHECK: %[[CONV:.*]] = scf.for
// CHECK: %[[RIGHT:.*]] = arith.cmpi sgt
// CHECK: %[[R:.*]] = arith.select %[[RIGHT]], %[[ZERO]], %[[CONV]] : f32
// CHECK: memref.store %[[R]], %[[OUT]]
func.func @kq_conv_post(%p: tensor<1x2x4x4xf32>, %t: tensor<2x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %0 = attn.kq_conv post %p, %t : tensor<1x2x4x4xf32>, tensor<2x3x3xf32>
  return %0 : tensor<1x2x4x4xf32>
}
