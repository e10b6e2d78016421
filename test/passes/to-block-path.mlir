// attn-to-block on PaTH / PaTH-FoX attention for the CPU (PathToBlock.cpp,
// the kernels every target runs; path-to-block-gpu.mlir has the GPU's): with
// FoX the gate-prefix kernel (G' in f64 on the CPU), the chunk kernel (A,
// the column inverse of I + A, U, KC, Khat and, D < 2C, the dense transport
// N = -W^T U) and the attention kernel (diagonal block, right-to-left walk),
// launched in sequence over memref.alloc'ed scratch. f32 operands are taken
// whole on the CPU: no lo halves. No remark.
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=remark --implicit-check-not=attn.attention
// The chunk size is the path-chunk option (here 32, with GQA 4/2, Dv = 24
// and a sliding window): it sets every tile, the loop steps and the grids.
// RUN: attn-opt %s --attn-to-block="path-chunk=32" \
// RUN:   | FileCheck %s --check-prefix=OPT --implicit-check-not='tensor<64x'
// With D >= 2C (@low_rank: D = 32, path-chunk=16) the walk's transport is
// low-rank: two dots by W^T and U per step instead of one by N.
// RUN: attn-opt %s --attn-to-block="path-chunk=16" \
// RUN:   | FileCheck %s --check-prefix=LOWRANK
// RUN: not attn-opt %s --attn-to-block="path-chunk=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: attn-to-block: path-chunk must be >= 1, got 0
// RUN: not attn-opt %s --attn-to-block="path-chunk=8" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD8
// BAD8: error: attn-to-block{target=cpu}: the PaTH kernels run chunks of a multiple of 16 positions (the column inverse's blocks), got path-chunk 8
// With the row LSE as a second result (a training forward), the attention
// kernel also stores (m + log2 l) ln 2 per row.
// RUN: attn-opt %s --attn-to-block | FileCheck %s --check-prefix=LSE
// LSE-LABEL: func.func private @with_lse_path_attention_kernel
// LSE: math.log2
// LSE: attn_block.store %{{.*}} dims [2]
// LSE-LABEL: func.func @with_lse(
// LSE: attn_block.launch @with_lse_path_attention_kernel
// LSE-SAME: args({{.*}}, %[[O:[^,]*]], %[[L:[^)]*]])
// LSE: bufferization.to_tensor %[[O]]
// LSE: bufferization.to_tensor %[[L]]

// CHECK-LABEL: func.func private @main_gate_prefix
// CHECK-SAME: memref<?x?x?xf64>
// CHECK-LABEL: func.func private @main_path_chunk_kernel
// CHECK-SAME: (%[[K:[^:]*]]: memref<?x?x?x64xf32>, %[[W:[^:]*]]: memref<?x?x?x64xf32>, %[[BETA:[^:]*]]: memref<?x?x?xf32>, %[[A:[^:]*]]: memref<?x?x?x64xf32>, %[[T:[^:]*]]: memref<?x?x?x64xf32>, %[[WS:[^:]*]]: memref<?x?x?x64xf32>, %[[U:[^:]*]]: memref<?x?x?x64xf32>, %[[KC:[^:]*]]: memref<?x?x?x64xf32>, %[[KHAT:[^:]*]]: memref<?x?x?x64xf32>, %[[N:[^:]*]]: memref<?x?x?x64xf32>, %[[MARKS:[^:]*]]: memref<?x?x?xf32>, %[[UPTO:[^:]*]]: memref<?x?x?xf32>) attributes {attn_block.kernel
// W's non-finite rows marked in MARKS and read as 0; W through its scratch
// into shared memory, whole; the marks counted up to each position.
// CHECK: %[[WT:.*]] = attn_block.load %[[W]]
// CHECK: attn_block.store %{{.*}}, %[[MARKS]]
// CHECK: %[[WC:.*]] = arith.select %{{.*}}, %{{.*}}, %[[WT]]
// CHECK: attn_block.store %[[WC]], %[[WS]]
// CHECK: %[[SW:.*]] = attn_block.local_alloc : !attn_block.smem<64x64xf32
// CHECK: attn_block.store %{{.*}}, %[[UPTO]]
// A = stril(beta W W^T).
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %{{.*}} transpose_b : tensor<64x64xf32, #dot_op>, tensor<64x64xf32, #dot_op1> -> tensor<64x64xf32, #mma>
// CHECK: attn_block.store %{{.*}}, %[[A]]
// The diagonal blocks' inverses by columns: 16 steps of whole-tile ops.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16 step
// CHECK: attn_block.reduce sum
// CHECK: scf.yield
// CHECK: attn_block.store %{{.*}}, %[[U]]
// CHECK: attn_block.store %{{.*}}, %[[KC]]
// D = 64 < 2C: N = -W^T U, at rows chunk * D.
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c64
// CHECK: attn_block.store %{{.*}}, %[[N]][%{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}]
// Khat = K - KC W, then the attention kernel's W, NaN at the marks.
// CHECK: attn_block.store %{{.*}}, %[[KHAT]]
// CHECK: attn_block.store %{{.*}}, %[[WS]]

