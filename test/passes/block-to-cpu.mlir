// attn-block-to-cpu, the CPU backend of the block program, on the CPU-form
// flash kernels of examples/rope.mlir and examples/fox.mlir
// (Inputs/flash-cpu-form-{rope,fox}.mlir: what attn-to-block made of them
// before the flash kernel had one form, at commit 804e436; the MTA CPU form
// still states its kernels this way): program
// ids become two trailing index arguments of the kernel, the launch an
// scf.parallel over the grid calling it; tile ops become vector loops (dot:
// per accumulator row, a vector FMA over k after a linalg.transpose for
// transpose_b; row reductions: one vector.reduction per row), exp2 becomes
// element-wise arithmetic, linalg ops
// (broadcast, column reductions), vector loops (half-style rope) or
// tensor.generate / scf loops (masked loads, interleaved rope, iota, scan,
// masked stores). No attn_block op is left (the
// kernel keeps its attn_block.kernel attribute). RoPE reads the cos/sin
// tiles loaded from the tables the host builds (in f64, once per launch):
// the kernel has no math.cos / math.sin.
// RUN: attn-opt %S/Inputs/flash-cpu-form-rope.mlir \
// RUN:   --attn-block-to-cpu \
// RUN:   | FileCheck %s --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|rope|launch)}}' \
// RUN:       --implicit-check-not=attn.attention
// RUN: attn-opt %S/Inputs/flash-cpu-form-rope.mlir \
// RUN:   --attn-block-to-cpu | FileCheck %s --check-prefix=TRIG
// RUN: attn-opt %S/Inputs/flash-cpu-form-fox.mlir \
// RUN:   --attn-block-to-cpu \
// RUN:   | FileCheck %s --check-prefix=FOX \
// RUN:       --implicit-check-not='attn_block.{{(program_id|load|store|dot|reduce|broadcast|scan|iota|rope|launch)}}' \
// RUN:       --implicit-check-not=attn.attention

