// --attn-to-cpu on examples/mta.mlir (fused: pipeline-attn-to-cpu-mta.mlir
// checks the kernels; PaTH: pipeline-attn-to-cpu-path.mlir): LLVM dialect only.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-to-cpu \
// RUN:   | FileCheck %s --check-prefix=MTA --implicit-check-not=attn. \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %S/../../examples/mta.mlir --attn-to-cpu \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.]+' | not grep -vE 'llvm\.'

// MTA: llvm.func @main(
// MTA: llvm.intr.cos
// MTA: llvm.intr.sqrt
// MTA: llvm.return
