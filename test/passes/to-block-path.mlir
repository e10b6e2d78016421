// attn-to-block on PaTH / PaTH-FoX attention (PathToBlock.cpp): three
// kernels and three launches in sequence over memref.alloc'ed scratch.
// 1. chunk kernel (grid ceil(S/C) x B*Hk): A = stril(beta W W^T), the
//    forward substitution (extract_row / insert_row in an scf.for over the C
//    rows), U = T W, Khat; 2. diagonal kernel (grid query chunks x B*Hq):
//    Qhat and the in-chunk partial softmax; 3. attention kernel: the
//    right-to-left walk carrying the transported query. No remark.
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=remark --implicit-check-not=attn.attention
// The chunk size is the path-chunk option (here 32, with GQA 4/2, Dv = 24
// and a sliding window): it sets every tile, the loop steps and the grids.
// RUN: attn-opt %s --attn-to-block="path-chunk=32" \
// RUN:   | FileCheck %s --check-prefix=OPT --implicit-check-not='tensor<64x'
// With D >= 2C (D = 16, path-chunk=8) the walk's transport is low-rank: two
// dots by W^T and U per step instead of one by the dense -W^T U.
// RUN: attn-opt %s --attn-to-block="path-chunk=8" \
// RUN:   | FileCheck %s --check-prefix=LOWRANK
// RUN: not attn-opt %s --attn-to-block="path-chunk=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: attn-to-block: path-chunk must be >= 1, got 0

// CHECK-LABEL: func.func private @main_path_chunk_kernel
// CHECK-SAME: (%[[K:[^:]*]]: memref<?x?x?x64xf32>, %[[W:[^:]*]]: memref<?x?x?x64xf32>, %[[BETA:[^:]*]]: memref<?x?x?xf32>, %[[T:[^:]*]]: memref<?x?x?x64xf32>, %[[U:[^:]*]]: memref<?x?x?x64xf32>, %[[KHAT:[^:]*]]: memref<?x?x?x64xf32>, %[[N:[^:]*]]: memref<?x?x?x64xf32>) attributes {attn_block.kernel}
// CHECK: %[[WT:.*]] = attn_block.load %[[W]]{{.*}} -> tensor<64x64xf32>
// CHECK: %[[BT:.*]] = attn_block.load %[[BETA]]{{.*}} dims [2] {{.*}} -> tensor<64xf32>
// CHECK: %[[KT:.*]] = attn_block.load %[[K]]{{.*}} -> tensor<64x64xf32>
// CHECK: %[[BB:.*]] = attn_block.broadcast %[[BT]] axis 1 : tensor<64xf32> -> tensor<64x64xf32>
// CHECK: %[[WW:.*]] = attn_block.dot %[[WT]], %[[WT]], %{{.*}} transpose_b
// CHECK: %[[BWW:.*]] = arith.mulf %[[WW]], %[[BB]]
// CHECK: %[[LOWER:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<64x64xi64>
// CHECK: %[[A:.*]] = arith.select %[[LOWER]], %[[BWW]], %{{.*}} : tensor<64x64xi1>, tensor<64x64xf32>
// CHECK: %[[TT:.*]] = scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<64x64xf32>) {
// CHECK: %[[AR:.*]] = attn_block.extract_row %[[A]][%[[R]]] : tensor<64x64xf32> -> tensor<64xf32>
// CHECK: %[[AR2:.*]] = attn_block.broadcast %[[AR]] axis 0 : tensor<64xf32> -> tensor<1x64xf32>
// CHECK: %[[X:.*]] = attn_block.dot %[[AR2]], %[[ACC]], %{{.*}} : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
// CHECK: %[[XR:.*]] = attn_block.extract_row %[[X]][%{{.*}}] : tensor<1x64xf32> -> tensor<64xf32>
// CHECK: %[[E:.*]] = arith.select %{{.*}}, %[[BT]], %{{.*}} : tensor<64xi1>, tensor<64xf32>
// CHECK: %[[NEW:.*]] = arith.subf %[[E]], %[[XR]]
// CHECK: attn_block.insert_row %[[NEW]], %[[ACC]][%[[R]]] : tensor<64xf32> -> tensor<64x64xf32>
// CHECK: attn_block.store %[[TT]], %[[T]]
// CHECK: %[[UT:.*]] = attn_block.dot %[[TT]], %[[WT]], %{{.*}} : tensor<64x64xf32>, tensor<64x64xf32>
// CHECK: attn_block.store %[[UT]], %[[U]]
// CHECK: %[[KW:.*]] = attn_block.dot %[[KT]], %[[WT]], %{{.*}} transpose_b
// CHECK: %[[UPPER:.*]] = arith.cmpi sgt
// CHECK: %[[KWM:.*]] = arith.select %[[UPPER]], %[[KW]]
// CHECK: %[[KWT:.*]] = attn_block.dot %[[KWM]], %[[TT]], %{{.*}} transpose_b
// CHECK: %[[NKWT:.*]] = arith.negf %[[KWT]]
// CHECK: %[[KH:.*]] = attn_block.dot %[[NKWT]], %[[WT]], %[[KT]] :
// CHECK: attn_block.store %[[KH]], %[[KHAT]]
// D = 64 < 2C: the dense transport -W^T U, W^T as dot(I, W^T).
// CHECK: %[[WTT:.*]] = attn_block.dot %{{.*}}, %[[WT]], %{{.*}} transpose_b
// CHECK: %[[NWTT:.*]] = arith.negf %[[WTT]]
// CHECK: %[[NT:.*]] = attn_block.dot %[[NWTT]], %[[UT]], %{{.*}} :
// CHECK: attn_block.store %[[NT]], %[[N]]

