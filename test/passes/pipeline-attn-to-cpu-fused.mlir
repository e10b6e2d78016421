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

// The kernel: 6 (rope: q, k, v, cos table, sin table, out) or 5 (fox: q,
// k, v, g, out) memref descriptors (11 values each for rank 4, 9 for g's
// rank 3, 7 for the [P, R/2] tables: %arg33..39 and %arg40..46), then pid0,
// pid1. The rope kernel only reads the tables: no cos/sin in it.
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// ROPE: llvm.func @main_attention_kernel(%arg0: !llvm.ptr, {{.*}}, %arg32: i64, %arg33: !llvm.ptr, %arg34: !llvm.ptr, %arg35: i64, %arg36: i64, %arg37: i64, %arg38: i64, %arg39: i64, %arg40: !llvm.ptr, %arg41: !llvm.ptr, %arg42: i64, %arg43: i64, %arg44: i64, %arg45: i64, %arg46: i64, %arg47: !llvm.ptr, {{.*}}, %arg58: i64, %arg59: i64) attributes {attn_block.kernel, sym_visibility = "private"} {
// FOX: llvm.func @main_attention_kernel(%arg0: !llvm.ptr, {{.*}}, %arg53: i64, %arg54: i64) attributes {attn_block.kernel, sym_visibility = "private"} {
// CHECK-NOT: llvm.func
// ROPE-NOT: llvm.intr.{{(cos|sin)}}
// FOX: llvm.fpext {{.*}} : f32 to f64
// exp2 as element-wise arithmetic (Exp2ToCPU.cpp): no libm call.
// CHECK-NOT: llvm.intr.exp2
// CHECK: llvm.intr.roundeven
// ROPE-NOT: llvm.intr.{{(cos|sin)}}
// CHECK: llvm.return
// CHECK-NEXT: }

// The host function: (rope) the cos/sin tables, angles in f64, built once
// before the parallel region; the grid as an OpenMP worksharing loop nest
// whose two induction variables are the kernel's last two arguments.
// CHECK: llvm.func @main(
// ROPE: %[[COS:.*]] = llvm.intr.cos(%{{.*}}) : (f64) -> f64
// ROPE-NEXT: llvm.fptrunc %[[COS]] : f64 to f32
// ROPE: %[[SIN:.*]] = llvm.intr.sin(%{{.*}}) : (f64) -> f64
// ROPE-NEXT: llvm.fptrunc %[[SIN]] : f64 to f32
// ROPE-NOT: llvm.intr.{{(cos|sin)}}
// The programs are handed out one at a time, grid x from the top
// (attn-cpu-schedule-programs): x' = (ub_x - 1) - x.
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop schedule(dynamic) {
// CHECK-NEXT: omp.loop_nest (%[[X:[^,]*]], %[[Y:[^)]*]]) : i64 = (%{{.*}}) to (%[[UBX:[^,]*]], %{{.*}}) step (%[[ONE:[^,]*]], %{{.*}}) collapse(2) {
// CHECK-NEXT: %[[LAST:.*]] = llvm.sub %[[UBX]], %[[ONE]] : i64
// CHECK-NEXT: %[[XR:.*]] = llvm.sub %[[LAST]], %[[X]] : i64
// CHECK: llvm.call @main_attention_kernel({{.*}}, %[[XR]], %[[Y]]) : (
// ROPE-NOT: llvm.intr.{{(cos|sin)}}
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK: llvm.return

// Translated: the kernel calls are outlined into a parallel region forked
// through the OpenMP runtime, with a dynamic schedule over the grid.
// IR-LABEL: define void @main_attention_kernel(
// IR-NOT: @llvm.{{(cos|sin)}}.
// IR-LABEL: define {{.*}} @main(
// IR: call double @llvm.cos.f64(
// IR: call double @llvm.sin.f64(
// IR: call void {{.*}}@__kmpc_fork_call(
// IR: define internal void @main..omp_par(
// IR-DAG: call void @__kmpc_dispatch_init_8u(
// IR-DAG: call void @main_attention_kernel(
// IR-DAG: call i32 @__kmpc_dispatch_next_8u(
// IR: declare {{.*}} @__kmpc_fork_call(
