// attn-to-block on examples/rope.mlir after attn-fuse: the fused
// attn.attention (rope(1e4), rope_q_offset 0, causal) becomes a kernel
// function of memrefs, run once per program instance (query tile
// program_id 0, batch x query head program_id 1), and its launch. RoPE is
// applied to the q tile once and to each k tile inside the key walk; scores
// are in base 2 (scale * log2 e folded into q: 1/8 * 1.4427 = 0.180336878),
// the online softmax uses exp2 and carries m, l, acc through the scf.for.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-to-block \
// RUN:   | FileCheck %s --implicit-check-not=attn.attention \
// RUN:       --implicit-check-not=attn.rope
// Explicit offsets: q rows rotate at rope_q_offset + i (row0 + (9 - 3) + 3);
// without rope_q_offset at rope_offset + S - T + i; k rows at rope_offset + j.
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func private @main_attention_kernel
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x?x?x64xf32>, %[[K:[^:]*]]: memref<?x?x?x64xf32>, %[[V:[^:]*]]: memref<?x?x?x64xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf32>)
// CHECK-SAME: attributes {attn_block.kernel}
// CHECK-NEXT: %[[PM:.*]] = attn_block.program_id 0
// CHECK-NEXT: %[[PBH:.*]] = attn_block.program_id 1
// CHECK: %[[HQ:.*]] = memref.dim %[[Q]], %{{.*}} : memref<?x?x?x64xf32>
// CHECK: %[[HK:.*]] = memref.dim %[[K]], %{{.*}} : memref<?x?x?x64xf32>
// CHECK: %[[T:.*]] = memref.dim %[[Q]], %{{.*}} : memref<?x?x?x64xf32>
// CHECK: %[[S:.*]] = memref.dim %[[K]], %{{.*}} : memref<?x?x?x64xf32>
// CHECK-NEXT: %[[B:.*]] = arith.divui %[[PBH]], %[[HQ]] : index
// CHECK-NEXT: %[[H:.*]] = arith.remui %[[PBH]], %[[HQ]] : index
// CHECK-NEXT: %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HK]] : index
// CHECK-NEXT: %[[KH:.*]] = arith.divui %[[H]], %[[GROUP]] : index
// CHECK-NEXT: %[[SMT:.*]] = arith.subi %[[S]], %[[T]] : index
// CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[ROW0:.*]] = arith.muli %[[PM]], %[[C64]] : index
// CHECK-NEXT: %[[QPOS0:.*]] = arith.addi %[[SMT]], %[[ROW0]] : index
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// The q tile: rows row0.. of (b, h), all 64 columns.
// CHECK-NEXT: %[[QT:.*]] = attn_block.load %[[Q]][%[[B]], %[[H]], %[[ROW0]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
// rope_q_offset 0: q's rotation starts at row0 (+ 0 - 0, + 0), not at S - T + row0.
// CHECK: %[[QS0:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK: %[[QS:.*]] = arith.addi %[[QS0]], %{{.*}} : index
// CHECK-NEXT: %[[QR:.*]] = attn_block.rope %[[QT]], %[[QS]] style half theta 1.000000e+04 rotary_dim 64 : tensor<64x64xf32>
// CHECK-NEXT: %[[SCALE:.*]] = arith.constant 0.180336878 : f32
// CHECK: %[[QSC:.*]] = arith.mulf %[[QR]], %{{.*}} : tensor<64x64xf32>
// CHECK-NEXT: %[[ROWS:.*]] = attn_block.iota %[[QPOS0]] : tensor<64xi64>
// Causal tile skipping: the walk ends at min(S, S - T + row0 + 64).
// CHECK: %[[DIAG:.*]] = arith.addi %[[QPOS0]], %{{.*}} : index
// CHECK-NEXT: %[[END:.*]] = arith.minsi %[[S]], %[[DIAG]] : index
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[J:.*]] = %[[C0]] to %[[END]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
// GQA: k and v read head h / (Hq / Hk).
// CHECK-NEXT: %[[KT:.*]] = attn_block.load %[[K]][%[[B]], %[[KH]], %[[J]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
// CHECK: %[[KS:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[KR:.*]] = attn_block.rope %[[KT]], %[[KS]] style half theta 1.000000e+04 rotary_dim 64 : tensor<64x64xf32>
// CHECK: %[[SC:.*]] = attn_block.dot %[[QSC]], %[[KR]], %{{.*}} transpose_b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
// Masks: key index < S and key <= query position.
// CHECK-NEXT: %[[COL:.*]] = attn_block.iota %[[J]] : tensor<64xi64>
// CHECK-NEXT: %[[COLS:.*]] = attn_block.broadcast %[[COL]] axis 0 : tensor<64xi64> -> tensor<64x64xi64>
// CHECK-NEXT: %[[ROWST:.*]] = attn_block.broadcast %[[ROWS]] axis 1 : tensor<64xi64> -> tensor<64x64xi64>
// CHECK: %[[INS:.*]] = arith.cmpi slt, %[[COLS]], %{{.*}} : tensor<64x64xi64>
// CHECK-NEXT: %[[CAUSAL:.*]] = arith.cmpi sle, %[[COLS]], %[[ROWST]] : tensor<64x64xi64>
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[INS]], %[[CAUSAL]] : tensor<64x64xi1>
// CHECK: %[[SM:.*]] = arith.select %[[VALID]], %[[SC]], %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// Online softmax in base 2.
// CHECK-NEXT: %[[RMAX:.*]] = attn_block.reduce max %[[SM]] axis 1 : tensor<64x64xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[MNEW:.*]] = arith.maximumf %[[M]], %[[RMAX]] : tensor<64xf32>
// CHECK: %[[MSAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[MNEW]] : tensor<64xi1>, tensor<64xf32>
// CHECK-NEXT: %[[DM:.*]] = arith.subf %[[M]], %[[MSAFE]] : tensor<64xf32>
// CHECK-NEXT: %[[ALPHA:.*]] = math.exp2 %[[DM]] : tensor<64xf32>
// CHECK-NEXT: %[[MB:.*]] = attn_block.broadcast %[[MSAFE]] axis 1 : tensor<64xf32> -> tensor<64x64xf32>
// CHECK-NEXT: %[[SHIFT:.*]] = arith.subf %[[SM]], %[[MB]] : tensor<64x64xf32>
// CHECK-NEXT: %[[P:.*]] = math.exp2 %[[SHIFT]] : tensor<64x64xf32>
// CHECK-NEXT: %[[RSUM:.*]] = attn_block.reduce sum %[[P]] axis 1 : tensor<64x64xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[LA:.*]] = arith.mulf %[[L]], %[[ALPHA]] : tensor<64xf32>
// CHECK-NEXT: %[[LNEW:.*]] = arith.addf %[[LA]], %[[RSUM]] : tensor<64xf32>
// CHECK-NEXT: %[[VT:.*]] = attn_block.load %[[V]][%[[B]], %[[KH]], %[[J]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
// CHECK-NEXT: %[[AB:.*]] = attn_block.broadcast %[[ALPHA]] axis 1 : tensor<64xf32> -> tensor<64x64xf32>
// CHECK-NEXT: %[[ACCS:.*]] = arith.mulf %[[ACC]], %[[AB]] : tensor<64x64xf32>
// CHECK-NEXT: %[[ACCNEW:.*]] = attn_block.dot %[[P]], %[[VT]], %[[ACCS]] : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK-NEXT: scf.yield %[[MNEW]], %[[LNEW]], %[[ACCNEW]] : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
// CHECK-NEXT: }
// o = acc / l (0 where l == 0), stored at the q tile's place.
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[LOOP]]#1 : tensor<64xf32>
// CHECK: %[[OT:.*]] = arith.mulf %[[LOOP]]#2, %{{.*}} : tensor<64x64xf32>
// CHECK-NEXT: attn_block.store %[[OT]], %[[O]][%[[B]], %[[H]], %[[ROW0]], %[[C0]]] dims [2, 3] : tensor<64x64xf32> -> memref<?x?x?x64xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }

