// attn-run --grad: the forward of @main's training pair, then its backward
// on dO; --check compares the output and every gradient with the fp64
// oracle's (ref::evaluateGrad), one line each, named for the argument; the
// RoPE positions (integer) get no gradient. --output is a directory of
// o.npy and d<argument>.npy; --save-inputs writes the drawn dO after the
// inputs, so that --inputs replays the run.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --grad --device=cpu --random=1x2x9 --seed=5 --check --output=%t/out --save-inputs=%t/in | FileCheck %s
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES
// RUN: attn-run %s --grad --device=cpu --pipeline=reference --inputs=%t/in0.npy,%t/in1.npy,%t/in2.npy,%t/in3.npy,%t/in4.npy,%t/in5.npy --check | FileCheck %s --check-prefix=REPLAY
// RUN: attn-run %s --grad --device=cpu --random=1x2x9 --time --repeat=2 | FileCheck %s --check-prefix=TIME

// CHECK: attn-run-grad.mlir: @main training pair, forward on cpu, backward on cpu, saved state 1 row log-sum-exp(s), dO N(0, 1) with seed 5
// CHECK-NEXT: {{^}}  o tensor<1x2x9x16xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05){{$}}
// CHECK-NEXT: {{^}}  dq tensor<1x2x9x16xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05){{$}}
// CHECK-NEXT: {{^}}  dk tensor<1x2x9x16xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05){{$}}
// CHECK-NEXT: {{^}}  dv tensor<1x2x9x16xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05){{$}}
// CHECK-NEXT: {{^}}  dg tensor<1x2x9xf32>, max relative error vs fp64 oracle {{.*}} (bound 1e-05){{$}}
// CHECK-NOT: dpos

// FILES: dg.npy
// FILES-NEXT: dk.npy
// FILES-NEXT: dq.npy
// FILES-NEXT: dv.npy
// FILES-NEXT: o.npy

// REPLAY: dO from --inputs
// REPLAY-COUNT-5: max relative error vs fp64 oracle {{.*}} (bound 1e-05){{$}}

// TIME: {{^}}  compile {{[0-9.]+}} s, forward {{[0-9.]+}} ms, backward {{[0-9.]+}} ms (median of 2)

// A bound nothing meets: every line is marked, exit status 1.
// RUN: not attn-run %s --grad --device=cpu --random=1x2x9 --seed=5 --check --tol=1e-30 > %t/fail.out 2> %t/fail.err
// RUN: FileCheck %s --check-prefix=FAIL < %t/fail.out
// RUN: FileCheck %s --check-prefix=FAIL-ERR < %t/fail.err
// FAIL-COUNT-5: (bound 1e-30) [FAIL]
// FAIL-ERR: attn-run: error: the output or a gradient differs from the fp64 oracle beyond the bound (lines marked [FAIL])

// Errors: a function with two results, a dO of another shape than the
// output (here the gate's file), too many files.
// RUN: not attn-run %s --grad --entry=two --device=cpu --random=1x2x9 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: attn-run: error: cannot derive the training pair of @two in {{.*}}attn-run-grad.mlir:
// TWO: attn-grad: @two must return one float tensor (it returns 2 values)
// RUN: not attn-run %s --grad --device=cpu --inputs=%t/in0.npy,%t/in1.npy,%t/in2.npy,%t/in3.npy,%t/in4.npy,%t/in4.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: attn-run: error: dO (the --inputs file after the arguments) is tensor<1x2x9xf32>, but the output is tensor<1x2x9x16xf32>
// RUN: not attn-run %s --grad --device=cpu --inputs=%t/in0.npy,%t/in1.npy,%t/in2.npy,%t/in3.npy,%t/in4.npy,%t/in5.npy,%t/in5.npy 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: attn-run: error: @main takes 5 inputs ({{.*}}), got 7; pass them with --inputs=a.npy,b.npy,... (then dO.npy, optional) or use --random

func.func @main(%q: tensor<?x?x?x16xf32>, %pos: tensor<?xi64>,
                %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>,
                %g: tensor<?x?x?xf32>) -> tensor<?x?x?x16xf32> {
  %qr = attn.rope %q positions(%pos) theta 1.0e+02 rotary_dim 16
      : tensor<?x?x?x16xf32>, tensor<?xi64>
  %o = attn.attention %qr, %k, %v gate(%g)
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
}

func.func @two(%q: tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) {
  %o = attn.attention %q, %q, %q
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %o, %q : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>
}