// CHECK-LABEL: func.func private @main_path_diagonal_kernel
// CHECK: %[[Q:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<64x64xf32>
// CHECK: %[[QW:.*]] = attn_block.dot %[[Q]], %{{.*}} transpose_b
// CHECK: %[[INCL:.*]] = arith.cmpi sle
// CHECK: %[[QWM:.*]] = arith.select %[[INCL]], %[[QW]]
// CHECK: %[[NQW:.*]] = arith.negf %[[QWM]]
// CHECK: %[[QHAT:.*]] = attn_block.dot %[[NQW]], %{{.*}}, %[[Q]] :
// CHECK: attn_block.store %[[QHAT]]
// CHECK: %[[QK:.*]] = attn_block.dot %[[Q]], %{{.*}} transpose_b
// CHECK: %[[S:.*]] = attn_block.dot %{{.*}}, %{{.*}}, %[[QK]] transpose_b
// PaTH-FoX: G_i - G_j from one in-chunk scan of g, in f64.
// CHECK: attn_block.scan %{{.*}} : tensor<64xf64>
// CHECK: attn_block.reduce max %{{.*}} axis 1 : tensor<64x64xf32> -> tensor<64xf32>
// CHECK: math.exp2
// CHECK: attn_block.reduce sum
// CHECK: attn_block.dot %{{.*}} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK-COUNT-3: attn_block.store