// CHECK-LABEL: func.func private @main_attention_kernel
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x?x?x64xf32>, %[[K:[^:]*]]: memref<?x?x?x64xf32>, %[[V:[^:]*]]: memref<?x?x?x64xf32>, %[[COS:[^:]*]]: memref<?x32xf32>, %[[SIN:[^:]*]]: memref<?x32xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf32>, %[[PID0:[^:]*]]: index, %[[PID1:[^:]*]]: index)
// CHECK-SAME: attributes {attn_block.kernel}
// (batch, head) from program id 1, the query tile from program id 0.
// CHECK: %[[B:.*]] = arith.divui %[[PID1]], %{{.*}} : index
// CHECK-NEXT: %[[H:.*]] = arith.remui %[[PID1]], %{{.*}} : index
// CHECK: %[[ROW0:.*]] = arith.muli %[[PID0]], %{{.*}} : index
// The q load: a tensor.generate reading in-bounds elements, 0 elsewhere.
// CHECK: %[[QT:.*]] = tensor.generate
// CHECK-NEXT: ^bb0(%[[R:.*]]: index, %[[C:.*]]: index):
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[ROW0]], %[[R]] : index
// CHECK-NEXT: %[[TLEN:.*]] = memref.dim %[[Q]], %{{.*}} : memref<?x?x?x64xf32>
// CHECK-NEXT: %[[INR:.*]] = arith.cmpi ult, %[[ROW]], %[[TLEN]] : index
// CHECK-NEXT: %[[INC:.*]] = arith.cmpi ult, %[[C]], %{{.*}} : index
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[INR]], %[[INC]] : i1
// CHECK-NEXT: %[[X:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK-NEXT: %[[LD:.*]] = memref.load %[[Q]][%[[B]], %[[H]], %[[ROW]], %[[C]]] : memref<?x?x?x64xf32>
// CHECK-NEXT: scf.yield %[[LD]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %{{.*}} : f32
// CHECK-NEXT: }
// CHECK-NEXT: tensor.yield %[[X]] : f32
// CHECK-NEXT: } : tensor<64x64xf32>
// The q tile's cos/sin tiles: masked loads of table rows row0.. (rope_q_offset
// 0), R/2 = 32 columns.
// CHECK-NEXT: %[[QC:.*]] = tensor.generate
// CHECK-NEXT: ^bb0(%[[CR:.*]]: index, %[[CC:.*]]: index):
// CHECK-NEXT: %[[CROW:.*]] = arith.addi %[[ROW0]], %[[CR]] : index
// CHECK-NEXT: %{{.*}} = memref.dim %[[COS]], %{{.*}} : memref<?x32xf32>
// CHECK: memref.load %[[COS]][%[[CROW]], %[[CC]]] : memref<?x32xf32>
// CHECK: } : tensor<64x32xf32>
// CHECK-NEXT: %[[QSN:.*]] = tensor.generate
// CHECK-NEXT: ^bb0(%[[SR0:.*]]: index, %[[SC0:.*]]: index):
// CHECK-NEXT: %[[SROW:.*]] = arith.addi %[[ROW0]], %[[SR0]] : index
// CHECK: memref.load %[[SIN]][%[[SROW]], %[[SC0]]] : memref<?x32xf32>
// CHECK: } : tensor<64x32xf32>
// RoPE (style half), row by row on vectors: lo = x[r, :32], hi = x[r, 32:],
// out = [lo cos - hi sin, hi cos + lo sin] from the tiles; no angle computed.
// CHECK: %[[QR:.*]] = scf.for %[[RR:.*]] = %{{.*}} to %c64 {{.*}} -> (tensor<64x64xf32>) {
// CHECK-NEXT: %[[LO:.*]] = vector.transfer_read %[[QT]][%[[RR]], %c0]{{.*}} : tensor<64x64xf32>, vector<32xf32>
// CHECK-NEXT: %[[HI:.*]] = vector.transfer_read %[[QT]][%[[RR]], %c32]{{.*}} : tensor<64x64xf32>, vector<32xf32>
// CHECK-NEXT: %[[CS:.*]] = vector.transfer_read %[[QC]][%[[RR]], %c0]{{.*}} : tensor<64x32xf32>, vector<32xf32>
// CHECK-NEXT: %[[SN:.*]] = vector.transfer_read %[[QSN]][%[[RR]], %c0]{{.*}} : tensor<64x32xf32>, vector<32xf32>
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[SN]] : vector<32xf32>
// CHECK-NEXT: %[[A0:.*]] = arith.mulf %[[LO]], %[[CS]] : vector<32xf32>
// CHECK-NEXT: %[[A1:.*]] = arith.mulf %[[HI]], %[[NEG]] : vector<32xf32>
// CHECK-NEXT: %[[OLO:.*]] = arith.addf %[[A0]], %[[A1]] : vector<32xf32>
// CHECK-NEXT: %[[B0:.*]] = arith.mulf %[[HI]], %[[CS]] : vector<32xf32>
// CHECK-NEXT: %[[B1:.*]] = arith.mulf %[[LO]], %[[SN]] : vector<32xf32>
// CHECK-NEXT: %[[OHI:.*]] = arith.addf %[[B0]], %[[B1]] : vector<32xf32>
// CHECK-NEXT: %[[W0:.*]] = vector.transfer_write %[[OLO]], %{{.*}}[%[[RR]], %c0]
// CHECK-NEXT: %[[W1:.*]] = vector.transfer_write %[[OHI]], %[[W0]][%[[RR]], %c32]
// CHECK-NEXT: scf.yield %[[W1]] : tensor<64x64xf32>
// iota: a tensor.generate of i64.
// CHECK: %[[ROWS:.*]] = tensor.generate
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: } : tensor<64xi64>
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
// CHECK: memref.load %[[K]][
// CHECK: } : tensor<64x64xf32>
// k's cos/sin tiles, per key tile: table rows j.. (rope_offset 0).
// CHECK-NEXT: %[[KC:.*]] = tensor.generate
// CHECK-NEXT: ^bb0(%[[KCR:.*]]: index, %{{.*}}: index):
// CHECK-NEXT: %[[KROW:.*]] = arith.addi %[[J]], %[[KCR]] : index
// CHECK: memref.load %[[COS]][%[[KROW]], %{{.*}}] : memref<?x32xf32>
// CHECK: } : tensor<64x32xf32>
// CHECK-NEXT: %[[KSN:.*]] = tensor.generate
// CHECK-NEXT: ^bb0(%[[KSR:.*]]: index, %{{.*}}: index):
// CHECK-NEXT: %[[KSROW:.*]] = arith.addi %[[J]], %[[KSR]] : index
// CHECK: memref.load %[[SIN]][%[[KSROW]], %{{.*}}] : memref<?x32xf32>
// CHECK: } : tensor<64x32xf32>
// CHECK: %[[KR:.*]] = scf.for
// CHECK: vector.transfer_read %[[KC]][
// CHECK-NEXT: vector.transfer_read %[[KSN]][
// CHECK: scf.yield %{{.*}} : tensor<64x64xf32>
// dot(q, k, transpose_b): k's tile transposed, then per row m a vector
// accumulator updated by an FMA for every k.
// CHECK: %[[KTR:.*]] = linalg.transpose ins(%[[KR]] : tensor<64x64xf32>) outs(%{{.*}} : tensor<64x64xf32>) permutation = [1, 0]
// CHECK-NEXT: %[[S:.*]] = scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<64x64xf32>) {
// CHECK-NEXT: %[[ROWV:.*]] = vector.transfer_read %[[ACC]][%[[M]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<64x64xf32>, vector<64xf32>
// The k loop comes unrolled by 4 (RegisterLoops.h): k, k + 1, k + 2, k + 3.
// CHECK-NEXT: %[[ROWN:.*]] = scf.for %[[KK:.*]] = %{{.*}} to %c64 step %c4 iter_args(%[[R:.*]] = %[[ROWV]]) -> (vector<64xf32>) {
// CHECK-NEXT: %[[BV:.*]] = vector.transfer_read %[[KTR]][%[[KK]], %{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<64x64xf32>, vector<64xf32>
// CHECK-NEXT: %[[AE:.*]] = tensor.extract %{{.*}}[%[[M]], %[[KK]]] : tensor<64x64xf32>
// CHECK-NEXT: %[[AV:.*]] = vector.broadcast %[[AE]] : f32 to vector<64xf32>
// CHECK-NEXT: %[[F:.*]] = vector.fma %[[AV]], %[[BV]], %[[R]] : vector<64xf32>
// CHECK-NEXT: %[[K1:.*]] = arith.addi %[[KK]], %c1 : index
// CHECK-NEXT: vector.transfer_read %[[KTR]][%[[K1]], %{{.*}}]
// CHECK-NEXT: tensor.extract %{{.*}}[%[[M]], %[[K1]]] : tensor<64x64xf32>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: %[[F1:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[F]] : vector<64xf32>
// CHECK: arith.addi %[[KK]], %c3 : index
// CHECK: %[[F3:.*]] = vector.fma
// CHECK-NEXT: scf.yield %[[F3]] : vector<64xf32>
// CHECK: vector.transfer_write %[[ROWN]], %[[ACC]][%[[M]], %{{.*}}] {in_bounds = [true]} : vector<64xf32>, tensor<64x64xf32>
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<64xi64>) outs(%{{.*}} : tensor<64x64xi64>) dimensions = [0]
// CHECK: linalg.broadcast ins(%[[ROWS]] : tensor<64xi64>) outs(%{{.*}} : tensor<64x64xi64>) dimensions = [1]
// Row max and row sum: one vector reduction per row.
// CHECK: vector.reduction <maxnumf>, %{{.*}} : vector<64xf32> into f32
// exp2 as element-wise arithmetic (Exp2ToCPU.cpp, test/passes/exp2-to-cpu.mlir):
// alpha on [64], p on [64, 64].
// CHECK: math.roundeven %{{.*}} : tensor<64xf32>
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<64xf32>) outs(%{{.*}} : tensor<64x64xf32>) dimensions = [1]
// CHECK: math.roundeven %{{.*}} : tensor<64x64xf32>
// CHECK: %[[P:.*]] = arith.select %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK: vector.transfer_read %[[P]]
// CHECK-NEXT: vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK: %[[VT:.*]] = tensor.generate
// CHECK: memref.load %[[V]][
// CHECK: } : tensor<64x64xf32>
// dot(p, v): no transpose; rows of v read directly.
// CHECK-NOT: linalg.transpose
// CHECK: vector.fma
// CHECK-SAME: vector<64xf32>
// CHECK: scf.yield
// The store: a loop nest over the tile writing in-bounds elements only.
// CHECK: scf.for %[[SR:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: scf.for %[[SC:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[OROW:.*]] = arith.addi %[[ROW0]], %[[SR]] : index
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: %[[E:.*]] = tensor.extract %{{.*}}[%[[SR]], %[[SC]]] : tensor<64x64xf32>
// CHECK-NEXT: memref.store %[[E]], %[[O]][%[[B]], %[[H]], %[[OROW]], %[[SC]]] : memref<?x?x?x64xf32>
// CHECK: return

