// attn-run --check on a 16-bit result bounds the relative RMS and the worst
// row against the fp64 oracle; either bound failing is exit status 1.
// RUN: attn-run %attn_examples/path_bf16.mlir --device=cpu --random=1x2x70 --seed=3 --check | FileCheck %s --check-prefix=PASS
// RUN: not attn-run %attn_examples/path_bf16.mlir --device=cpu --random=1x2x70 --seed=3 --check --row-tol=1e-9 | FileCheck %s --check-prefix=ROW
// RUN: not attn-run %attn_examples/path_bf16.mlir --device=cpu --random=1x2x70 --seed=3 --check --tol=1e-9 | FileCheck %s --check-prefix=RMS

// PASS: relative RMS error vs fp64 oracle {{.*}} (bound 5e-03), worst row {{[0-9]+}}: {{.*}} (bound 2e-02)
// ROW: (bound 5e-03), worst row {{[0-9]+}}: {{.*}} (bound 1e-09)
// RMS: (bound 1e-09), worst row {{[0-9]+}}: {{.*}} (bound 2e-02)
