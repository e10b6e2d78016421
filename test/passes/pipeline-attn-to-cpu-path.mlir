// --attn-to-cpu on examples/path.mlir and path_fox.mlir: PaTH goes through
// the block program (the chunk and attention kernels, with FoX the
// gate-prefix kernel first), not the reference lowering. The result is LLVM
// dialect plus OpenMP for the grids, launched in order; the host function
// allocates the nine scratch buffers (with the dense transports and the
// marks of non-finite w or beta; FoX: and G') and the output, and frees the
// scratch after the last launch (the output is returned).
// RUN: attn-opt %S/../../examples/path.mlir --attn-to-cpu \
// RUN:   | FileCheck %s --implicit-check-not=attn. \
// RUN:       --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|extract_row|insert_row|launch)}}' \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-to-cpu \
// RUN:   | FileCheck %s --check-prefixes=CHECK,FOX --implicit-check-not=attn. --implicit-check-not=scf. \
// RUN:       --implicit-check-not=memref. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=unrealized_conversion_cast
// Every op is an llvm.* or omp.* op.
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-to-cpu \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.0-9]+' | not grep -vE '(llvm|omp)\.'

// CHECK-DAG: llvm.func @main_path_chunk_kernel(
// CHECK-DAG: llvm.func @main_path_attention_kernel(
// CHECK-LABEL: llvm.func @main(
// FOX: llvm.call @main_gate_prefix(
// CHECK-COUNT-10: llvm.call @malloc
// CHECK: omp.parallel {
// CHECK: llvm.call @main_path_chunk_kernel(
// CHECK: omp.terminator
// CHECK: omp.parallel {
// CHECK: llvm.call @main_path_attention_kernel(
// CHECK: omp.terminator
// CHECK-COUNT-9: llvm.call @free
// FOX: llvm.call @free
// CHECK-NOT: llvm.call @free
// CHECK: llvm.return
