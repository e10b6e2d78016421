// attn-to-block: masks, causal tile skipping and GQA in the kernel.
// RUN: attn-opt %s --attn-to-block | FileCheck %s --implicit-check-not=attn.attention

// Sliding window W = 16, GQA (8 query heads over 2 kv heads), f16, scale 0.5:
// the walk starts at max(0, S - T + row0 - (W - 1)) and ends at the diagonal;
// a key is visible when j < S, j <= p_i and j > p_i - W. f16 tiles are
// widened to f32 and the output narrowed back.
// CHECK-LABEL: func.func private @window_gqa_attention_kernel
// CHECK-SAME: (%[[Q:[^:]*]]: memref<2x8x?x32xf16>, %[[K:[^:]*]]: memref<2x2x?x32xf16>, %[[V:[^:]*]]: memref<2x2x?x32xf16>, %[[O:[^:]*]]: memref<2x8x?x32xf16>)
// CHECK: %[[PBH:.*]] = attn_block.program_id 1
// CHECK: %[[HQ:.*]] = memref.dim %[[Q]], %{{.*}} : memref<2x8x?x32xf16>
// CHECK: %[[HK:.*]] = memref.dim %[[K]], %{{.*}} : memref<2x2x?x32xf16>
// CHECK: %[[B:.*]] = arith.divui %[[PBH]], %[[HQ]] : index
// CHECK-NEXT: %[[H:.*]] = arith.remui %[[PBH]], %[[HQ]] : index
// CHECK-NEXT: %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HK]] : index
// CHECK-NEXT: %[[KH:.*]] = arith.divui %[[H]], %[[GROUP]] : index
// CHECK-NEXT: %{{.*}} = arith.subi %[[S:[^,]*]], %{{.*}} : index
// CHECK: %[[ROW0:.*]] = arith.muli
// CHECK-NEXT: %[[QPOS0:.*]] = arith.addi %{{.*}}, %[[ROW0]] : index
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[QH:.*]] = attn_block.load %[[Q]][%[[B]], %[[H]], %[[ROW0]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<2x8x?x32xf16> -> tensor<64x32xf16>
// CHECK-NEXT: %[[QF:.*]] = arith.extf %[[QH]] : tensor<64x32xf16> to tensor<64x32xf32>
// 0.5 * log2 e
// CHECK-NEXT: arith.constant 0.72134751 : f32
// CHECK: %[[DIAG:.*]] = arith.addi %[[QPOS0]], %{{.*}} : index
// CHECK-NEXT: %[[END:.*]] = arith.minsi %[[S]], %[[DIAG]] : index
// CHECK-NEXT: %[[W1:.*]] = arith.constant 15 : index
// CHECK-NEXT: %[[LO:.*]] = arith.subi %[[QPOS0]], %[[W1]] : index
// CHECK-NEXT: %[[START:.*]] = arith.maxsi %[[C0]], %[[LO]] : index
// CHECK: scf.for %[[J:.*]] = %[[START]] to %[[END]] step
// CHECK-NEXT: %[[KT:.*]] = attn_block.load %[[K]][%[[B]], %[[KH]], %[[J]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<2x2x?x32xf16> -> tensor<64x32xf16>
// CHECK-NEXT: %[[KF:.*]] = arith.extf %[[KT]] : tensor<64x32xf16> to tensor<64x32xf32>
// CHECK: attn_block.dot %{{.*}}, %[[KF]], %{{.*}} transpose_b : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
// CHECK: %[[COLS:.*]] = attn_block.broadcast %{{.*}} axis 0 : tensor<64xi64> -> tensor<64x64xi64>
// CHECK-NEXT: %[[ROWS:.*]] = attn_block.broadcast %{{.*}} axis 1 : tensor<64xi64> -> tensor<64x64xi64>
// CHECK: %[[INS:.*]] = arith.cmpi slt, %[[COLS]], %{{.*}} : tensor<64x64xi64>
// CHECK-NEXT: %[[CAUSAL:.*]] = arith.cmpi sle, %[[COLS]], %[[ROWS]] : tensor<64x64xi64>
// CHECK-NEXT: %[[V1:.*]] = arith.andi %[[INS]], %[[CAUSAL]] : tensor<64x64xi1>
// CHECK-NEXT: %[[W:.*]] = arith.constant 16 : index
// CHECK: %[[LOW:.*]] = arith.subi %[[ROWS]], %{{.*}} : tensor<64x64xi64>
// CHECK-NEXT: %[[INWIN:.*]] = arith.cmpi sgt, %[[COLS]], %[[LOW]] : tensor<64x64xi64>
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[V1]], %[[INWIN]] : tensor<64x64xi1>
// CHECK: arith.select %[[VALID]], %{{.*}}, %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK: %[[VT:.*]] = attn_block.load %[[V]][%[[B]], %[[KH]], %[[J]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<2x2x?x32xf16> -> tensor<64x32xf16>
// CHECK-NEXT: %[[VF:.*]] = arith.extf %[[VT]] : tensor<64x32xf16> to tensor<64x32xf32>
// CHECK: attn_block.dot %{{.*}}, %[[VF]], %{{.*}} : tensor<64x64xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK: %[[OF:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<64x32xf32>
// CHECK-NEXT: %[[OH:.*]] = arith.truncf %[[OF]] : tensor<64x32xf32> to tensor<64x32xf16>
// CHECK-NEXT: attn_block.store %[[OH]], %[[O]][%[[B]], %[[H]], %[[ROW0]], %[[C0]]] dims [2, 3] : tensor<64x32xf16> -> memref<2x8x?x32xf16>
// Static B and Hq: only T is a dynamic size of the output buffer.
// CHECK-LABEL: func.func @window_gqa
// CHECK: %[[OUT:.*]] = memref.alloc(%[[T:[^)]*]]) : memref<2x8x?x32xf16>
// CHECK-NEXT: %[[BM:.*]] = arith.constant 64 : index
// CHECK-NEXT: arith.ceildivui %[[T]], %[[BM]] : index
// CHECK: attn_block.launch @window_gqa_attention_kernel grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[OUT]]) : memref<2x8x?x32xf16>, memref<2x2x?x32xf16>, memref<2x2x?x32xf16>, memref<2x8x?x32xf16>
func.func @window_gqa(%q: tensor<2x8x?x32xf16>, %k: tensor<2x2x?x32xf16>, %v: tensor<2x2x?x32xf16>) -> tensor<2x8x?x32xf16> {
  %o = attn.attention %q, %k, %v mask sliding_window window 16 scale 0.5 : (tensor<2x8x?x32xf16>, tensor<2x2x?x32xf16>, tensor<2x2x?x32xf16>) -> tensor<2x8x?x32xf16>
  return %o : tensor<2x8x?x32xf16>
}

// mask none: every key tile is visited (0 to S, no min with the diagonal)
// and the only mask is j < S.
// CHECK-LABEL: func.func private @no_mask_attention_kernel
// CHECK: %{{.*}} = arith.subi %[[S:[^,]*]], %{{.*}} : index
// CHECK-NOT: arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NOT: arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[S]] step
// CHECK-NOT: arith.cmpi sle
// CHECK: %[[INS:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<64x64xi64>
// CHECK-NOT: arith.andi
// CHECK: arith.select %[[INS]], %{{.*}}, %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK-NOT: arith.cmpi sle
// CHECK-LABEL: func.func @no_mask
func.func @no_mask(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %o = attn.attention %q, %k, %v mask none : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// Causal (the default) without a window: the walk starts at 0, ends at
// min(S, S - T + row0 + 64); no window bound.
// CHECK-LABEL: func.func private @causal_attention_kernel
// CHECK-SAME: (%{{[^:]*}}: memref<1x4x16x64xf32>, %{{[^:]*}}: memref<1x4x40x64xf32>
// CHECK: %{{.*}} = arith.subi %[[S:[^,]*]], %{{.*}} : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[END:.*]] = arith.minsi %[[S]], %{{.*}} : index
// CHECK-NOT: arith.maxsi
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[END]] step
// CHECK-NOT: arith.cmpi sgt
// CHECK: arith.cmpi sle
// CHECK-NOT: arith.cmpi sgt
// CHECK-LABEL: func.func @causal
func.func @causal(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x40x64xf32>, %v: tensor<1x4x40x64xf32>) -> tensor<1x4x16x64xf32> {
  %o = attn.attention %q, %k, %v : (tensor<1x4x16x64xf32>, tensor<1x4x40x64xf32>, tensor<1x4x40x64xf32>) -> tensor<1x4x16x64xf32>
  return %o : tensor<1x4x16x64xf32>
}
