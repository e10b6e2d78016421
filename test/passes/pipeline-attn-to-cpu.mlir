// --attn-to-cpu on examples/path_fox.mlir (PaTH: today the reference
// lowering): LLVM dialect only. (MTA is fused: pipeline-attn-to-cpu-mta.mlir.)
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-to-cpu \
// RUN:   | FileCheck %s --check-prefix=PATHFOX --implicit-check-not=attn. \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-to-cpu \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.]+' | not grep -vE 'llvm\.'

// PATHFOX: llvm.func @main(
// PATHFOX: llvm.intr.exp
// PATHFOX: llvm.return
