// attn-fuse on examples/path.mlir: scores (PaTH path(w, beta)) -> softmax
// -> weighted_sum becomes one attn.attention with path(w, beta), and the
// fused module still lowers to LLVM.
// RUN: attn-opt %S/../../examples/path.mlir --attn-fuse \
// RUN:   | FileCheck %s --implicit-check-not=attn.scores \
// RUN:       --implicit-check-not=attn.softmax --implicit-check-not=attn.weighted_sum
// RUN: attn-opt %S/../../examples/path.mlir --attn-fuse --attn-reference-to-llvm \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^)]*}})
// CHECK-NOT: attn.scores
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] path(%[[W]], %[[B]]) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.weighted_sum

// LLVM: llvm.func @main(
// LLVM-NOT: attn.
