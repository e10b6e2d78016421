// attn-fuse on examples/rope.mlir: scores -> softmax -> weighted_sum becomes
// one attn.attention. T and S are dynamic, so q's rope offset (0) cannot be
// proven to be k's offset + S - T: the two attn.rope stay outside, unchanged,
// and the fused op (without rope(...)) reads their results, which is exact.
// The fused module still lowers to LLVM.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse \
// RUN:   | FileCheck %s --implicit-check-not=attn.scores \
// RUN:       --implicit-check-not=attn.softmax --implicit-check-not=attn.weighted_sum
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-reference-to-llvm \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[QR:.*]] = attn.rope %[[Q]] : tensor<?x?x?x64xf32>
// CHECK-NEXT: %[[KR:.*]] = attn.rope %[[K]] : tensor<?x?x?x64xf32>
// CHECK-NOT: attn.scores
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[QR]], %[[KR]], %[[V]] : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.weighted_sum

// LLVM: llvm.func @main(
// LLVM-NOT: attn.
