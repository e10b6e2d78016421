// attn-expand-attention on the training forms: attn.attention's LSE result
// is attn.logsumexp of the softmax's input; attn.attention_grad is the
// chain recomputed and its VJPs in reverse (out and lse are not read; the
// recomputed output, unused, folds away).
// RUN: attn-opt %s --attn-expand-attention | FileCheck %s

// CHECK-LABEL: func.func @lse
// CHECK: %[[S:.*]] = attn.scores
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[S]]
// CHECK-NEXT: %[[O:.*]] = attn.weighted_sum %[[P]]
// CHECK-NEXT: %[[L:.*]] = attn.logsumexp %[[S]]
// CHECK-NEXT: return %[[O]], %[[L]]
func.func @lse(%q: tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?xf32>) {
  %o, %l = attn.attention %q, %q, %q : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x16xf32>, tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @fox_grad
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^,]*}}, %{{[^:]*}}: {{[^,]*}}, %{{[^:]*}}: {{[^,]*}}, %[[DO:[^:]*]]: {{[^)]*}})
// CHECK: %[[S:.*]] = attn.scores %[[Q]], %[[K]] gate(%[[G]]) scaled
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[S]]
// CHECK-NEXT: %[[DP:.*]], %[[DV:.*]] = attn.weighted_sum_grad %[[P]], %[[V]], %[[DO]]
// CHECK-NEXT: %[[DS:.*]] = attn.softmax_grad %[[P]], %[[DP]]
// CHECK-NEXT: %[[DQ:.*]], %[[DK:.*]], %[[DG:.*]] = attn.scores_grad %[[Q]], %[[K]] gate(%[[G]]) scaled, %[[DS]]
// CHECK-NEXT: return %[[DQ]], %[[DK]], %[[DV]], %[[DG]]
func.func @fox_grad(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>, %g: tensor<?x?x?xf32>,
                    %o: tensor<?x?x?x16xf32>, %l: tensor<?x?x?xf32>, %do: tensor<?x?x?x16xf32>)
    -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>) {
  %0:4 = attn.attention_grad %q, %k, %v gate(%g) scaled, %o, %l, %do
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>
}

// One value in three operands: its gradient goes to the first, zeros to
// the others.
// CHECK-LABEL: func.func @aliased
// CHECK: %[[DQ:.*]], %[[DK:.*]] = attn.scores_grad
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: %[[Z1:.*]] = linalg.fill
// CHECK: %[[Z2:.*]] = linalg.fill
// CHECK: return %{{.*}}, %[[Z1]], %[[Z2]]
func.func @aliased(%q: tensor<1x2x5x4xf32>, %l: tensor<1x2x5xf32>)
    -> (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) {
  %0:3 = attn.attention_grad %q, %q, %q, %q, %l, %q
      : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5xf32>, tensor<1x2x5x4xf32>)
      -> (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
}
