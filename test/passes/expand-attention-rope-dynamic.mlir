// attn-expand-attention with RoPE: queries are the last T of S positions, so
// q's rope positions start at rope_offset + S - T. With a dynamic T or S that
// start is computed at run time into a positions tensor (tensor.generate);
// k's rope keeps rope_offset.
// RUN: attn-opt %s --attn-expand-attention | FileCheck %s

// Dynamic T and S: positions tensor<?xi64> of size T.
// CHECK-LABEL: func.func @rope_dynamic
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x?x?x64xf32>, %[[K:[^:]*]]: tensor<?x?x?x64xf32>, %[[V:[^:]*]]: tensor<?x?x?x64xf32>)
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[Q]], %[[C2]] : tensor<?x?x?x64xf32>
// CHECK-DAG: %[[S:.*]] = tensor.dim %[[K]], %[[C2]] : tensor<?x?x?x64xf32>
// CHECK: %[[SMT:.*]] = arith.subi %[[S]], %[[T]] : index
// CHECK: %[[BASE:.*]] = arith.addi %[[SMT]], %[[C5]] : index
// CHECK: %[[POS:.*]] = tensor.generate %[[T]] {
// CHECK: ^bb0(%[[I:.*]]: index):
// CHECK: %[[P:.*]] = arith.addi %[[I]], %[[BASE]] : index
// CHECK: %[[P64:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK: tensor.yield %[[P64]] : i64
// CHECK: } : tensor<?xi64>
// CHECK: %[[QR:.*]] = attn.rope %[[Q]] positions(%[[POS]]) style interleaved theta 5.000000e+05 rotary_dim 32 : tensor<?x?x?x64xf32>, tensor<?xi64>
// CHECK: %[[KR:.*]] = attn.rope %[[K]] style interleaved theta 5.000000e+05 rotary_dim 32 offset 5 : tensor<?x?x?x64xf32>
// CHECK: %[[SC:.*]] = attn.scores %[[QR]], %[[KR]] : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
// CHECK: %[[PR:.*]] = attn.softmax %[[SC]] : tensor<?x?x?x?xf32>
// CHECK: %[[O:.*]] = attn.weighted_sum %[[PR]], %[[V]] : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// CHECK: return %[[O]]
// CHECK-NOT: attn.attention
func.func @rope_dynamic(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.attention %q, %k, %v rope(5.0e+05) rope_style interleaved rope_dim 32 rope_offset 5
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// Static T (3), dynamic S: a static positions tensor<3xi64> built from
// S - 3; no dynamic size operand on tensor.generate.
// CHECK-LABEL: func.func @rope_static_t_dynamic_s
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x4x3x64xbf16>, %[[K:[^:]*]]: tensor<1x4x?x64xbf16>, %[[V:[^:]*]]: tensor<1x4x?x64xbf16>)
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[S:.*]] = tensor.dim %[[K]], %[[C2]] : tensor<1x4x?x64xbf16>
// CHECK: %[[BASE:.*]] = arith.subi %[[S]], %[[C3]] : index
// CHECK: %[[POS:.*]] = tensor.generate {
// CHECK: arith.addi %{{.*}}, %[[BASE]] : index
// CHECK: arith.index_cast
// CHECK: } : tensor<3xi64>
// CHECK: %[[QR:.*]] = attn.rope %[[Q]] positions(%[[POS]]) : tensor<1x4x3x64xbf16>, tensor<3xi64>
// CHECK: %[[KR:.*]] = attn.rope %[[K]] : tensor<1x4x?x64xbf16>
// CHECK: attn.scores %[[QR]], %[[KR]] : (tensor<1x4x3x64xbf16>, tensor<1x4x?x64xbf16>) -> tensor<1x4x3x?xf32>
// CHECK: attn.softmax %{{.*}} : tensor<1x4x3x?xf32>
// CHECK: attn.weighted_sum %{{.*}}, %[[V]] : (tensor<1x4x3x?xf32>, tensor<1x4x?x64xbf16>) -> tensor<1x4x3x64xbf16>
func.func @rope_static_t_dynamic_s(%q: tensor<1x4x3x64xbf16>, %k: tensor<1x4x?x64xbf16>, %v: tensor<1x4x?x64xbf16>) -> tensor<1x4x3x64xbf16> {
  %0 = attn.attention %q, %k, %v rope(1.0e+04)
      : (tensor<1x4x3x64xbf16>, tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16>) -> tensor<1x4x3x64xbf16>
  return %0 : tensor<1x4x3x64xbf16>
}
