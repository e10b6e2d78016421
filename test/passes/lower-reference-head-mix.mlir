// attn-lower-reference of attn.head_mix: out[h] = sum_m W[h, m] in[g0 + m]
// with g0 = (h / c_h) c_h, -inf inputs counted as 0, the right of the
// diagonal -inf (pre) or 0 (post).
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// CHECK-LABEL: func.func @head_mix_pre
// CHECK-SAME: (%[[SA:[^:]*]]: tensor<?x?x?x?xf32>, %[[WA:[^:]*]]: tensor<?x?xf32>)
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[X:.*]] = bufferization.to_buffer %[[SA]] read_only
// CHECK: %[[W:.*]] = bufferization.to_buffer %[[WA]] read_only : tensor<?x?xf32> to memref<?x?xf32>
// CHECK: %[[CH:.*]] = memref.dim %[[W]], %{{.*}} : memref<?x?xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x?xf32>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: %[[GRP:.*]] = arith.divsi %[[H]], %[[CH]] : index
// CHECK: %[[G0:.*]] = arith.muli %[[GRP]], %[[CH]] : index
// CHECK: %[[MIX:.*]] = scf.for %[[M:[^ ]*]] = %{{.*}} to %[[CH]] step {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: %[[SRCH:.*]] = arith.addi %[[G0]], %[[M]] : index
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[B]], %[[SRCH]], %[[I]], %[[J]]]
// CHECK: %[[ISINF:.*]] = arith.cmpf oeq, %[[V]], %[[NEGINF]] : f32
// CHECK: arith.select %[[ISINF]], %[[ZERO]], %[[V]] : f32
// CHECK: memref.load %[[W]][%[[H]], %[[M]]] : memref<?x?xf32>
// CHECK: %[[RIGHT:.*]] = arith.cmpi sgt, %[[J]], %{{.*}} : index
// CHECK: %[[R:.*]] = arith.select %[[RIGHT]], %[[NEGINF]], %[[MIX]] : f32
// CHECK: memref.store %[[R]], %[[OUT]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: attn.head_mix
func.func @head_mix_pre(%s: tensor<?x?x?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.head_mix pre %s, %w : tensor<?x?x?x?xf32>, tensor<?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @head_mix_post_grouped
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x16x?x?xf32>
// CHECK: %[[MIX:.*]] = scf.for
// CHECK: %[[RIGHT:.*]] = arith.cmpi sgt
// CHECK: arith.select %[[RIGHT]], %[[ZERO]], %[[MIX]] : f32
func.func @head_mix_post_grouped(%p: tensor<?x16x?x?xf32>, %w: tensor<16x4xf32>) -> tensor<?x16x?x?xf32> {
  %0 = attn.head_mix post %p, %w : tensor<?x16x?x?xf32>, tensor<16x4xf32>
  return %0 : tensor<?x16x?x?xf32>
}
