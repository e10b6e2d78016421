// attn-to-block for the CPU on FoX: the flash kernel's one form. A gate
// kernel computes G' = -gamma log2(e) cumsum(g) per (batch, query head)
// row, summed in f64 and (on the CPU) stored in f64, so that G_i - G_j keeps
// f64's digits (f32 G' loses ~1e-5 of the logit at T = 4K); the attention
// kernel loads G' at its query rows once and at each key tile, and adds
// G'_j - G'_i (f64, rounded once to f32) to the scaled scores. (The GPU
// targets take the bias from a records dot: block-gpu-fox-records.mlir.)
// RUN: attn-opt %S/../../examples/fox.mlir --attn-fuse --attn-to-block \
// RUN:   | FileCheck %s --implicit-check-not=attn.attention \
// RUN:       --implicit-check-not=fox_records
// `scaled` gate and a sliding window: gamma = scale = 1/8, and the walk
// starts at max(0, S - T + row0 - 127).
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=SCALED

// CHECK-LABEL: func.func private @main_attention_kernel
// CHECK-SAME: %[[GP:[^:]*]]: memref<?x?x?xf64>, %{{[^:]*}}: memref<?x?x?x64xf32>)
// CHECK: %[[GQ:.*]] = attn_block.load %[[GP]][{{.*}}] dims [2] {{.*}} -> tensor<64xf64, {{.*}}>
// CHECK: scf.for %[[J:[a-z0-9_]+]] = {{.*}} -> (tensor<64xf32, {{.*}}>, tensor<64x8xf32, {{.*}}>, tensor<64x64xf32, {{.*}}>, index) {
// CHECK: %[[GK:.*]] = attn_block.load %[[GP]][%{{.*}}, %{{.*}}, %[[J]]] dims [2] {{.*}} -> tensor<64xf64, {{.*}}>
// CHECK: %[[S:.*]] = attn_block.dot {{.*}} transpose_b
// CHECK: %[[SC:.*]] = arith.mulf %[[S]], %{{.*}} : tensor<64x64xf32
// CHECK: %[[COLG:.*]] = attn_block.broadcast %[[GK]] axis 0 : tensor<64xf64, {{.*}}> -> tensor<64x64xf64
// CHECK-NEXT: %[[ROWG:.*]] = attn_block.broadcast %[[GQ]] axis 1 : tensor<64xf64, {{.*}}> -> tensor<64x64xf64
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[COLG]], %[[ROWG]] : tensor<64x64xf64
// CHECK-NEXT: %[[D32:.*]] = arith.truncf %[[D]] : tensor<64x64xf64, {{.*}}> to tensor<64x64xf32
// CHECK-NEXT: arith.addf %[[SC]], %[[D32]] : tensor<64x64xf32
// CHECK-LABEL: func.func private @main_gate_prefix
// CHECK-SAME: memref<?x?x?xf32>, %[[OUT:[^:]*]]: memref<?x?x?xf64>)
// -log2(e): the FoX gate is not scaled.
// CHECK: arith.constant -1.4426950408889634 : f64
// CHECK: attn_block.scan %{{.*}} : tensor<2048xf64
// CHECK: attn_block.store %{{.*}}, %[[OUT]]{{.*}} : tensor<2048xf64, {{.*}}> -> memref<?x?x?xf64>
// CHECK-LABEL: func.func @main(
// CHECK: %[[G:.*]] = memref.alloc({{.*}}) : memref<?x?x?xf64>
// CHECK: attn_block.launch @main_gate_prefix grid({{.*}}) args(%{{.*}}, %[[G]])
// CHECK: attn_block.launch @main_attention_kernel grid({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[G]], %{{.*}})

// SCALED-LABEL: func.func private @fox_scaled_window_attention_kernel
// SCALED: %[[W1:.*]] = arith.constant 127 : index
// SCALED: %[[START:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// SCALED: scf.for %{{.*}} = %[[START]] to %{{.*}} step
// SCALED-LABEL: func.func private @fox_scaled_window_gate_prefix
// -scale log2(e) = -0.125 * 1.4427
// SCALED: arith.constant -0.18033688011112042 : f64

func.func @fox_scaled_window(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %o = attn.attention %q, %k, %v gate(%g) scaled mask sliding_window window 128 : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
