// RUN: attn-opt %s --split-input-file --attn-grad --verify-diagnostics | FileCheck %s

// FoX: the forward saves the softmax input's row LSE; the backward recomputes
// the forward and chains the VJPs in reverse; g's gradient is scores_grad's.
// CHECK-LABEL: func.func @fox(
// CHECK-LABEL: func.func @fox_fwd(
// CHECK-SAME:    -> (tensor<?x?x?x16xf32>, tensor<?x?x?xf32>) attributes {attn.forward_of = @fox}
// CHECK:         %[[S:.*]] = attn.scores
// CHECK:         %[[L:.*]] = attn.logsumexp %[[S]]
// CHECK:         return %{{.*}}, %[[L]]
// CHECK-LABEL: func.func @fox_grad(
// CHECK-SAME:    %{{.*}}: tensor<?x?x?x16xf32>, %{{.*}}: tensor<?x?x?xf32>, %[[DO:.*]]: tensor<?x?x?x16xf32>)
// CHECK-SAME:    attributes {attn.grad_args = array<i64: 0, 1, 2, 3>, attn.grad_of = @fox}
// CHECK:         %[[P:.*]] = attn.softmax
// CHECK:         %[[DP:.*]], %[[DV:.*]] = attn.weighted_sum_grad %[[P]], %{{.*}}, %[[DO]]
// CHECK:         %[[DS:.*]] = attn.softmax_grad %[[P]], %[[DP]]
// CHECK:         %[[DQ:.*]], %[[DK:.*]], %[[DG:.*]] = attn.scores_grad {{.*}} gate({{.*}}), %[[DS]]
// CHECK:         return %[[DQ]], %[[DK]], %[[DV]], %[[DG]]
// expected-remark @below {{attn-grad: @fox has ops outside attn.attention (run attn-fuse first to fuse what it can): their VJPs run through the reference lowering}}
func.func @fox(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>,
               %v: tensor<?x?x?x16xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x16xf32> {
  %s = attn.scores %q, %k gate(%g) : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
}

// -----

// RoPE positions are not differentiable (no result); the rope's VJP is the
// inverse rotation; a value used twice sums its cotangents; an argument the
// result ignores gets zeros.
// CHECK-LABEL: func.func @rope_grad(
// CHECK-SAME:    attributes {attn.grad_args = array<i64: 0, 2>, attn.grad_of = @rope}
// CHECK:         attn.rope %{{.*}} positions(%{{.*}}) theta 1.000000e+02 inverse
// CHECK:         %[[SUM:.*]] = arith.addf
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         return %[[SUM]], %[[Z]]
// expected-remark @below {{attn-grad: @rope has ops outside attn.attention}}
func.func @rope(%x: tensor<1x2x5x8xf32>, %pos: tensor<5xi64>,
                %unused: tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %r = attn.rope %x positions(%pos) theta 1.0e+02 : tensor<1x2x5x8xf32>, tensor<5xi64>
  %s = attn.scores %r, %r : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x5xf32>
  %p = attn.softmax %s : tensor<1x2x5x5xf32>
  %o = attn.weighted_sum %p, %x : (tensor<1x2x5x5xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
}

// -----

// attn.attention stays fused: the forward returns its row LSE, the backward
// is attn.attention_grad on the forward's output and LSE (the attention
// itself is not recomputed).
// CHECK-LABEL: func.func @fused_fwd(
// CHECK:         %[[O:.*]], %[[L:.*]] = attn.attention {{.*}} rope(1.000000e+04)
// CHECK-SAME:      -> (tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
// CHECK:         return %[[O]], %[[L]]
// CHECK-LABEL: func.func @fused_grad(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<?x?x?x16xf32>, %[[K:[^:]*]]: tensor<?x?x?x16xf32>, %[[V:[^:]*]]: tensor<?x?x?x16xf32>,
// CHECK-SAME:    %[[O:[^:]*]]: tensor<?x?x?x16xf32>, %[[L:[^:]*]]: tensor<?x?x?xf32>, %[[DO:[^:]*]]: tensor<?x?x?x16xf32>)
// CHECK-NOT:     attn.attention {{.*}}rope
// CHECK:         %[[G:.*]]:3 = attn.attention_grad %[[Q]], %[[K]], %[[V]] rope(1.000000e+04), %[[O]], %[[L]], %[[DO]]
// CHECK:         return %[[G]]#0, %[[G]]#1, %[[G]]#2
func.func @fused(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>,
                 %v: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %o = attn.attention %q, %k, %v rope(1.0e+04)
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
}

// -----

// expected-error @below {{attn-grad: @two must return one float tensor (it returns 2 values)}}
func.func @two(%q: tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %r = attn.rope %q : tensor<1x1x4x8xf32>
  return %r, %r : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

func.func @taken_grad() {
  return
}
// expected-error @below {{attn-grad: @taken_grad exists already; rename it or @taken}}
func.func @taken(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %r = attn.rope %q : tensor<1x1x4x8xf32>
  return %r : tensor<1x1x4x8xf32>
}
