// attn-block-to-cpu on the ops added for MTA (codegen/cpu/MtaToCPU.cpp):
// the stencil becomes, per output row, a vector of the row's width that
// accumulates vector.fma of a broadcast kernel tap and an unaligned
// (shifted) row read of the haloed input; in_bounds loads/stores copy whole
// rows with vector transfers (no per-element bounds mask, no scf.if).
// RUN: attn-opt %s --attn-block-to-cpu | FileCheck %s
// The MTA kernels of the examples lower completely: no attn_block op left.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse --attn-to-block \
// RUN:   --attn-block-to-cpu \
// RUN:   | FileCheck %s --check-prefix=EX --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|rope|launch|stencil)}}' \
// RUN:       --implicit-check-not=attn.attention
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-fuse --attn-to-block \
// RUN:   --attn-block-to-cpu \
// RUN:   | FileCheck %s --check-prefix=EX --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|rope|launch|stencil)}}' \
// RUN:       --implicit-check-not=attn.attention

// EX: vector.fma
// EX: func.func @main(
// EX: scf.parallel

// CHECK-LABEL: func.func @stencil
// CHECK-SAME: (%[[IN:.*]]: tensor<7x10xf32>, %[[K:.*]]: tensor<2x3xf32>)
// CHECK: %[[ROWS:.*]] = scf.for %[[R:.*]] = %{{.*}} to %c6 {{.*}} -> (tensor<6x8xf32>)
// CHECK: scf.for %[[A:.*]] = %{{.*}} to %c2 {{.*}} -> (vector<8xf32>)
// CHECK: %[[SRC:.*]] = arith.addi %[[R]], %[[A]]
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %c3 {{.*}} -> (vector<8xf32>)
// CHECK: %[[W:.*]] = tensor.extract %[[K]][%[[A]], %[[B]]]
// CHECK: %[[WV:.*]] = vector.broadcast %[[W]] : f32 to vector<8xf32>
// CHECK: %[[X:.*]] = vector.transfer_read %[[IN]][%[[SRC]], %[[B]]]
// CHECK: vector.fma %[[WV]], %[[X]]
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>, tensor<6x8xf32>
// CHECK: return %[[ROWS]]
func.func @stencil(%s: tensor<7x10xf32>, %k: tensor<2x3xf32>) -> tensor<6x8xf32> {
  %c = attn_block.stencil %s, %k : tensor<7x10xf32>, tensor<2x3xf32> -> tensor<6x8xf32>
  return %c : tensor<6x8xf32>
}

// CHECK-LABEL: func.func @in_bounds
// CHECK-NOT: scf.if
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %c16
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[R]]
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}]{{.*}} : memref<?x?x?x16x8xf32>, vector<8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>, tensor<16x8xf32>
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<16x8xf32>, vector<8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>, memref<?x?x?x16x8xf32>
// CHECK-NOT: scf.if
// CHECK: return
func.func @in_bounds(%m: memref<?x?x?x16x8xf32>, %i: index) {
  %t = attn_block.load %m[%i, %i, %i, %i, %i] dims [3, 4] padding 0.0 in_bounds : memref<?x?x?x16x8xf32> -> tensor<16x8xf32>
  attn_block.store %t, %m[%i, %i, %i, %i, %i] dims [3, 4] in_bounds : tensor<16x8xf32> -> memref<?x?x?x16x8xf32>
  return
}
