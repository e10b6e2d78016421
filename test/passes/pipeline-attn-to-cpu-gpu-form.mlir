// attn-to-cpu on a kernel in GPU form (Inputs/flash-gpu-form.mlir: mma
// layouts, shared buffers, a cp.async pipeline, barriers): the pipeline
// strips it (attn-block-strip-gpu) and lowers it like any CPU-form kernel,
// down to the LLVM dialect with the grid over OpenMP threads (no attn_block
// op is left; the kernel keeps its attn_block.kernel mark). Its numbers
// are checked against the fp64 oracle in test/unit/GpuFormCpuTest.cpp.
// RUN: attn-opt %S/Inputs/flash-gpu-form.mlir --attn-to-cpu | FileCheck %s \
// RUN:   "--implicit-check-not={{[ ]attn_block\.}}" --implicit-check-not=memref. \
// RUN:   --implicit-check-not=tensor.
// CHECK: llvm.func @main_attention_kernel
// CHECK: llvm.func @main
// CHECK: omp.parallel
