// The full --attn-reference-to-llvm pipeline on examples/rope.mlir: the
// result is LLVM dialect only (no attn, scf, memref, arith, math, cf,
// bufferization, tensor or func ops, no unrealized casts left).
// RUN: attn-opt %S/../../examples/rope.mlir --attn-reference-to-llvm \
// RUN:   | FileCheck %s --implicit-check-not=attn. --implicit-check-not=scf. \
// RUN:       --implicit-check-not=memref. --implicit-check-not=bufferization. \
// RUN:       --implicit-check-not=arith. --implicit-check-not=math. \
// RUN:       --implicit-check-not=cf. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=func.func --implicit-check-not=unrealized_conversion_cast
// Every operation in the output is an llvm.* op.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-reference-to-llvm \
// RUN:   | grep -oE '^ *([^=]*= )?"?[a-z_]+\.[a-z_.]+' | not grep -vE 'llvm\.'

// CHECK: module
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK: llvm.func @main(
// RoPE angles in f64.
// CHECK: llvm.intr.exp(%{{.*}}) : (f64) -> f64
// CHECK: llvm.intr.cos(%{{.*}}) : (f64) -> f64
// CHECK: llvm.intr.sin(%{{.*}}) : (f64) -> f64
// CHECK: llvm.intr.exp(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call @free
// CHECK: llvm.return
// CHECK-NOT: attn.
// CHECK-NOT: scf.
// CHECK-NOT: memref.
