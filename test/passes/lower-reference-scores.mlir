// attn-lower-reference of attn.scores: a [B, Hq] loop nest with a D-long
// dot product per (i, j), the mask as a select against -inf, the forget
// gate as an f64 cumsum workspace, PaTH as a [S, D] transported-key
// workspace.
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// Plain causal scores, default scale 1/sqrt(64) = 0.125, GQA group Hq/Hk.
// CHECK-LABEL: func.func @scores_causal
// CHECK-SAME: (%[[QA:[^:]*]]: tensor<?x?x?x64xf32>, %[[KA:[^:]*]]: tensor<?x?x?x64xf32>)
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[Q:.*]] = bufferization.to_buffer %[[QA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK: %[[K:.*]] = bufferization.to_buffer %[[KA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK: %[[BD:.*]] = memref.dim %[[Q]], %{{.*}}
// CHECK: %[[HQ:.*]] = memref.dim %[[Q]], %{{.*}}
// CHECK: %[[T:.*]] = memref.dim %[[Q]], %{{.*}}
// CHECK: %[[HK:.*]] = memref.dim %[[K]], %{{.*}}
// CHECK: %[[S:.*]] = memref.dim %[[K]], %{{.*}}
// CHECK: %[[GROUP:.*]] = arith.divsi %[[HQ]], %[[HK]] : index
// CHECK: %[[OFF:.*]] = arith.subi %[[S]], %[[T]] : index
// CHECK: %[[OUT:.*]] = memref.alloc(%[[BD]], %[[HQ]], %[[T]], %[[S]]) : memref<?x?x?x?xf32>
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %[[HQ]] step
// CHECK: %[[KH:.*]] = arith.divsi %[[H]], %[[GROUP]] : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[T]] step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[S]] step
// CHECK: %[[DOT:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C64]] step {{.*}} iter_args
// CHECK: memref.load %[[K]][%[[B]], %[[KH]], %[[J]], %{{.*}}]
// CHECK: memref.load %[[Q]][%[[B]], %[[H]], %[[I]], %{{.*}}]
// CHECK: %[[PI:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: %[[LOGIT:.*]] = arith.mulf %[[DOT]], %[[SCALE]] : f32
// CHECK: %[[VIS:.*]] = arith.cmpi sle, %[[J]], %[[PI]] : index
// CHECK: %[[R:.*]] = arith.select %[[VIS]], %[[LOGIT]], %[[NEGINF]] : f32
// CHECK: memref.store %[[R]], %[[OUT]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: attn.scores
func.func @scores_causal(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.scores %q, %k : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// Forget gate (scaled) and a sliding window, f16 activations widened to f32.
// CHECK-LABEL: func.func @scores_gate_window
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[GAMMA:.*]] = arith.constant 1.250000e-01 : f64
// CHECK: %[[G:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x?x?xf32> to memref<?x?x?xf32>
// CHECK: %[[OUT:.*]] = memref.alloc({{.*}}) : memref<?x?x?x?xf32>
// CHECK: %[[CUM:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK: scf.for
// CHECK: scf.for
// Inclusive cumsum of the log gate, in f64.
// CHECK: scf.for {{.*}} iter_args(%{{.*}}) -> (f64)
// CHECK: memref.load %[[G]]
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: memref.store %{{.*}}, %[[CUM]]
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[GI:.*]] = memref.load %[[CUM]]
// CHECK: %[[GJ:.*]] = memref.load %[[CUM]]
// CHECK: %[[DIFF:.*]] = arith.subf %[[GI]], %[[GJ]] : f64
// CHECK: arith.mulf %[[DIFF]], %[[GAMMA]] : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// Window: j <= p_i and j > p_i - 4.
// CHECK: arith.cmpi sle
// CHECK: arith.subi %{{.*}}, %[[C4]] : index
// CHECK: arith.cmpi sgt
// CHECK: arith.andi
// CHECK: arith.select
// CHECK-NOT: attn.scores
func.func @scores_gate_window(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.scores %q, %k gate(%g) scaled mask sliding_window window 4
      : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// PaTH: a [S, D] workspace of transported keys; at each time tau every
// earlier key is hit by H_tau = I - beta w w^T, then k_tau joins, and the
// query row at tau (if any, scf.if) reads the workspace.
// CHECK-LABEL: func.func @scores_path
// CHECK-SAME: (%{{[^:]*}}: {{[^,]*}}, %{{[^:]*}}: {{[^,]*}}, %[[WA:[^:]*]]: {{[^,]*}}, %[[BA:[^:]*]]: {{[^)]*}})
// CHECK: %[[W:.*]] = bufferization.to_buffer %[[WA]] read_only : tensor<?x?x?x32xf32> to memref<?x?x?x32xf32>
// CHECK: %[[BETA:.*]] = bufferization.to_buffer %[[BA]] read_only : tensor<?x?x?xf32> to memref<?x?x?xf32>
// CHECK: memref.alloc({{.*}}) : memref<?x?x?x?xf32>
// CHECK: %[[KT:.*]] = memref.alloc(%{{.*}}) : memref<?x32xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TAU:.*]] = %{{.*}} to
// CHECK: memref.load %[[BETA]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[TAU]] step
// CHECK: memref.load %[[KT]]
// CHECK: memref.load %[[W]]
// CHECK: memref.store %{{.*}}, %[[KT]]
// CHECK: scf.if
// CHECK: arith.minsi
// CHECK: memref.load %[[KT]]
// CHECK-NOT: attn.scores
func.func @scores_path(%q: tensor<?x?x?x32xf32>, %k: tensor<?x?x?x32xf32>, %w: tensor<?x?x?x32xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = attn.scores %q, %k path(%w, %beta)
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// mask none: no causal comparison, an explicit scale.
// CHECK-LABEL: func.func @scores_mask_none
// CHECK-DAG: arith.constant -5.000000e-01 : f32
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x2x6x4xf32>
// CHECK-NOT: arith.cmpi sle
// CHECK: arith.cmpi sge
// CHECK: bufferization.to_tensor %[[OUT]]
func.func @scores_mask_none(%q: tensor<1x2x6x8xbf16>, %k: tensor<1x2x4x8xbf16>) -> tensor<1x2x6x4xf32> {
  %0 = attn.scores %q, %k mask none scale -0.5 : (tensor<1x2x6x8xbf16>, tensor<1x2x4x8xbf16>) -> tensor<1x2x6x4xf32>
  return %0 : tensor<1x2x6x4xf32>
}
