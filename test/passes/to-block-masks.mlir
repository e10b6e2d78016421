// attn-to-block: masks, causal tile skipping and GQA in the kernel.
// RUN: attn-opt %s --attn-to-block | FileCheck %s --implicit-check-not=attn.attention

// the walk starts at max(0, S - T + row0 - (W - 1)) and ends at the diagonal;
// a key is visible when j < S, j <= p_i and j > p_i - W. f16 tiles are
// widened to f32 and the output narrowed back.
// 0.5 * log2 e
// The bounds: the walk from max(0, qpos0 - 15) to min(S, qpos0 + 64);
// per-score masks only on the tiles past the last clean one or before the
// window's low tile (scf.if): j < S, j <= p_i, j > p_i - 16.
// CHECK-LABEL: func.func private @window_gqa_attention_kernel
// CHECK-SAME: (%[[Q:[^:]*]]: memref<2x8x?x32xf16>, %[[K:[^:]*]]: memref<2x2x?x32xf16>, %[[V:[^:]*]]: memref<2x2x?x32xf16>, %[[O:[^:]*]]: memref<2x8x?x32xf16>)
// CHECK: %[[PBH:.*]] = attn_block.program_id 1
// CHECK: %[[HQ:.*]] = memref.dim %[[Q]], %{{.*}} : memref<2x8x?x32xf16>
// CHECK: %[[HK:.*]] = memref.dim %[[K]], %{{.*}} : memref<2x2x?x32xf16>
// CHECK: %[[B:.*]] = arith.divui %[[PBH]], %[[HQ]] : index
// CHECK-NEXT: %[[H:.*]] = arith.remui %[[PBH]], %[[HQ]] : index
// CHECK-NEXT: %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HK]] : index
// CHECK-NEXT: %[[KH:.*]] = arith.divui %[[H]], %[[GROUP]] : index
// CHECK: %[[END:.*]] = arith.minsi
// CHECK: arith.constant 15 : index
// CHECK: %[[START:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK: attn_block.async_copy %[[K]][%[[B]], %[[KH]], %[[START]]
// CHECK: scf.for %{{.*}} = %[[START]] to %[[END]] step
// CHECK: scf.if
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sle
// CHECK: arith.constant 16 : index
// CHECK: arith.cmpi sgt
// 0.5 * log2 e
// CHECK: arith.constant 0.72134751 : f32
// f16 operands, f32 accumulators; the output narrowed back.
// CHECK: %[[OUT:.*]] = arith.truncf %{{.*}} : tensor<64x32xf32, {{.*}}> to tensor<64x32xf16, {{.*}}>
// CHECK: attn_block.store %[[OUT]], %[[O]][%[[B]], %[[H]],
// Static B and Hq: only T is a dynamic size of the output buffer.
// CHECK-LABEL: func.func @window_gqa(
// CHECK: memref.alloc(%{{[^,]*}}) : memref<2x8x?x32xf16>
// CHECK: attn_block.launch @window_gqa_attention_kernel
func.func @window_gqa(%q: tensor<2x8x?x32xf16>, %k: tensor<2x2x?x32xf16>, %v: tensor<2x2x?x32xf16>) -> tensor<2x8x?x32xf16> {
  %o = attn.attention %q, %k, %v mask sliding_window window 16 scale 0.5 : (tensor<2x8x?x32xf16>, tensor<2x2x?x32xf16>, tensor<2x2x?x32xf16>) -> tensor<2x8x?x32xf16>
  return %o : tensor<2x8x?x32xf16>
}

// mask none: every key tile is visited (0 to S, no min with the diagonal)
// and the only mask is j < S.
// CHECK-LABEL: func.func private @no_mask_attention_kernel
// CHECK-SAME: (%{{[^:]*}}: memref<?x?x?x64xf32>, %[[K:[^:]*]]: memref<?x?x?x64xf32>
// CHECK-NOT: arith.minsi
// CHECK: %[[S:.*]] = memref.dim %[[K]], %c2{{(_[0-9]+)?}} : memref<?x?x?x64xf32>
// CHECK-NOT: arith.minsi
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[S]] step
// CHECK: scf.if
// CHECK: arith.cmpi slt
// CHECK-NOT: arith.cmpi sle
// CHECK: scf.yield
func.func @no_mask(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %o = attn.attention %q, %k, %v mask none : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// min(S, S - T + row0 + 64); no window bound.
// CHECK-LABEL: func.func private @causal_attention_kernel
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[END:.*]] = arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[END]] step
// CHECK: arith.cmpi sle
func.func @causal(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x40x64xf32>, %v: tensor<1x4x40x64xf32>) -> tensor<1x4x16x64xf32> {
  %o = attn.attention %q, %k, %v : (tensor<1x4x16x64xf32>, tensor<1x4x40x64xf32>, tensor<1x4x40x64xf32>) -> tensor<1x4x16x64xf32>
  return %o : tensor<1x4x16x64xf32>
}
