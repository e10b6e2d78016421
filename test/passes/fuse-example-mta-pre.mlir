// attn-fuse on examples/mta_pre.mlir: scores -> kq_conv pre -> softmax ->
// weighted_sum becomes one attn.attention with kq_conv_pre(theta) and no
// other MTA piece, and the fused module still lowers to LLVM.
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-fuse \
// RUN:   | FileCheck %s --implicit-check-not=attn.scores \
// RUN:       --implicit-check-not=attn.kq_conv --implicit-check-not=attn.softmax \
// RUN:       --implicit-check-not=attn.weighted_sum
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-fuse --attn-reference-to-llvm \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[TH:[^:]*]]: {{[^)]*}})
// CHECK-NOT: attn.scores
// CHECK-NOT: attn.kq_conv
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] kq_conv_pre(%[[TH]]) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x6x11xf32>) -> tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.weighted_sum

// LLVM: llvm.func @main(
// LLVM-NOT: attn.
