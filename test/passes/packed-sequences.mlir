// Packed sequences through the passes: attn-expand-attention hands
// cu_seqlens to attn.scores and gives both RoPEs positions that restart at
// each sequence (offset + t - the last offset <= t); attn-grad's backward
// takes cu_seqlens and has no gradient for it (attn-to-block:
// packed-sequences-block.mlir).
// RUN: attn-opt %s --attn-expand-attention | FileCheck %s --check-prefix=EXPAND
// RUN: attn-opt %s --attn-grad | FileCheck %s --check-prefix=GRAD

// EXPAND-LABEL: func.func @fox_rope
// EXPAND-SAME: %[[CU:[^:]*]]: tensor<?xi32>
// EXPAND: %[[QP:.*]] = tensor.generate
// EXPAND: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}) -> (i64)
// EXPAND: tensor.extract %[[CU]]
// EXPAND: arith.cmpi sle
// EXPAND: arith.maxsi
// EXPAND: } : tensor<?xi64>
// EXPAND: %[[KP:.*]] = tensor.generate
// EXPAND: %[[QR:.*]] = attn.rope %{{.*}} positions(%[[QP]]) :
// EXPAND: %[[KR:.*]] = attn.rope %{{.*}} positions(%[[KP]]) :
// EXPAND: attn.scores %[[QR]], %[[KR]] gate(%{{.*}}) cu_seqlens(%[[CU]])

// GRAD-LABEL: func.func @fox_rope_grad
// GRAD-SAME: attn.grad_args = array<i64: 0, 1, 2, 3>
// GRAD: %[[G:.*]]:4 = attn.attention_grad {{.*}} cu_seqlens(%{{.*}}), %{{.*}}, %{{.*}}, %{{.*}} : ({{.*}}tensor<?xi32>, {{.*}}) -> (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>)
// GRAD: return %[[G]]#0, %[[G]]#1, %[[G]]#2, %[[G]]#3 :
func.func @fox_rope(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                    %g: tensor<1x2x?xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %k, %v rope(1.0e+04) gate(%g) cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>)
      -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