// The launch: the cos/sin tables built once, on the host, in f64; then
// scf.parallel over the grid (ceil(T / 64), B * Hq), the induction
// variables passed as the program ids.
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[NPOS:.*]] = arith.maxsi
// CHECK-NEXT: %[[CT:.*]] = tensor.generate %[[NPOS]] {
// CHECK: %[[CV:.*]] = math.cos %{{.*}} : f64
// CHECK-NEXT: %{{.*}} = arith.truncf %[[CV]] : f64 to f32
// CHECK: } : tensor<?x32xf32>
// CHECK-NEXT: %[[ST:.*]] = tensor.generate %[[NPOS]] {
// CHECK: %[[SV:.*]] = math.sin %{{.*}} : f64
// CHECK-NEXT: %{{.*}} = arith.truncf %[[SV]] : f64 to f32
// CHECK: } : tensor<?x32xf32>
// CHECK-NEXT: %[[QB:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK-NEXT: %[[KB:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK-NEXT: %[[VB:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK-NEXT: %[[CB:.*]] = bufferization.to_buffer %[[CT]] read_only : tensor<?x32xf32> to memref<?x32xf32>
// CHECK-NEXT: %[[SB:.*]] = bufferization.to_buffer %[[ST]] read_only : tensor<?x32xf32> to memref<?x32xf32>
// CHECK-NOT: math.
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK-NEXT: %[[GX:.*]] = arith.ceildivui
// CHECK-NEXT: %[[GY:.*]] = arith.muli
// CHECK-NEXT: scf.parallel (%[[X:.*]], %[[Y:.*]]) = (%[[C0]], %[[C0]]) to (%[[GX]], %[[GY]]) step (%[[C1]], %[[C1]]) {
// CHECK-NEXT: func.call @main_attention_kernel(%[[QB]], %[[KB]], %[[VB]], %[[CB]], %[[SB]], %[[OUT]], %[[X]], %[[Y]]) : (memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x?x?x64xf32>, index, index) -> ()
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NEXT: return %[[R]]

