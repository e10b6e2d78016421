// attn-fuse on examples/mta.mlir, the released MTA configuration: scores ->
// kq_conv pre -> head_mix pre -> softmax -> kq_conv post -> head_mix post ->
// weighted_sum -> head_norm (gated) becomes one attn.attention with every
// MTA operand and the gated norm in its slot; the two matching attn.rope
// join it too. T and S are dynamic, so q's rope offset cannot be proven to
// be k's + S - T: the fused op states it (rope_q_offset 0). The fused module
// still lowers to LLVM.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse \
// RUN:   | FileCheck %s --implicit-check-not=attn.scores \
// RUN:       --implicit-check-not=attn.kq_conv --implicit-check-not=attn.head_mix \
// RUN:       --implicit-check-not=attn.softmax --implicit-check-not=attn.weighted_sum \
// RUN:       --implicit-check-not=attn.head_norm --implicit-check-not=attn.rope
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse --attn-reference-to-llvm \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[TP:[^:]*]]: {{[^,]*}}, %[[WP:[^:]*]]: {{[^,]*}}, %[[TPO:[^:]*]]: {{[^,]*}}, %[[WPO:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^,]*}}, %[[GW:[^:]*]]: {{[^,]*}}, %[[GB:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_q_offset 0 kq_conv_pre(%[[TP]]) head_mix_pre(%[[WP]]) kq_conv_post(%[[TPO]]) head_mix_post(%[[WPO]]) norm(%[[GAM]]) norm_gate(%[[GW]], %[[GB]]) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x6x11xf32>, tensor<?x?xf32>, tensor<?x6x11xf32>, tensor<?x?xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>) -> tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.head_norm

// LLVM: llvm.func @main(
// LLVM-NOT: attn.