// The host side: buffers in, a fresh output buffer, one launch over
// grid (ceil(T / 64), B * Hq), the output buffer back as a tensor.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[QA:[^:]*]]: tensor<?x?x?x64xf32>, %[[KA:[^:]*]]: tensor<?x?x?x64xf32>, %[[VA:[^:]*]]: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// CHECK-NEXT: %[[QB:.*]] = bufferization.to_buffer %[[QA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK-NEXT: %[[KB:.*]] = bufferization.to_buffer %[[KA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK-NEXT: %[[VB:.*]] = bufferization.to_buffer %[[VA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK: %[[BD:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK: %[[HD:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK: %[[TD:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc(%[[BD]], %[[HD]], %[[TD]]) : memref<?x?x?x64xf32>
// CHECK-NEXT: %[[BM:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[GX:.*]] = arith.ceildivui %[[TD]], %[[BM]] : index
// CHECK-NEXT: %[[GY:.*]] = arith.muli %[[BD]], %[[HD]] : index
// CHECK-NEXT: attn_block.launch @main_attention_kernel grid(%[[GX]], %[[GY]]) args(%[[QB]], %[[KB]], %[[VB]], %[[OUT]]) : memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>
// CHECK-NEXT: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x?x64xf32> to tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[R]] : tensor<?x?x?x64xf32>