// The kernel computes no angle: cos/sin only on the host.
// TRIG-LABEL: func.func private @main_attention_kernel
// TRIG-NOT: math.{{(cos|sin|exp) }}
// TRIG: return
// TRIG-NEXT: }
// TRIG-LABEL: func.func @main
// TRIG: math.cos
// TRIG: math.sin
// TRIG: scf.parallel

// FoX: scan becomes a sequential scf.for inserting the running sum, in f64;
// the f64 prefix loops stay scf.for loops with a row reduction inside.
// FOX-LABEL: func.func private @main_attention_kernel
// FOX-SAME: %{{[^:]*}}: memref<?x?x?xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf32>, %[[PID0:[^:]*]]: index, %[[PID1:[^:]*]]: index)
// FOX: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64) {
// FOX: linalg.broadcast ins(%{{.*}} : tensor<64xf64>) outs(%{{.*}} : tensor<1x64xf64>) dimensions = [0]
// FOX: vector.reduction <add>, %{{.*}} : vector<64xf64> into f64
// FOX: %[[SCAN:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CUM:.*]] = %{{.*}}, %[[BUF:.*]] = %{{.*}}) -> (f64, tensor<64xf64>) {
// FOX-NEXT: %[[GI:.*]] = tensor.extract %{{.*}}[%[[I]]] : tensor<64xf64>
// FOX-NEXT: %[[NEW:.*]] = arith.addf %[[CUM]], %[[GI]] : f64
// FOX-NEXT: %[[INS:.*]] = tensor.insert %[[NEW]] into %[[BUF]][%[[I]]] : tensor<64xf64>
// FOX-NEXT: scf.yield %[[NEW]], %[[INS]] : f64, tensor<64xf64>
// FOX: scf.for {{.*}} -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, f64) {
// FOX: scf.for {{.*}} -> (f64, tensor<64xf64>) {
// FOX: tensor.insert
// FOX: linalg.broadcast ins(%{{.*}} : tensor<64xf64>) outs(%{{.*}} : tensor<64x64xf64>) dimensions = [0]
// FOX: linalg.broadcast ins(%{{.*}} : tensor<64xf64>) outs(%{{.*}} : tensor<64x64xf64>) dimensions = [1]
// FOX: memref.store %{{.*}}, %[[O]][
// FOX-LABEL: func.func @main
// FOX: scf.parallel
// FOX-NEXT: func.call @main_attention_kernel({{.*}}) : (memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?x64xf32>, memref<?x?x?xf32>, memref<?x?x?x64xf32>, index, index) -> ()
