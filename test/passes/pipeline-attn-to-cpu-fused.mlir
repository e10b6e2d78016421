// --attn-to-cpu on the fusable examples (rope.mlir, fox.mlir): attn-fuse,
// attn-to-block, attn-block-to-cpu, then tensors -> buffers -> loops ->
// LLVM. The result is LLVM dialect plus the OpenMP dialect for the grid:
// the launch's scf.parallel becomes omp.parallel / omp.wsloop /
// omp.loop_nest (collapse(2)) calling the kernel, which is an llvm.func of
// its memref descriptors and two trailing i64 program ids (the __kmpc_*
// runtime calls only appear when the omp ops are translated to LLVM IR,
// checked with mlir-translate from the LLVM tools).
// RUN: attn-opt %S/../../examples/rope.mlir --attn-to-cpu \
// RUN:   | FileCheck %s --check-prefixes=CHECK,ROPE --implicit-check-not=attn. \
// RUN:       --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|rope|launch)}}' \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %S/../../examples/fox.mlir --attn-to-cpu \
// RUN:   | FileCheck %s --check-prefixes=CHECK,FOX --implicit-check-not=attn. \
// RUN:       --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|rope|launch)}}' \
// RUN:       --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:       --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=math. --implicit-check-not=unrealized_conversion_cast
// RUN: attn-opt %S/../../examples/rope.mlir --attn-to-cpu \
// RUN:   | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// Every op is an llvm.* or omp.* op.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-to-cpu \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.0-9]+' | not grep -vE '(llvm|omp)\.'
// RUN: attn-opt %S/../../examples/fox.mlir --attn-to-cpu \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.0-9]+' | not grep -vE '(llvm|omp)\.'
// Both go through the block program, not the reference lowering: exactly one
// kernel, one call of it, one parallel region.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-to-cpu | grep -c 'llvm.call @main_attention_kernel(' | grep -x 1
// RUN: attn-opt %S/../../examples/fox.mlir --attn-to-cpu | grep -c 'omp.parallel' | grep -x 1

// The kernel: 4 (rope: q, k, v, out) or 5 (fox: + g) memref descriptors
// (11 values each for rank 4, 9 for g's rank 3), then pid0, pid1.
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// ROPE: llvm.func @main_attention_kernel(%arg0: !llvm.ptr, {{.*}}, %arg44: i64, %arg45: i64) attributes {attn_block.kernel, sym_visibility = "private"} {
// FOX: llvm.func @main_attention_kernel(%arg0: !llvm.ptr, {{.*}}, %arg53: i64, %arg54: i64) attributes {attn_block.kernel, sym_visibility = "private"} {
// CHECK-NOT: llvm.func
// ROPE: llvm.intr.cos
// ROPE: llvm.intr.sin
// FOX: llvm.fpext {{.*}} : f32 to f64
// CHECK: llvm.intr.exp2
// CHECK: llvm.return
// CHECK-NEXT: }

// The host function: the grid as an OpenMP worksharing loop nest whose
// two induction variables are the kernel's last two arguments.
// CHECK: llvm.func @main(
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[X:[^,]*]], %[[Y:[^)]*]]) : i64 = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) collapse(2) {
// CHECK: llvm.call @main_attention_kernel({{.*}}, %[[X]], %[[Y]]) : (
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK: llvm.return

// Translated: the kernel calls are outlined into a parallel region forked
// through the OpenMP runtime, with a static schedule over the grid.
// IR: define {{.*}} @main(
// IR: call void {{.*}}@__kmpc_fork_call(
// IR: define internal void @main..omp_par(
// IR-DAG: call void @__kmpc_for_static_init_8u(
// IR-DAG: call void @main_attention_kernel(
// IR-DAG: call void @__kmpc_for_static_fini(
// IR: declare {{.*}} @__kmpc_fork_call(
