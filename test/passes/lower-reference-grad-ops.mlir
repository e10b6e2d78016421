// attn-lower-reference of the VJP ops and attn.logsumexp: literal loops
// following each formula, accumulating in f32.
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// softmax_grad: per row, dot = sum_k p_ik dp_ik, then dx_ij = p_ij (dp_ij - dot).
// CHECK-LABEL: func.func @softmax_grad
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
// CHECK: %[[DP:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x?xf32>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: %[[DOT:.*]] = scf.for %[[K:[^ ]*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32)
// CHECK-DAG: %[[DPK:.*]] = memref.load %[[DP]][%[[B]], %[[H]], %[[I]], %[[K]]]
// CHECK-DAG: %[[PK:.*]] = memref.load %[[P]][%[[B]], %[[H]], %[[I]], %[[K]]]
// CHECK: %[[PROD:.*]] = arith.mulf %[[PK]], %[[DPK]] : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[PROD]] : f32
// A zero probability (a masked key, whose dp may be NaN) is skipped.
// CHECK: %[[PK0:.*]] = arith.cmpf oeq, %[[PK]], %[[ZERO]] : f32
// CHECK: arith.select %[[PK0]], %[[ACC]], %[[SUM]] : f32
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK-DAG: %[[PJ:.*]] = memref.load %[[P]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK-DAG: %[[DPJ:.*]] = memref.load %[[DP]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK: %[[DIFF:.*]] = arith.subf %[[DPJ]], %[[DOT]] : f32
// CHECK: %[[DX:.*]] = arith.mulf %[[PJ]], %[[DIFF]] : f32
// CHECK: %[[PJ0:.*]] = arith.cmpf oeq, %[[PJ]], %[[ZERO]] : f32
// CHECK: %[[DXSAFE:.*]] = arith.select %[[PJ0]], %[[ZERO]], %[[DX]] : f32
// CHECK: memref.store %[[DXSAFE]], %[[OUT]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: attn.softmax_grad
func.func @softmax_grad(%p: tensor<?x?x?x?xf32>, %dp: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.softmax_grad %p, %dp : tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// logsumexp: max, sum of exp shifted by the max, m + log(sum); a fully masked
// row (max = -inf) stores -inf into the rank-3 result.
// CHECK-LABEL: func.func @logsumexp
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: %[[MAX:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[NEGINF]]) -> (f32)
// CHECK: arith.maximumf
// CHECK: %[[DEAD:.*]] = arith.cmpf oeq, %[[MAX]], %[[NEGINF]] : f32
// CHECK: %[[MSAFE:.*]] = arith.select %[[DEAD]], %[[ZERO]], %[[MAX]] : f32
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: arith.subf %{{.*}}, %[[MSAFE]] : f32
// CHECK: math.exp
// CHECK: %[[LOG:.*]] = math.log %[[SUM]] : f32
// CHECK: %[[LSE:.*]] = arith.addf %[[MSAFE]], %[[LOG]] : f32
// CHECK: %[[R:.*]] = arith.select %[[DEAD]], %[[NEGINF]], %[[LSE]] : f32
// CHECK: memref.store %[[R]], %[[OUT]][%[[B]], %[[H]], %[[I]]] : memref<?x?x?xf32>
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x?xf32> to tensor<?x?x?xf32>
// CHECK-NOT: attn.logsumexp
func.func @logsumexp(%s: tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = attn.logsumexp %s : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// weighted_sum_grad with GQA and bf16 values: dp (f32) over [B, Hq, T, S] with
// query head h reading KV head h / (Hq / Hk); dv (bf16) over [B, Hk, S, Dv]
// summing the group's query heads kh * group + g and every row i in f32,
// rounded once when stored.
// CHECK-LABEL: func.func @weighted_sum_grad
// CHECK: %[[P:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32>
// CHECK: %[[V:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x?x?x16xbf16> to memref<?x?x?x16xbf16>
// CHECK: %[[DO:.*]] = bufferization.to_buffer %{{.*}} : tensor<?x?x?x16xbf16> to memref<?x?x?x16xbf16>
// CHECK: %[[HQ:.*]] = memref.dim %[[P]], %c1
// CHECK: %[[T:.*]] = memref.dim %[[P]], %c2
// CHECK: %[[HK:.*]] = memref.dim %[[V]], %c1
// CHECK: %[[GROUP:.*]] = arith.divsi %[[HQ]], %[[HK]] : index
// CHECK: %[[DPOUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x?xf32>
// CHECK: %[[DVOUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x16xbf16>
// First nest: dp.
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: %[[KH:.*]] = arith.divsi %[[H]], %[[GROUP]] : index
// CHECK: %[[DOT:.*]] = scf.for %[[E:[^ ]*]] = %c0 to %c16 {{.*}} -> (f32)
// CHECK-DAG: memref.load %[[V]][%[[B]], %[[KH]], %[[J]], %[[E]]]
// CHECK-DAG: memref.load %[[DO]][%[[B]], %[[H]], %[[I]], %[[E]]]
// CHECK: memref.store %[[DOT]], %[[DPOUT]][%[[B]], %[[H]], %[[I]], %[[J]]] : memref<?x?x?x?xf32>
// Second nest: dv.
// CHECK: scf.for %[[B2:[^ ]*]] =
// CHECK: scf.for %[[KH2:[^ ]*]] =
// CHECK: scf.for %[[J2:[^ ]*]] =
// CHECK: scf.for %[[E2:[^ ]*]] =
// CHECK: %[[H0:.*]] = arith.muli %[[KH2]], %[[GROUP]] : index
// CHECK: %[[SUM:.*]] = scf.for %[[G:[^ ]*]] = %c0 to %[[GROUP]] {{.*}} -> (f32)
// CHECK: %[[HH:.*]] = arith.addi %[[H0]], %[[G]] : index
// CHECK: scf.for %[[I2:[^ ]*]] = %c0 to %[[T]] {{.*}} -> (f32)
// CHECK-DAG: memref.load %[[DO]][%[[B2]], %[[HH]], %[[I2]], %[[E2]]]
// CHECK-DAG: memref.load %[[P]][%[[B2]], %[[HH]], %[[I2]], %[[J2]]]
// CHECK: %[[NARROW:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK: memref.store %[[NARROW]], %[[DVOUT]][%[[B2]], %[[KH2]], %[[J2]], %[[E2]]]
// CHECK: %[[DPT:.*]] = bufferization.to_tensor %[[DPOUT]] restrict writable
// CHECK: %[[DVT:.*]] = bufferization.to_tensor %[[DVOUT]] restrict writable
// CHECK: return %[[DPT]], %[[DVT]]
func.func @weighted_sum_grad(%p: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x16xbf16>, %do: tensor<?x?x?x16xbf16>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x16xbf16>) {
  %dp, %dv = attn.weighted_sum_grad %p, %v, %do
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>)
      -> (tensor<?x?x?x?xf32>, tensor<?x?x?x16xbf16>)
  return %dp, %dv : tensor<?x?x?x?xf32>, tensor<?x?x?x16xbf16>
}

// rope inverse: the position is negated before the angles are formed.
// CHECK-LABEL: func.func @rope_inverse
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[MINUS1:.*]] = arith.constant -1.000000e+00 : f64
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[T:[^ ]*]] =
// CHECK: %[[PT:.*]] = arith.addi %[[T]], %[[C3]] : index
// CHECK: %[[PI:.*]] = arith.index_cast %[[PT]] : index to i64
// CHECK: %[[P:.*]] = arith.sitofp %[[PI]] : i64 to f64
// CHECK: %[[NEG:.*]] = arith.mulf %[[P]], %[[MINUS1]] : f64
// CHECK: %[[ANG:.*]] = arith.mulf %[[NEG]], %{{.*}} : f64
// CHECK: math.cos %[[ANG]] : f64
// CHECK: math.sin %[[ANG]] : f64
// CHECK-NOT: attn.rope
func.func @rope_inverse(%x: tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %0 = attn.rope %x offset 3 inverse : tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}
