// attn-to-block on examples/rope.mlir after attn-fuse: the fused
// attn.attention (rope(1e4), rope_q_offset 0, causal) becomes a kernel
// function of memrefs, run once per program instance (query tile
// program_id 0, batch x query head program_id 1), and its launch. The host
// side builds the RoPE tables once per launch, [P, R/2] f32 holding
// cos/sin(p * theta^(-2i/R)) computed in f64, for every position p a query
// or key takes, and passes them to the kernel after q, k, v (and g). The
// kernel computes no angle: it loads [64, R/2] cos/sin tiles at the q tile's
// positions once, and at each k tile's inside the key walk, and rotates the
// tile with attn_block.rope. Scores are in base 2 (scale * log2 e folded
// into q: 1/8 * 1.4427 = 0.180336878), the online softmax uses exp2 and
// carries m, l, acc through the scf.for.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-to-block \
// RUN:   | FileCheck %s --implicit-check-not=attn.attention \
// RUN:       --implicit-check-not=attn.rope
// No cos/sin (nor the exp of the frequencies) inside any kernel.
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-to-block \
// RUN:   | FileCheck %s --check-prefix=KERNEL
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=OFFK
// Explicit offsets: q rows rotate at rope_q_offset + i (row0 + (9 - 3) + 3);
// without rope_q_offset at rope_offset + S - T + i; k rows at rope_offset + j.
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func private @main_attention_kernel
// The cos/sin tables ([P, R/2], R = D = 64) come after v, before the output.
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x?x?x64xf32>, %[[K:[^:]*]]: memref<?x?x?x64xf32>, %[[V:[^:]*]]: memref<?x?x?x64xf32>, %[[COS:[^:]*]]: memref<?x32xf32>, %[[SIN:[^:]*]]: memref<?x32xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf32>)
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
// The tables start at position TSTART = min(rope_offset, first query).
// CHECK: %[[TSTART:.*]] = arith.minsi
// The q tile: rows row0.. of (b, h), all 64 columns.
// CHECK: %[[QT:.*]] = attn_block.load %[[Q]][%[[B]], %[[H]], %[[ROW0]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
// rope_q_offset 0: q's rotation starts at row0 (+ 0 - 0, + 0), not at S - T + row0.
// CHECK: %[[QS0:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK: %[[QS1:.*]] = arith.addi %[[QS0]], %{{.*}} : index
// CHECK-NEXT: %[[QS:.*]] = arith.subi %[[QS1]], %[[TSTART]] : index
// The q tile's cos/sin tiles: table rows QS.., all R/2 = 32 columns.
// CHECK-NEXT: %[[QCC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[QCOS:.*]] = attn_block.load %[[COS]][%[[QS]], %[[QCC]]] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[QSC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[QSIN:.*]] = attn_block.load %[[SIN]][%[[QS]], %[[QSC]]] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[QR:.*]] = attn_block.rope %[[QT]], %[[QCOS]], %[[QSIN]] style half : tensor<64x64xf32>, tensor<64x32xf32>
// CHECK-NEXT: %[[SCALE:.*]] = arith.constant 0.180336878 : f32
// CHECK: %[[QSCALED:.*]] = arith.mulf %[[QR]], %{{.*}} : tensor<64x64xf32>
// CHECK-NEXT: %[[ROWS:.*]] = attn_block.iota %[[QPOS0]] : tensor<64xi64>
// Causal tile skipping: the walk ends at min(S, S - T + row0 + 64).
// CHECK: %[[DIAG:.*]] = arith.addi %[[QPOS0]], %{{.*}} : index
// CHECK-NEXT: %[[END:.*]] = arith.minsi %[[S]], %[[DIAG]] : index
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[J:.*]] = %[[C0]] to %[[END]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
// GQA: k and v read head h / (Hq / Hk).
// CHECK-NEXT: %[[KT:.*]] = attn_block.load %[[K]][%[[B]], %[[KH]], %[[J]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<64x64xf32>
// CHECK: %[[KS1:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[KS:.*]] = arith.subi %[[KS1]], %[[TSTART]] : index
// The k tile's cos/sin tiles, loaded per key tile: table rows KS...
// CHECK-NEXT: %[[KCC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[KCOS:.*]] = attn_block.load %[[COS]][%[[KS]], %[[KCC]]] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[KSC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[KSIN:.*]] = attn_block.load %[[SIN]][%[[KS]], %[[KSC]]] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[KR:.*]] = attn_block.rope %[[KT]], %[[KCOS]], %[[KSIN]] style half : tensor<64x64xf32>, tensor<64x32xf32>
// CHECK: %[[SC:.*]] = attn_block.dot %[[QSCALED]], %[[KR]], %{{.*}} transpose_b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
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

// The host side: the RoPE tables, buffers in, a fresh output buffer, one
// launch over grid (ceil(T / 64), B * Hq), the output buffer back as a
// tensor.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[QA:[^:]*]]: tensor<?x?x?x64xf32>, %[[KA:[^:]*]]: tensor<?x?x?x64xf32>, %[[VA:[^:]*]]: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// The tables have one row per position: max(S + rope_offset,
// rope_q_offset + T) = max(S + 0, 0 + T).
// CHECK-NEXT: %{{.*}} = arith.constant 2 : index
// CHECK-NEXT: %[[TT:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK-NEXT: %{{.*}} = arith.constant 2 : index
// CHECK-NEXT: %[[ST:.*]] = tensor.dim %[[KA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK-NEXT: %[[KOFF:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[KEND:.*]] = arith.addi %[[ST]], %[[KOFF]] : index
// CHECK-NEXT: %[[QOFF:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[QEND:.*]] = arith.addi %[[QOFF]], %[[TT]] : index
// CHECK: %[[START:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]] = arith.maxsi %[[KEND]], %[[QEND]] : index
// CHECK-NEXT: %[[NPOS:.*]] = arith.subi %[[LAST]], %[[START]] : index
// cos(p * theta^(-2i/R)) = cos(p * exp(i * -2 ln(1e4) / 64)), all in f64,
// rounded to f32 at the end.
// CHECK-NEXT: %[[CT:.*]] = tensor.generate %[[NPOS]] {
// CHECK-NEXT: ^bb0(%[[P:[^:]*]]: index, %[[I:[^:]*]]: index):
// CHECK-NEXT: %[[E:.*]] = arith.constant -0.28782313662425574 : f64
// CHECK-NEXT: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[IF:.*]] = arith.sitofp %[[I64]] : i64 to f64
// CHECK-NEXT: %[[IE:.*]] = arith.mulf %[[IF]], %[[E]] : f64
// Row r of the table is position START + r.
// CHECK-NEXT: %[[POS:.*]] = arith.addi %[[P]], %[[START]] : index
// CHECK-NEXT: %[[FREQ:.*]] = math.exp %[[IE]] : f64
// CHECK-NEXT: %[[P64:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK-NEXT: %[[PF:.*]] = arith.sitofp %[[P64]] : i64 to f64
// CHECK-NEXT: %[[ANG:.*]] = arith.mulf %[[PF]], %[[FREQ]] : f64
// CHECK-NEXT: %[[CV:.*]] = math.cos %[[ANG]] : f64
// CHECK-NEXT: %[[CF:.*]] = arith.truncf %[[CV]] : f64 to f32
// CHECK-NEXT: tensor.yield %[[CF]] : f32
// CHECK-NEXT: } : tensor<?x32xf32>
// The sin table: the same angles.
// CHECK-NEXT: %[[STB:.*]] = tensor.generate %[[NPOS]] {
// CHECK-NEXT: ^bb0(%[[SP:[^:]*]]: index, %[[SI:[^:]*]]: index):
// CHECK-NEXT: %[[SE:.*]] = arith.constant -0.28782313662425574 : f64
// CHECK-NEXT: %[[SI64:.*]] = arith.index_cast %[[SI]] : index to i64
// CHECK-NEXT: %[[SIF:.*]] = arith.sitofp %[[SI64]] : i64 to f64
// CHECK-NEXT: %[[SIE:.*]] = arith.mulf %[[SIF]], %[[SE]] : f64
// CHECK-NEXT: %[[SPOS:.*]] = arith.addi %[[SP]], %[[START]] : index
// CHECK-NEXT: %[[SFREQ:.*]] = math.exp %[[SIE]] : f64
// CHECK-NEXT: %[[SP64:.*]] = arith.index_cast %[[SPOS]] : index to i64
// CHECK-NEXT: %[[SPF:.*]] = arith.sitofp %[[SP64]] : i64 to f64
// CHECK-NEXT: %[[SANG:.*]] = arith.mulf %[[SPF]], %[[SFREQ]] : f64
// CHECK-NEXT: %[[SV:.*]] = math.sin %[[SANG]] : f64
// CHECK-NEXT: %[[SF:.*]] = arith.truncf %[[SV]] : f64 to f32
// CHECK-NEXT: tensor.yield %[[SF]] : f32
// CHECK-NEXT: } : tensor<?x32xf32>
// CHECK-NEXT: %[[QB:.*]] = bufferization.to_buffer %[[QA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK-NEXT: %[[KB:.*]] = bufferization.to_buffer %[[KA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK-NEXT: %[[VB:.*]] = bufferization.to_buffer %[[VA]] read_only : tensor<?x?x?x64xf32> to memref<?x?x?x64xf32>
// CHECK-NEXT: %[[CB:.*]] = bufferization.to_buffer %[[CT]] read_only : tensor<?x32xf32> to memref<?x32xf32>
// CHECK-NEXT: %[[SB:.*]] = bufferization.to_buffer %[[STB]] read_only : tensor<?x32xf32> to memref<?x32xf32>
// Built once: no other table (nor angle) on the way to the launch.
// CHECK-NOT: tensor.generate
// CHECK-NOT: math.
// CHECK: %[[BD:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK: %[[HD:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK: %[[TD:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<?x?x?x64xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc(%[[BD]], %[[HD]], %[[TD]]) : memref<?x?x?x64xf32>
// CHECK-NEXT: %[[BM:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[GX:.*]] = arith.ceildivui %[[TD]], %[[BM]] : index
// CHECK-NEXT: %[[GY:.*]] = arith.muli %[[BD]], %[[HD]] : index
// CHECK-NEXT: attn_block.launch @main_attention_kernel grid(%[[GX]], %[[GY]]) args(%[[QB]], %[[KB]], %[[VB]], %[[CB]], %[[SB]], %[[OUT]]) : memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x?x?x64xf32>
// CHECK-NEXT: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x?x64xf32> to tensor<?x?x?x64xf32>
// CHECK-NEXT: return %[[R]] : tensor<?x?x?x64xf32>

// KERNEL-LABEL: func.func private @main_attention_kernel
// KERNEL-NOT: math.{{(cos|sin|exp) }}
// KERNEL: attn_block.rope
// KERNEL-NOT: math.{{(cos|sin|exp) }}
// KERNEL: scf.for
// KERNEL-NOT: math.{{(cos|sin|exp) }}
// KERNEL: attn_block.rope
// KERNEL-NOT: math.{{(cos|sin|exp) }}
// KERNEL: return
// KERNEL-NEXT: }

// OFFK-LABEL: func.func private @q_offset_attention_kernel
// OFFK-NOT: math.{{(cos|sin|exp) }}
// OFFK: func.func @q_offset
// OFFK: math.cos
// OFFK: math.sin
// OFFK-LABEL: func.func private @implicit_attention_kernel
// OFFK-NOT: math.{{(cos|sin|exp) }}
// OFFK: func.func @implicit
// OFFK: math.cos
// OFFK: math.sin

// rope_dim 16 of D = 32: [P, 8] tables; features 16.. are not rotated.
// OFF-LABEL: func.func private @q_offset_attention_kernel
// OFF-SAME: %[[COS:[^:]*]]: memref<?x8xf32>, %[[SIN:[^:]*]]: memref<?x8xf32>, %{{[^:]*}}: memref<1x4x?x32xf32>)
// OFF: %[[ROW0:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// OFF: %[[QT:.*]] = attn_block.load
// OFF-NEXT: %[[D:.*]] = arith.constant 6 : index
// OFF-NEXT: %[[QS0:.*]] = arith.addi %[[ROW0]], %[[D]] : index
// OFF-NEXT: %[[OFF:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[QS1:.*]] = arith.addi %[[QS0]], %[[OFF]] : index
// OFF-NEXT: %[[QS:.*]] = arith.subi %[[QS1]], %{{.*}} : index
// OFF-NEXT: arith.constant 0 : index
// OFF-NEXT: %[[QC:.*]] = attn_block.load %[[COS]][%[[QS]], %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x8xf32> -> tensor<64x8xf32>
// OFF-NEXT: arith.constant 0 : index
// OFF-NEXT: %[[QSN:.*]] = attn_block.load %[[SIN]][%[[QS]], %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x8xf32> -> tensor<64x8xf32>
// OFF-NEXT: attn_block.rope %[[QT]], %[[QC]], %[[QSN]] style interleaved : tensor<64x32xf32>, tensor<64x8xf32>
// OFF: scf.for %[[J:[^ ]*]] =
// OFF-NEXT: %[[KT:.*]] = attn_block.load
// OFF-NEXT: %[[KOFF:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[KS1:.*]] = arith.addi %[[J]], %[[KOFF]] : index
// OFF-NEXT: %[[KS:.*]] = arith.subi %[[KS1]], %{{.*}} : index
// OFF-NEXT: arith.constant 0 : index
// OFF-NEXT: %[[KC:.*]] = attn_block.load %[[COS]][%[[KS]], %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x8xf32> -> tensor<64x8xf32>
// OFF-NEXT: arith.constant 0 : index
// OFF-NEXT: %[[KSN:.*]] = attn_block.load %[[SIN]][%[[KS]], %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x8xf32> -> tensor<64x8xf32>
// OFF-NEXT: attn_block.rope %[[KT]], %[[KC]], %[[KSN]] style interleaved : tensor<64x32xf32>, tensor<64x8xf32>
// The tables cover max(S + 3, 9 + T) positions; -2 ln(5e5) / 16 =
// -1.6402954.
// OFF-LABEL: func.func @q_offset
// OFF-SAME: (%[[QA:[^:]*]]: tensor<1x4x?x32xf32>, %[[KA:[^:]*]]: tensor<1x4x?x32xf32>,
// OFF: %[[T:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<1x4x?x32xf32>
// OFF: %[[S:.*]] = tensor.dim %[[KA]], %{{.*}} : tensor<1x4x?x32xf32>
// OFF-NEXT: %[[C3:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[KEND:.*]] = arith.addi %[[S]], %[[C3]] : index
// OFF-NEXT: %[[C9:.*]] = arith.constant 9 : index
// OFF-NEXT: %[[QEND:.*]] = arith.addi %[[C9]], %[[T]] : index
// OFF: %[[TS:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// OFF-NEXT: %[[LAST:.*]] = arith.maxsi %[[KEND]], %[[QEND]] : index
// OFF-NEXT: %[[N:.*]] = arith.subi %[[LAST]], %[[TS]] : index
// OFF-NEXT: %[[CT:.*]] = tensor.generate %[[N]] {
// OFF: arith.constant -1.640295422175541 : f64
// OFF: math.cos %{{.*}} : f64
// OFF: } : tensor<?x8xf32>
// OFF-NEXT: %[[STB:.*]] = tensor.generate %[[N]] {
// OFF: arith.constant -1.640295422175541 : f64
// OFF: math.sin %{{.*}} : f64
// OFF: } : tensor<?x8xf32>
// OFF: %[[CB:.*]] = bufferization.to_buffer %[[CT]] read_only : tensor<?x8xf32> to memref<?x8xf32>
// OFF-NEXT: %[[SB:.*]] = bufferization.to_buffer %[[STB]] read_only : tensor<?x8xf32> to memref<?x8xf32>
// OFF: attn_block.launch @q_offset_attention_kernel grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[CB]], %[[SB]], %{{.*}}) : memref<1x4x?x32xf32>, memref<1x4x?x32xf32>, memref<1x4x?x32xf32>, memref<?x8xf32>, memref<?x8xf32>, memref<1x4x?x32xf32>
func.func @q_offset(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>, %v: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %o = attn.attention %q, %k, %v rope(5.000000e+05) rope_style interleaved rope_dim 16 rope_offset 3 rope_q_offset 9 : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}

// OFF-LABEL: func.func private @implicit_attention_kernel
// OFF-SAME: %[[COS:[^:]*]]: memref<?x16xf32>, %[[SIN:[^:]*]]: memref<?x16xf32>, %{{[^:]*}}: memref<1x4x?x32xf32>)
// OFF: %[[SMT:.*]] = arith.subi
// OFF-NEXT: %{{.*}} = arith.constant 64 : index
// OFF-NEXT: %[[ROW0:.*]] = arith.muli
// OFF-NEXT: %[[QPOS0:.*]] = arith.addi %[[SMT]], %[[ROW0]] : index
// OFF: %[[QT:.*]] = attn_block.load
// OFF-NEXT: %[[OFF:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[QS1:.*]] = arith.addi %[[QPOS0]], %[[OFF]] : index
// OFF-NEXT: %[[QS:.*]] = arith.subi %[[QS1]], %{{.*}} : index
// OFF-NEXT: arith.constant 0 : index
// OFF-NEXT: %[[QC:.*]] = attn_block.load %[[COS]][%[[QS]], %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x16xf32> -> tensor<64x16xf32>
// OFF-NEXT: arith.constant 0 : index
// OFF-NEXT: %[[QSN:.*]] = attn_block.load %[[SIN]][%[[QS]], %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x16xf32> -> tensor<64x16xf32>
// OFF-NEXT: attn_block.rope %[[QT]], %[[QC]], %[[QSN]] style half : tensor<64x32xf32>, tensor<64x16xf32>
// Without rope_q_offset queries start at S + 3 - T: max(S + 3, S + 3 - T + T)
// positions; -2 ln(1e4) / 32 = -0.5756463.
// OFF-LABEL: func.func @implicit
// OFF-SAME: (%[[QA:[^:]*]]: tensor<1x4x?x32xf32>, %[[KA:[^:]*]]: tensor<1x4x?x32xf32>,
// OFF: %[[T:.*]] = tensor.dim %[[QA]], %{{.*}} : tensor<1x4x?x32xf32>
// OFF: %[[S:.*]] = tensor.dim %[[KA]], %{{.*}} : tensor<1x4x?x32xf32>
// OFF-NEXT: %[[C3:.*]] = arith.constant 3 : index
// OFF-NEXT: %[[KEND:.*]] = arith.addi %[[S]], %[[C3]] : index
// OFF-NEXT: %[[QBASE:.*]] = arith.subi %[[KEND]], %[[T]] : index
// OFF-NEXT: %[[QEND:.*]] = arith.addi %[[QBASE]], %[[T]] : index
// OFF: %[[TS:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// OFF-NEXT: %[[LAST:.*]] = arith.maxsi %[[KEND]], %[[QEND]] : index
// OFF-NEXT: %[[N:.*]] = arith.subi %[[LAST]], %[[TS]] : index
// OFF-NEXT: %[[CT:.*]] = tensor.generate %[[N]] {
// OFF: arith.constant -0.57564627324851148 : f64
// OFF: math.cos %{{.*}} : f64
// OFF: } : tensor<?x16xf32>
// OFF-NEXT: %[[STB:.*]] = tensor.generate %[[N]] {
// OFF: math.sin %{{.*}} : f64
// OFF: } : tensor<?x16xf32>
// OFF: %[[CB:.*]] = bufferization.to_buffer %[[CT]] read_only
// OFF-NEXT: %[[SB:.*]] = bufferization.to_buffer %[[STB]] read_only
// OFF: attn_block.launch @implicit_attention_kernel grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[CB]], %[[SB]], %{{.*}})
func.func @implicit(%q: tensor<1x4x?x32xf32>, %k: tensor<1x4x?x32xf32>, %v: tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_offset 3 : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}
