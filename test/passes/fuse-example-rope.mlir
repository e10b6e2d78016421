// attn-fuse on examples/rope.mlir: scores -> softmax -> weighted_sum becomes
// one attn.attention, and the two matching attn.rope join it: rope(theta).
// T and S are dynamic, so q's rope offset (0) cannot be proven to be k's
// offset + S - T: the fused op states it explicitly (rope_q_offset 0; k's
// rope_offset 0 is the default and not printed), which is exact for any T
// and S. The fused module still lowers to LLVM.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse \
// RUN:   | FileCheck %s --implicit-check-not=attn.scores \
// RUN:       --implicit-check-not=attn.softmax --implicit-check-not=attn.weighted_sum \
// RUN:       --implicit-check-not=attn.rope
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-reference-to-llvm \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_q_offset 0 : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.weighted_sum

// LLVM: llvm.func @main(
// LLVM-NOT: attn.
