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
// Both go through the block program, not the reference lowering: one
// attention kernel called once, and one parallel region per launched
// kernel (rope: the table and the two rotations first; fox: G' first).
// RUN: attn-opt %S/../../examples/rope.mlir --attn-to-cpu | grep -c 'llvm.call @main_attention_kernel(' | grep -x 1
// RUN: attn-opt %S/../../examples/rope.mlir --attn-to-cpu | grep -c 'omp.parallel' | grep -x 4
// RUN: attn-opt %S/../../examples/fox.mlir --attn-to-cpu | grep -c 'omp.parallel' | grep -x 2

// The kernels: the attention kernel (no cos/sin in it: q and k arrive
// rotated), then the prologue kernels; FoX's G' is summed in f64.
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK: llvm.func @main_attention_kernel(
// CHECK-SAME: attributes {attn_block.kernel, sym_visibility = "private"} {
// ROPE-NOT: llvm.intr.{{(cos|sin)}}
// exp2 as element-wise arithmetic (Exp2ToCPU.cpp): no libm call.
// CHECK-NOT: llvm.intr.exp2
// CHECK: llvm.intr.roundeven
// CHECK: llvm.return
// CHECK-NEXT: }
// ROPE: llvm.func @main_rope_table(
// ROPE: llvm.intr.cos(%{{.*}}) : (f64) -> f64
// ROPE: llvm.intr.sin(%{{.*}}) : (f64) -> f64
// ROPE: llvm.func @main_rope_q(
// ROPE: llvm.func @main_rope_k(
// FOX: llvm.func @main_gate_prefix(
// FOX: llvm.fpext {{.*}} : f32 to f64

// The host function: each kernel's grid as an OpenMP worksharing loop nest
// whose two induction variables are the kernel's last two arguments; the
// programs are handed out one at a time, grid x from the top
// (attn-cpu-schedule-programs): x' = (ub_x - 1) - x.
// CHECK: llvm.func @main(
// ROPE: llvm.call @main_rope_table(
// ROPE: llvm.call @main_rope_q(
// ROPE: llvm.call @main_rope_k(
// FOX: llvm.call @main_gate_prefix(
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop schedule(dynamic) {
// CHECK-NEXT: omp.loop_nest (%[[X:[^,]*]], %[[Y:[^)]*]]) : i64 = (%{{.*}}) to (%[[UBX:[^,]*]], %{{.*}}) step (%[[ONE:[^,]*]], %{{.*}}) collapse(2) {
// CHECK-NEXT: %[[LAST:.*]] = llvm.sub %[[UBX]], %[[ONE]] : i64
// CHECK-NEXT: %[[XR:.*]] = llvm.sub %[[LAST]], %[[X]] : i64
// CHECK: llvm.call @main_attention_kernel({{.*}}, %[[XR]], %[[Y]]) : (
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK: llvm.return

// Translated: the kernel calls are outlined into parallel regions forked
// through the OpenMP runtime, with a dynamic schedule over the grid.
// IR-LABEL: define void @main_attention_kernel(
// IR-NOT: @llvm.{{(cos|sin)}}.
// IR: call double @llvm.cos.f64(
// IR: call double @llvm.sin.f64(
// IR-LABEL: define {{.*}} @main(
// IR: call void {{.*}}@__kmpc_fork_call(
// IR-DAG: call void @__kmpc_dispatch_init_8u(
// IR-DAG: call void @main_attention_kernel(
// IR-DAG: call i32 @__kmpc_dispatch_next_8u(
// IR: declare {{.*}} @__kmpc_fork_call(
