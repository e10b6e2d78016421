// attn-run options the command line parser accepts but attn-run cannot
// use are errors: --tol=-1 and --tol=nan used to fall back silently to the
// default bound (-1 marks it), --repeat had no upper bound.
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=1x1x8 --check --tol=-1 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=1x1x8 --check --tol=nan 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=1x1x8 --check --row-tol=inf 2>&1 | FileCheck %s --check-prefix=ROW
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=1x1x8 --time --repeat=100001 2>&1 | FileCheck %s --check-prefix=REPEAT
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=1x1x8 --time --repeat=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: attn-run %attn_examples/fox.mlir --device=cpu --random=1x1x8 --check --tol=1e-3 --time --repeat=2 | FileCheck %s --check-prefix=OK

// NEG: attn-run: error: --tol must be a finite number >= 0, got -1
// NAN: attn-run: error: --tol must be a finite number >= 0, got nan
// ROW: attn-run: error: --row-tol must be a finite number >= 0, got inf
// REPEAT: attn-run: error: --repeat must be in [1, 100000], got 100001
// ZERO: attn-run: error: --repeat must be in [1, 100000], got 0
// OK: (bound 1e-03), compile {{.*}} (median of 2)