// CHECK-LABEL: func.func private @main_path_attention_kernel
// CHECK-SAME: (%[[Q2:[^:]*]]: memref<?x?x?x64xf32>, %[[K2:[^:]*]]: memref<?x?x?x64xf32>, %[[V2:[^:]*]]: memref<?x?x?x64xf32>, %[[G2:[^:]*]]: memref<?x?x?xf64>, %[[W2:[^:]*]]: memref<?x?x?x64xf32>, %[[U2:[^:]*]]: memref<?x?x?x64xf32>, %[[KC2:[^:]*]]: memref<?x?x?x64xf32>, %[[N2:[^:]*]]: memref<?x?x?x64xf32>, %[[KHAT2:[^:]*]]: memref<?x?x?x64xf32>, %{{[^:]*}}: memref<?x?x?xf32>, %{{[^:]*}}: memref<?x?x?xf32>, %[[OUT:[^:]*]]: memref<?x?x?x64xf32>)
// The diagonal block, then the walk carrying q~, m, l, acc.
// CHECK: attn_block.load %[[G2]]{{.*}} -> tensor<64xf64
// CHECK: %[[QT:.*]]:4 = scf.for {{.*}} -> (tensor<64x64xf32, #mma>, tensor<64xf32, #slice>, tensor<64xf32, #slice>, tensor<64x64xf32, #mma>) {
// FoX: the bias from G' differences in f64.
// CHECK: arith.subf %{{.*}} : tensor<64x64xf64, #mma>
// CHECK: math.exp2
// The next chunk's N, then the transport as one dot onto q~.
// CHECK: attn_block.async_copy %[[KHAT2]]
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %arg{{[0-9]+}} : tensor<64x64xf32, #dot_op>, tensor<64x64xf32, #dot_op1>
// CHECK: attn_block.async_copy %[[N2]]
// CHECK: scf.yield
// CHECK: attn_block.store %{{.*}}, %[[OUT]]

// CHECK-LABEL: func.func @main
// CHECK: attn_block.launch @main_gate_prefix
// CHECK-COUNT-8: memref.alloc
// CHECK: attn_block.launch @main_path_chunk_kernel
// CHECK: attn_block.launch @main_path_attention_kernel
// CHECK-NEXT: bufferization.to_tensor

// OPT-LABEL: func.func private @gqa_window_path_chunk_kernel
// OPT-SAME: memref<?x?x?x32xf32>
// OPT: scf.for {{.*}} -> (tensor<32x32xf32, #mma>)
// OPT-LABEL: func.func private @gqa_window_path_attention_kernel
// OPT: attn_block.dot {{.*}} : tensor<32x32xf32, #dot_op>, tensor<32x24xf32, #dot_op1> -> tensor<32x24xf32, #mma>
// The window's first key bounds the walk.
// OPT: arith.constant 37 : index
// OPT: arith.maxsi
// OPT: arith.divsi
// OPT: scf.for {{.*}} -> (tensor<32x16xf32, #mma>, tensor<32xf32, #slice>, tensor<32xf32, #slice>, tensor<32x24xf32, #mma>) {
// OPT-LABEL: func.func @gqa_window
// OPT: %[[CH:.*]] = arith.ceildivui %{{.*}}, %c32
// OPT: attn_block.launch @gqa_window_path_chunk_kernel grid(%[[CH]],

// LOWRANK-LABEL: func.func private @low_rank_path_chunk_kernel
// LOWRANK-SAME: (%{{[^:]*}}: memref<?x?x?x32xf32>, %{{[^:]*}}: memref<?x?x?x32xf32>, %{{[^:]*}}: memref<?x?x?xf32>, %{{[^:]*}}: memref<?x?x?x16xf32>, %{{[^:]*}}: memref<?x?x?x16xf32>, %{{[^:]*}}: memref<?x?x?x32xf32>, %{{[^:]*}}: memref<?x?x?x32xf32>, %{{[^:]*}}: memref<?x?x?x16xf32>, %{{[^:]*}}: memref<?x?x?x32xf32>, %{{[^:]*}}: memref<?x?x?xf32>, %{{[^:]*}}: memref<?x?x?xf32>) attributes
// LOWRANK-LABEL: func.func private @low_rank_path_attention_kernel
// LOWRANK: scf.for
// P V, then q~ W^T and q~ - (q~ W^T) U.
// LOWRANK: attn_block.dot {{.*}} : tensor<16x16xf32, #dot_op>, tensor<16x32xf32, #dot_op1> -> tensor<16x32xf32, #mma>
// LOWRANK: %[[R:.*]] = attn_block.dot {{.*}} transpose_b : tensor<16x32xf32, #dot_op>, tensor<16x32xf32, #dot_op1> -> tensor<16x16xf32, #mma>
// LOWRANK: arith.negf %[[R]]
// LOWRANK: attn_block.dot %{{.*}}, %{{.*}}, %arg{{[0-9]+}} : tensor<16x16xf32, #dot_op>, tensor<16x32xf32, #dot_op1> -> tensor<16x32xf32, #mma>
// LOWRANK: scf.yield

func.func @gqa_window(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x24xf32>, %w: tensor<?x2x?x16xf32>, %beta: tensor<?x2x?xf32>) -> tensor<?x4x?x24xf32> {
  %o = attn.attention %q, %k, %v path(%w, %beta) mask sliding_window window 37
      : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x24xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?xf32>) -> tensor<?x4x?x24xf32>
  return %o : tensor<?x4x?x24xf32>
}

func.func @low_rank(%q: tensor<?x?x?x32xf32>, %k: tensor<?x?x?x32xf32>, %v: tensor<?x?x?x32xf32>, %w: tensor<?x?x?x32xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x32xf32> {
  %o = attn.attention %q, %k, %v path(%w, %beta)
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x32xf32>
  return %o : tensor<?x?x?x32xf32>
}

func.func @with_lse(%q: tensor<?x?x?x32xf32>, %w: tensor<?x?x?x32xf32>, %beta: tensor<?x?x?xf32>) -> (tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) {
  %o, %l = attn.attention %q, %q, %q path(%w, %beta) : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>) -> (tensor<?x?x?x32xf32>, tensor<?x?x?xf32>)
  return %o, %l : tensor<?x?x?x32xf32>, tensor<?x?x?xf32>
}
