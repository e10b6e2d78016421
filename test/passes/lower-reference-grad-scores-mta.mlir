// attn-lower-reference of the vector-Jacobian products of head_mix,
// kq_conv and scores: gathers whose cotangent reads are selected away
// right of the diagonal (never multiplied by 0: they may hold NaN).
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// dx[n, g0 + m, i, j] = sum_h weight[h, m] grad[n, h, i, j], 0 at -inf
// inputs; dweight[h, m] = sum grad[n, h, i, j] x[n, g0 + m, i, j].
// CHECK-LABEL: func.func @head_mix_grad
// CHECK-SAME: (%[[XA:[^:]*]]: tensor<?x?x?x?xf32>, %[[WA:[^:]*]]: tensor<?x?xf32>, %[[DA:[^:]*]]: tensor<?x?x?x?xf32>)
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[X:.*]] = bufferization.to_buffer %[[XA]] read_only
// CHECK: %[[W:.*]] = bufferization.to_buffer %[[WA]] read_only
// CHECK: %[[DY:.*]] = bufferization.to_buffer %[[DA]] read_only
// CHECK: %[[CH:.*]] = memref.dim %[[W]], %{{.*}} : memref<?x?xf32>
// CHECK: %[[DX:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x?xf32>
// CHECK: %[[DW:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[HIN:[^ ]*]] =
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: %[[GRP:.*]] = arith.divsi %[[HIN]], %[[CH]] : index
// CHECK: %[[G0:.*]] = arith.muli %[[GRP]], %[[CH]] : index
// CHECK: %[[M:.*]] = arith.subi %[[HIN]], %[[G0]] : index
// CHECK: %[[ACC:.*]] = scf.for %[[N:[^ ]*]] = %{{.*}} to %[[CH]] step {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK: %[[H:.*]] = arith.addi %[[G0]], %[[N]] : index
// CHECK: %[[LEFT:.*]] = arith.cmpi sle, %[[J]], %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %[[LEFT]] : i1
// CHECK: %[[G:.*]] = memref.load %[[DY]][%[[B]], %[[H]], %{{.*}}, %{{.*}}]
// CHECK: %[[GS:.*]] = arith.select %[[OK]], %[[G]], %[[ZERO]] : f32
// CHECK: %[[WHM:.*]] = memref.load %[[W]][%[[H]], %[[M]]] : memref<?x?xf32>
// CHECK: arith.mulf %[[WHM]], %[[GS]] : f32
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[B]], %[[HIN]], %[[I]], %[[J]]]
// CHECK: %[[LIVE:.*]] = arith.cmpf une, %[[V]], %[[NEGINF]] : f32
// CHECK: %[[R:.*]] = arith.select %[[LIVE]], %[[ACC]], %[[ZERO]] : f32
// CHECK: memref.store %[[R]], %[[DX]][%[[B]], %[[HIN]], %[[I]], %[[J]]]
// CHECK: scf.for %[[H2:[^ ]*]] =
// CHECK: scf.for %[[M2:[^ ]*]] =
// CHECK: %[[DWV:.*]] = scf.for
// CHECK: memref.store %[[DWV]], %[[DW]][%[[H2]], %[[M2]]] : memref<?x?xf32>
// CHECK: bufferization.to_tensor %[[DW]] restrict writable
// CHECK-NOT: attn.head_mix_grad
func.func @head_mix_grad(%p: tensor<?x?x?x?xf32>, %w: tensor<?x?xf32>, %dm: tensor<?x?x?x?xf32>) -> tensor<?x?xf32> {
  %dx, %dw = attn.head_mix_grad post %p, %w, %dm
      : (tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?xf32>)
  return %dw : tensor<?x?xf32>
}

// Both results of kq_conv_grad with the kernel's static sizes.
// CHECK-LABEL: func.func @kq_conv_grad
// CHECK: %[[DX:.*]] = memref.alloc({{.*}}) : memref<?x?x?x?xf32>
// CHECK: %[[DK:.*]] = memref.alloc() : memref<2x3x5xf32>
// CHECK: %[[TX:.*]] = bufferization.to_tensor %[[DX]] restrict writable
// CHECK: %[[TK:.*]] = bufferization.to_tensor %[[DK]] restrict writable
// CHECK-NOT: attn.kq_conv_grad
func.func @kq_conv_grad(%s: tensor<?x?x?x?xf32>, %theta: tensor<2x3x5xf32>, %dc: tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<2x3x5xf32>) {
  %dx, %dt = attn.kq_conv_grad pre %s, %theta, %dc
      : (tensor<?x?x?x?xf32>, tensor<2x3x5xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<2x3x5xf32>)
  return %dx, %dt : tensor<?x?x?x?xf32>, tensor<2x3x5xf32>
}

// PaTH: time runs backwards (tau = S - 1 - back), dk is accumulated in an
// f32 [S, D] buffer and stored in k's type.
// CHECK-LABEL: func.func @scores_grad_path
// CHECK: %[[DQ:.*]] = memref.alloc({{.*}}) : memref<?x?x?x16xbf16>
// CHECK: %[[DK:.*]] = memref.alloc({{.*}}) : memref<?x?x?x16xbf16>
// CHECK: %[[ACC:.*]] = memref.alloc({{.*}}) : memref<?x16xf32>
// CHECK: %[[LAST:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NEXT: %[[TAU:.*]] = arith.subi %[[LAST]], %{{.*}} : index
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %[[TAU]] step %c1
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}}, %[[DQ]]
// CHECK: memref.load %[[ACC]]
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}}, %[[DK]]
// CHECK-NOT: attn.scores_grad
func.func @scores_grad_path(%q: tensor<?x?x?x16xbf16>, %k: tensor<?x?x?x16xbf16>, %w: tensor<?x?x?x16xf32>, %beta: tensor<?x?x?xf32>, %ds: tensor<?x?x?x?xf32>) -> tensor<?x?x?x16xbf16> {
  %dq, %dk, %dw, %dbeta = attn.scores_grad %q, %k path(%w, %beta), %ds
      : (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>)
      -> (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return %dk : tensor<?x?x?x16xbf16>
}