// CHECK-LABEL: func.func private @main_path_attention_kernel
// CHECK-SAME: (%[[V:[^:]*]]: memref<?x?x?x64xf32>, %[[N3:[^:]*]]: memref<?x?x?x64xf32>, %[[G3:[^:]*]]: memref<?x?x?xf32>, %[[KHAT3:[^:]*]]: memref<?x?x?x64xf32>,
// The walk: chunk c-1 down to 0, carrying q~, m, l, acc and the gate sum.
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[QT:[^ ]*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, f64) {
// CHECK: %[[I1:.*]] = arith.addi %[[I]], %{{.*}}
// CHECK: %[[OFF:.*]] = arith.muli %[[I1]], %{{.*}}
// CHECK: %[[J0:.*]] = arith.subi %{{.*}}, %[[OFF]]
// CHECK: %[[KC:.*]] = attn_block.load %[[KHAT3]][%{{.*}}, %{{.*}}, %[[J0]], %{{.*}}] dims [2, 3]
// CHECK: attn_block.dot %[[QT]], %[[KC]], %{{.*}} transpose_b
// CHECK: math.exp2
// CHECK: attn_block.load %[[V]][%{{.*}}, %{{.*}}, %[[J0]], %{{.*}}]
// CHECK: %[[CH:.*]] = arith.divui %[[J0]], %{{.*}}
// CHECK: %[[ROW:.*]] = arith.muli %[[CH]], %{{.*}}
// CHECK: %[[NC:.*]] = attn_block.load %[[N3]][%{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}] dims [2, 3] {{.*}} -> tensor<64x64xf32>
// CHECK: %[[QN:.*]] = attn_block.dot %[[QT]], %[[NC]], %[[QT]] :
// CHECK: scf.yield %[[QN]],
// CHECK: attn_block.store

// LOWRANK-LABEL: func.func private @gqa_window_path_attention_kernel
// LOWRANK-SAME: (%[[V:[^:]*]]: memref<?x2x?x24xf32>, %[[W:[^:]*]]: memref<?x2x?x16xf32>, %[[U:[^:]*]]: memref<?x?x?x16xf32>,
// LOWRANK: scf.for
// LOWRANK: %[[WC:.*]] = attn_block.load %[[W]]{{.*}} -> tensor<8x16xf32>
// LOWRANK: %[[UC:.*]] = attn_block.load %[[U]]{{.*}} -> tensor<8x16xf32>
// LOWRANK: %[[R:.*]] = attn_block.dot %[[QT:.*]], %[[WC]], %{{.*}} transpose_b : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x8xf32>
// LOWRANK: %[[NR:.*]] = arith.negf %[[R]]
// LOWRANK: %[[QN:.*]] = attn_block.dot %[[NR]], %[[UC]], %[[QT]] :
// LOWRANK: scf.yield %[[QN]],

// CHECK-LABEL: func.func @main
// CHECK-COUNT-9: memref.alloc
// CHECK: attn_block.launch @main_path_chunk_kernel
// CHECK-NEXT: attn_block.launch @main_path_diagonal_kernel
// CHECK-NEXT: attn_block.launch @main_path_attention_kernel
// CHECK-NEXT: bufferization.to_tensor

// OPT-LABEL: func.func private @gqa_window_path_chunk_kernel
// OPT-SAME: memref<?x?x?x32xf32>
// OPT: attn_block.extract_row %{{.*}} : tensor<32x32xf32> -> tensor<32xf32>
// OPT-LABEL: func.func private @gqa_window_path_diagonal_kernel
// OPT: %[[W:.*]] = arith.constant 37 : index
// OPT: attn_block.dot {{.*}} : tensor<32x32xf32>, tensor<32x24xf32> -> tensor<32x24xf32>
// OPT-LABEL: func.func private @gqa_window_path_attention_kernel
// The window's first key bounds the walk.
// OPT: arith.constant 37 : index
// OPT: arith.maxsi
// OPT: arith.divsi
// OPT: scf.for {{.*}} -> (tensor<32x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x24xf32>) {
// OPT-LABEL: func.func @gqa_window
// OPT: %[[C:.*]] = arith.constant 32 : index
// OPT-NEXT: %[[CH:.*]] = arith.ceildivui %{{.*}}, %[[C]]
// OPT: attn_block.launch @gqa_window_path_chunk_kernel grid(%[[CH]],

func.func @gqa_window(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x24xf32>, %w: tensor<?x2x?x16xf32>, %beta: tensor<?x2x?xf32>) -> tensor<?x4x?x24xf32> {
  %o = attn.attention %q, %k, %v path(%w, %beta) mask sliding_window window 37
      : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x24xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?xf32>) -> tensor<?x4x?x24xf32>
  return %o : tensor<?x4x?x24xf32>
}
