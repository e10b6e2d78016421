// attn-run on an entry function with several results: --check compares each
// with the oracle's result of the same index and fails if any is above its
// bound; --output writes one file per result (the path without .npy, then
// the index).
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --device=cpu --random=1x2x9 --seed=5 --check --output=%t/o.npy | FileCheck %s
// RUN: attn-run %s --device=cpu --pipeline=reference --random=1x2x9 --seed=5 --check | FileCheck %s
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// RUN: not attn-run %s --device=cpu --random=1x2x9 --seed=5 --check --tol=1e-30 2>&1 | FileCheck %s --check-prefix=FAIL

// CHECK: @main on cpu, result 0 tensor<1x2x9x16xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05); result 1 tensor<1x2x9x9xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05); result 2 tensor<1x2x9x16xf32>, max relative error vs fp64 oracle 0.000e+00 (bound 1e-05)

// FILES: o0.npy
// FILES-NEXT: o1.npy
// FILES-NEXT: o2.npy

// The argument returned as is matches exactly: only results 0 and 1 fail.
// FAIL: attn-run: error: result 0 differs from the fp64 oracle beyond the bound
// FAIL-NEXT: attn-run: error: result 1 differs from the fp64 oracle beyond the bound
// FAIL-NOT: result 2 differs
func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x16xf32>) {
  %s = attn.scores %q, %k : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %o, %p, %q : tensor<?x?x?x16xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x16xf32>
}