// OFF-LABEL: func.func private @q_offset_attention_kernel
// OFF: %[[ROW0:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// OFF: %[[QT:.*]] = attn_block.load
// OFF-NEXT: %[[D:.*]] = arith.constant 6 : index
// OFF-NEXT: %[[QS0:.*]] = arith.addi %[[ROW0]], %[[D]] : index
// OFF-NEXT: %[[OFF:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[QS:.*]] = arith.addi %[[QS0]], %[[OFF]] : index
// OFF-NEXT: attn_block.rope %[[QT]], %[[QS]] style interleaved theta 5.000000e+05 rotary_dim 16 : tensor<64x32xf32>
// OFF: scf.for %[[J:[^ ]*]] =
// OFF-NEXT: %[[KT:.*]] = attn_block.load
// OFF-NEXT: %[[KOFF:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[KS:.*]] = arith.addi %[[J]], %[[KOFF]] : index
// OFF-NEXT: attn_block.rope %[[KT]], %[[KS]] style interleaved theta 5.000000e+05 rotary_dim 16 : tensor<64x32xf32>
// OFF-LABEL: func.func @q_offset
// OFF: attn_block.launch @q_offset_attention_kernel
func.func @q_offset(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>, %v: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %o = attn.attention %q, %k, %v rope(5.000000e+05) rope_style interleaved rope_dim 16 rope_offset 3 rope_q_offset 9 : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}

// OFF-LABEL: func.func private @implicit_attention_kernel
// OFF: %[[SMT:.*]] = arith.subi
// OFF-NEXT: %{{.*}} = arith.constant 64 : index
// OFF-NEXT: %[[ROW0:.*]] = arith.muli
// OFF-NEXT: %[[QPOS0:.*]] = arith.addi %[[SMT]], %[[ROW0]] : index
// OFF: %[[QT:.*]] = attn_block.load
// OFF-NEXT: %[[OFF:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[QS:.*]] = arith.addi %[[QPOS0]], %[[OFF]] : index
// OFF-NEXT: attn_block.rope %[[QT]], %[[QS]] style half theta 1.000000e+04 rotary_dim 32 : tensor<64x32xf32>
// OFF-LABEL: func.func @implicit
func.func @implicit(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>, %v: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_offset 3 : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}
