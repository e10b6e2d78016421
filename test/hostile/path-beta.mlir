// PaTH's beta must lie in [0, 2] (each transform I - beta w w^T, unit w,
// non-expanding); outside it the fused kernel returned inf/NaN where the
// reference lowering was exact. attn-run refuses such inputs as the
// runtime's every entry point does (test/unit/HostileInputTest.cpp:
// Values.PathBetaRange); the range's ends run and match the oracle.
// RUN: not attn-run %attn_examples/path.mlir --device=cpu --random=1x2x80 --beta-range=0,3 2>&1 | FileCheck %s --check-prefix=HIGH
// RUN: not attn-run %attn_examples/path.mlir --device=cpu --random=1x2x80 --beta-range=-1,0 --pipeline=reference 2>&1 | FileCheck %s --check-prefix=LOW
// RUN: attn-run %attn_examples/path.mlir --device=cpu --random=1x2x80 --beta-range=1.9,2 --check | FileCheck %s --check-prefix=OK

// HIGH: attn-run: error: input 4 (PaTH's beta) holds {{.*}} at element {{[0-9]+}}: beta must lie in [0, 2]
// LOW: attn-run: error: input 4 (PaTH's beta) holds -{{.*}} at element {{[0-9]+}}: beta must lie in [0, 2]
// OK: @main on cpu, result tensor<1x2x80x64xf32>, max relative error vs fp64 oracle
