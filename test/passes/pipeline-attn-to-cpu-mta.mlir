// --attn-to-cpu on the MTA examples: fused through the block program
// (MtaToBlock.cpp), not the reference lowering. The result is LLVM dialect
// plus OpenMP for the grids: no attn op, no remark, no loop/tensor/memref op.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-to-cpu 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MTA --implicit-check-not=attn. \
// RUN:       --implicit-check-not=remark \
// RUN:       --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|rope|launch|stencil)}}' \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-to-cpu 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PRE --implicit-check-not=attn. \
// RUN:       --implicit-check-not=remark \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// Every op is an llvm.* or omp.* op.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-to-cpu \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.0-9]+' | not grep -vE '(llvm|omp)\.'
// Two kernels (LSE pass, output pass), launched in sequence: two parallel
// regions; the pre-only example has one kernel and one region.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-to-cpu | grep -c 'omp.parallel' | grep -x 2
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-to-cpu | grep -c 'omp.parallel' | grep -x 1

// MTA: llvm.func @main_mta_lse_kernel(
// MTA-NOT: llvm.intr.exp2
// MTA: llvm.intr.roundeven
// MTA: llvm.intr.log2
// MTA: llvm.func @main_mta_output_kernel(
// MTA: llvm.intr.fmuladd
// MTA: llvm.intr.sqrt
// MTA: llvm.func @main(
// MTA: llvm.intr.cos
// MTA: omp.parallel
// MTA: llvm.call @main_mta_lse_kernel(
// MTA: omp.parallel
// MTA: llvm.call @main_mta_output_kernel(
// MTA: llvm.return

// PRE: llvm.func @main_mta_kernel(
// PRE: llvm.intr.fmuladd
// PRE: llvm.func @main(
// PRE: omp.parallel
// PRE: llvm.call @main_mta_kernel(
// PRE: llvm.return
