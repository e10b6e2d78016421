// attn-to-block on examples/fox.mlir after attn-fuse: the forget gate G
// (inclusive cumsum of g) is built in f64: the q rows' G is a prefix sum of
// g[0, S - T + row0) (an scf.for over 64-wide g tiles) plus the scan of the
// row tile; the key walk carries G at its start (another prefix, here over
// [0, 0) since a causal walk starts at key 0) as a fourth, f64 loop value
// and adds (G_i - G_j) * log2 e to the score tile (FoX: gate not scaled).
// RUN: attn-opt %S/../../examples/fox.mlir --attn-fuse --attn-to-block \
// RUN:   | FileCheck %s --implicit-check-not=attn.attention
// `scaled` gate and a sliding window: the bias is scaled by scale * log2 e
// and the walk (and G's starting prefix) starts at max(0, S - T + row0 - 127).
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=SCALED

// CHECK-LABEL: func.func private @main_attention_kernel
// CHECK-SAME: (%{{[^:]*}}: memref<?x?x?x64xf32>, %[[K:[^:]*]]: memref<?x?x?x64xf32>, %{{[^:]*}}: memref<?x?x?x64xf32>, %[[G:[^:]*]]: memref<?x?x?xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf32>)
// CHECK-SAME: attributes {attn_block.kernel}
// CHECK: %[[B:.*]] = arith.divui
// CHECK-NEXT: %[[H:.*]] = arith.remui
// CHECK: %[[QPOS0:.*]] = arith.addi
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// No rope: the q tile is only scaled.
// CHECK-NEXT: %[[QT:.*]] = attn_block.load
// CHECK-NEXT: arith.constant 0.180336878 : f32
// The gate at the query rows (positions S - T + row0 ..), widened to f64.
// CHECK: %[[GQ:.*]] = attn_block.load %[[G]][%[[B]], %[[H]], %[[QPOS0]]] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[GQ64:.*]] = arith.extf %[[GQ]] : tensor<64xf32> to tensor<64xf64>
// G(S - T + row0 - 1): sum of g over [0, S - T + row0), one g tile at a time.
// CHECK: %[[PRE:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[QPOS0]] step %{{.*}} iter_args(%[[SUM:.*]] = %{{.*}}) -> (f64) {
// CHECK-NEXT: %[[GT:.*]] = attn_block.load %[[G]][%[[B]], %[[H]], %[[I]]] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[GT64:.*]] = arith.extf %[[GT]] : tensor<64xf32> to tensor<64xf64>
// CHECK-NEXT: %[[IDX:.*]] = attn_block.iota %[[I]] : tensor<64xi64>
// CHECK: %[[KEEP:.*]] = arith.cmpi slt, %[[IDX]], %{{.*}} : tensor<64xi64>
// CHECK: %[[SEL:.*]] = arith.select %[[KEEP]], %[[GT64]], %{{.*}} : tensor<64xi1>, tensor<64xf64>
// CHECK-NEXT: %[[ROW:.*]] = attn_block.broadcast %[[SEL]] axis 0 : tensor<64xf64> -> tensor<1x64xf64>
// CHECK-NEXT: %[[RED:.*]] = attn_block.reduce sum %[[ROW]] axis 1 : tensor<1x64xf64> -> tensor<1xf64>
// CHECK: %[[E:.*]] = tensor.extract %[[RED]][%{{.*}}] : tensor<1xf64>
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[SUM]], %[[E]] : f64
// CHECK-NEXT: scf.yield %[[NEXT]] : f64
// CHECK-NEXT: }
// CHECK: %[[PREFILL:.*]] = linalg.fill ins(%[[PRE]] : f64) outs(%{{.*}} : tensor<64xf64>) -> tensor<64xf64>
// CHECK-NEXT: %[[SCAN:.*]] = attn_block.scan %[[GQ64]] : tensor<64xf64>
// CHECK-NEXT: %[[GQCUM:.*]] = arith.addf %[[SCAN]], %[[PREFILL]] : tensor<64xf64>
// G before the walk's start: a causal walk starts at key 0.
// CHECK: %[[CARRY0:.*]] = scf.for %{{.*}} = %[[C0]] to %[[C0]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64) {
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[CARRY:.*]] = %[[CARRY0]]) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, f64) {
// CHECK: %[[S:.*]] = attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} transpose_b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
// G at the keys: scan of the key tile's g plus the carry.
// CHECK-NEXT: %[[GK:.*]] = attn_block.load %[[G]][%[[B]], %[[H]], %[[J]]] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[GK64:.*]] = arith.extf %[[GK]] : tensor<64xf32> to tensor<64xf64>
// CHECK: %[[CF:.*]] = linalg.fill ins(%[[CARRY]] : f64) outs(%{{.*}} : tensor<64xf64>) -> tensor<64xf64>
// CHECK-NEXT: %[[GKS:.*]] = attn_block.scan %[[GK64]] : tensor<64xf64>
// CHECK-NEXT: %[[GKCUM:.*]] = arith.addf %[[GKS]], %[[CF]] : tensor<64xf64>
// bias[i, j] = G_i - G_j, in f64, then f32 * log2 e.
// CHECK-NEXT: %[[GJ:.*]] = attn_block.broadcast %[[GKCUM]] axis 0 : tensor<64xf64> -> tensor<64x64xf64>
// CHECK-NEXT: %[[GI:.*]] = attn_block.broadcast %[[GQCUM]] axis 1 : tensor<64xf64> -> tensor<64x64xf64>
// CHECK-NEXT: %[[DIFF:.*]] = arith.subf %[[GI]], %[[GJ]] : tensor<64x64xf64>
// CHECK-NEXT: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[D32:.*]] = arith.truncf %[[DIFF]] : tensor<64x64xf64> to tensor<64x64xf32>
// CHECK-NEXT: %[[BIAS:.*]] = arith.mulf %[[D32]], %{{.*}} : tensor<64x64xf32>
// CHECK-NEXT: %[[SB:.*]] = arith.addf %[[S]], %[[BIAS]] : tensor<64x64xf32>
// The carry advances by the tile's whole g sum.
// CHECK-NEXT: %[[GKROW:.*]] = attn_block.broadcast %[[GK64]] axis 0 : tensor<64xf64> -> tensor<1x64xf64>
// CHECK-NEXT: %[[TOT:.*]] = attn_block.reduce sum %[[GKROW]] axis 1 : tensor<1x64xf64> -> tensor<1xf64>
// CHECK: %[[TOTE:.*]] = tensor.extract %[[TOT]][%{{.*}}] : tensor<1xf64>
// CHECK-NEXT: %[[CNEXT:.*]] = arith.addf %[[CARRY]], %[[TOTE]] : f64
// CHECK: arith.select %{{.*}}, %[[SB]], %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK: attn_block.reduce max
// CHECK: math.exp2
// CHECK: attn_block.reduce sum
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[CNEXT]] : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, f64
// CHECK: attn_block.store %{{.*}}, %[[O]][
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[GA:[^:]*]]: tensor<?x?x?xf32>)
// CHECK: %[[GB:.*]] = bufferization.to_buffer %[[GA]] read_only : tensor<?x?x?xf32> to memref<?x?x?xf32>
// CHECK: attn_block.launch @main_attention_kernel grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[GB]], %{{.*}}) : memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?xf32>, memref<?x?x?x64xf32>

