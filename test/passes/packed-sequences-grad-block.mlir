// The fused flash backward with packed sequences (cu_seqlens): the dq walk
// is bounded like the forward's; the dkdv kernel finds its keys' sequences
// (a binary search of scalar loads), ends its query walk at the last key's
// sequence end and hides queries past each key's end.
// RUN: attn-opt %s --attn-grad --attn-to-block="grad-dq=walk" | FileCheck %s

// CHECK-LABEL: func.func private @fox_grad_grad_dq(
// CHECK-SAME: memref<?xi32>
// CHECK: scf.while
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK: arith.maxsi
// CHECK: scf.for
// CHECK-LABEL: func.func private @fox_grad_grad_dkdv(
// CHECK-SAME: memref<?xi32>
// CHECK: scf.while
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK: scf.for {{.*}} -> (tensor<64xi64, {{.*}}>, tensor<64xi64, {{.*}}>)
// CHECK: arith.minsi
// CHECK: arith.maxsi
func.func @fox(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
               %g: tensor<1x2x?xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %k, %v gate(%g) cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>)
      -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
