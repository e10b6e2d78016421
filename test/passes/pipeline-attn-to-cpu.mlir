// --attn-to-cpu on examples/mta.mlir (its kernels: pipeline-attn-to-cpu-mta.mlir;
// PaTH: pipeline-attn-to-cpu-path.mlir): LLVM and OpenMP dialects only.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-to-cpu \
// RUN:   | FileCheck %s --check-prefix=MTA --implicit-check-not=attn. \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %S/../../examples/mta.mlir --attn-to-cpu \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.]+' | not grep -vE '(llvm|omp)\.'

// MTA: llvm.func @main(
// MTA: llvm.return