// SCALED-LABEL: func.func private @fox_scaled_window_attention_kernel
// SCALED: %[[QPOS0:.*]] = arith.addi
// SCALED-NEXT: %[[C0:.*]] = arith.constant 0 : index
// SCALED: %[[W1:.*]] = arith.constant 127 : index
// SCALED-NEXT: %[[LO:.*]] = arith.subi %[[QPOS0]], %[[W1]] : index
// SCALED-NEXT: %[[START:.*]] = arith.maxsi %[[C0]], %[[LO]] : index
// SCALED: scf.for %{{.*}} = %[[C0]] to %[[QPOS0]] step
// SCALED: %[[CARRY0:.*]] = scf.for %{{.*}} = %[[C0]] to %[[START]] step
// SCALED: scf.for %{{.*}} = %[[START]] to %{{.*}} step %{{.*}} iter_args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = %[[CARRY0]])
// scale 1/8 applies to the gate term too.
// SCALED: %[[GI:.*]] = attn_block.broadcast %{{.*}} axis 1 : tensor<64xf64> -> tensor<64x64xf64>
// SCALED-NEXT: arith.subf %[[GI]], %{{.*}} : tensor<64x64xf64>
// SCALED-NEXT: arith.constant 0.180336878 : f32
func.func @fox_scaled_window(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %o = attn.attention %q, %k, %v gate(%g) scaled mask sliding_window window 128 : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
