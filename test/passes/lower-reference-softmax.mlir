// attn-lower-reference of attn.softmax: a row loop nest over [B, H, T] with
// three passes over the keys (max, sum of exp, normalise); fully masked rows
// (max = -inf) give zeros.
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[ARG:.*]]: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[ARG]] read_only : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x?xf32>
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// Row max.
// CHECK: %[[MAX:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[NEGINF]]) -> (f32)
// CHECK: memref.load %[[IN]]
// CHECK: arith.maximumf
// CHECK: scf.yield
// CHECK: %[[DEAD:.*]] = arith.cmpf oeq, %[[MAX]], %[[NEGINF]] : f32
// CHECK: %[[MSAFE:.*]] = arith.select %[[DEAD]], %[[ZERO]], %[[MAX]] : f32
// Sum of exp.
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: arith.subf %{{.*}}, %[[MSAFE]] : f32
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[SUM]] : f32
// CHECK: %[[INVSAFE:.*]] = arith.select %[[DEAD]], %[[ZERO]], %[[INV]] : f32
// Normalise.
// CHECK: scf.for
// CHECK: %[[X:.*]] = memref.load %[[IN]]
// CHECK: %[[E:.*]] = math.exp
// CHECK: %[[PR:.*]] = arith.mulf %[[E]], %[[INVSAFE]] : f32
// A masked entry stays 0 in a row a NaN makes NaN.
// CHECK: %[[MASKED:.*]] = arith.cmpf oeq, %[[X]], %[[NEGINF]] : f32
// CHECK: %[[PSAFE:.*]] = arith.select %[[MASKED]], %[[ZERO]], %[[PR]] : f32
// CHECK: memref.store %[[PSAFE]], %[[OUT]][%[[B]], %[[H]], %[[I]], %{{.*}}] : memref<?x?x?x?xf32>
// CHECK: %[[RES:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x?x?xf32> to tensor<?x?x?x?xf32>
// CHECK: return %[[RES]]
// CHECK-NOT: attn.
func.func @softmax(%s: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.softmax %s : tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// Static shapes: the result buffer has no dynamic sizes.
// CHECK-LABEL: func.func @softmax_static
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x3x4x5xf32>
// CHECK: math.exp
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<2x3x4x5xf32> to tensor<2x3x4x5xf32>
func.func @softmax_static(%s: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = attn.softmax %s : tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}
