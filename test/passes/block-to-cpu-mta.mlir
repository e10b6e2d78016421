// attn-block-to-cpu on the ops added for MTA (codegen/cpu/MtaToCPU.cpp):
// the stencil becomes, per register piece of the output rows and block of
// rows, vectors that accumulate vector.fma of a broadcast kernel tap and an unaligned
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

// A 12-wide output row is two register pieces (RegisterLoops.h): lanes
// [0, 8) and [8, 12). A narrow piece runs up to 8 rows together
// (rowsPerBlock; here all 6 rows in one block, no row loop), one vector
// accumulator per row over the c_q x c_k taps, each tap's weight broadcast
// once for the rows; the taps of a kernel row come unrolled by 4 (one
// round of 4, no loop, then the fifth tap).
// CHECK-LABEL: func.func @stencil
// CHECK-SAME: (%[[IN:.*]]: tensor<7x16xf32>, %[[K:.*]]: tensor<2x5xf32>)
// CHECK: %[[LO:.*]]:6 = scf.for %[[A:.*]] = %{{.*}} to %c2 {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: %[[SRC1:.*]] = arith.addi %[[A]], %c1
// CHECK: %[[W:.*]] = tensor.extract %[[K]][%[[A]], %c0]
// CHECK: %[[WV:.*]] = vector.broadcast %[[W]] : f32 to vector<8xf32>
// CHECK: %[[X:.*]] = vector.transfer_read %[[IN]][%[[A]], %c0]
// CHECK: vector.fma %[[WV]], %[[X]]
// CHECK: %[[X1:.*]] = vector.transfer_read %[[IN]][%[[SRC1]], %c0]
// CHECK: vector.fma %[[WV]], %[[X1]]
// CHECK: tensor.extract %[[K]][%[[A]], %c1]
// CHECK: tensor.extract %[[K]][%[[A]], %c4]
// CHECK: vector.transfer_read %[[IN]][%{{.*}}, %c4]
// CHECK: vector.transfer_write %[[LO]]#0, %{{.*}}[%c0, %c0] {{.*}} : vector<8xf32>, tensor<6x12xf32>
// CHECK: %[[T5:.*]] = vector.transfer_write %[[LO]]#5, %{{.*}}[%c5, %c0] {{.*}} : vector<8xf32>, tensor<6x12xf32>
// CHECK: %[[HI:.*]]:6 = scf.for {{.*}} -> (vector<4xf32>,
// CHECK: tensor.extract %[[K]][%{{.*}}, %c4]
// CHECK: vector.transfer_read %[[IN]][%{{.*}}, %c12]{{.*}} : tensor<7x16xf32>, vector<4xf32>
// CHECK: vector.transfer_write %[[HI]]#0, %[[T5]][%c0, %c8] {{.*}} : vector<4xf32>, tensor<6x12xf32>
// CHECK: %[[OUT:.*]] = vector.transfer_write %[[HI]]#5, %{{.*}}[%c5, %c8] {{.*}} : vector<4xf32>, tensor<6x12xf32>
// CHECK: return %[[OUT]]
func.func @stencil(%s: tensor<7x16xf32>, %k: tensor<2x5xf32>) -> tensor<6x12xf32> {
  %c = attn_block.stencil %s, %k : tensor<7x16xf32>, tensor<2x5xf32> -> tensor<6x12xf32>
  return %c : tensor<6x12xf32>
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

// A dot whose accumulator rows are 74 wide (the pass-1 haloed MTA score
// tile at BN = 64, c_k = 11): pieces of 64, 8 and 2 lanes, each carried in
// registers over k; no vector<74xf32>. The 64-lane piece goes row by row;
// the narrow ones run the 5 rows together (5 accumulators, one b read).
// CHECK-LABEL: func.func @dot_odd_width
// CHECK-NOT: vector<74xf32>
// CHECK: scf.for {{.*}} -> (tensor<5x74xf32>)
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %c0]{{.*}} : tensor<5x74xf32>, vector<64xf32>
// CHECK: scf.for {{.*}} step %c4 {{.*}} -> (vector<64xf32>)
// CHECK: vector.transfer_read %{{.*}}[%c4, %c64]{{.*}} : tensor<5x74xf32>, vector<8xf32>
// CHECK: scf.for {{.*}} step %c4 {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: %[[B8:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %c64]{{.*}} : tensor<16x74xf32>, vector<8xf32>
// CHECK: vector.fma %{{.*}}, %[[B8]], %{{.*}} : vector<8xf32>
// CHECK: vector.fma %{{.*}}, %[[B8]], %{{.*}} : vector<8xf32>
// CHECK: vector.transfer_read %{{.*}}[%c4, %c72]{{.*}} : tensor<5x74xf32>, vector<2xf32>
// CHECK: vector.fma {{.*}} : vector<2xf32>
// CHECK: vector.transfer_write {{.*}}[%c4, %c72]{{.*}} : vector<2xf32>, tensor<5x74xf32>
func.func @dot_odd_width(%a: tensor<5x16xf32>, %b: tensor<16x74xf32>, %c: tensor<5x74xf32>) -> tensor<5x74xf32> {
  %d = attn_block.dot %a, %b, %c : tensor<5x16xf32>, tensor<16x74xf32> -> tensor<5x74xf32>
  return %d : tensor<5x74xf32>
}

// skip_zero_a: where b holds a NaN or inf (the running maximum of |b| is
// not below +inf) the products of zero a elements are selected away;
// otherwise the plain loops run.
// CHECK-LABEL: func.func @dot_skip_zero_a
// CHECK: math.absf {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: %[[BIG:.*]] = vector.reduction <maximumf>
// CHECK: %[[BAD:.*]] = arith.cmpf uge, %{{.*}}, %cst{{.*}} : f32
// CHECK: scf.if %[[BAD]] -> (tensor<4x16xf32>)
// CHECK: %[[F:.*]] = vector.fma
// CHECK: %[[Z:.*]] = arith.cmpf oeq, %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.select %[[Z]], %{{.*}}, %[[F]] : vector<16xf32>
// CHECK: } else {
// CHECK-NOT: arith.select
// CHECK: vector.fma
// CHECK: }
func.func @dot_skip_zero_a(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %d = attn_block.dot %a, %b, %c {skip_zero_a} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %d : tensor<4x16xf32>
}
