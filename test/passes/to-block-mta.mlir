// attn-to-block on MTA attention (MtaToBlock.cpp), with small tiles
// (block-m=16, block-n=8) so that every halo shows in the tile shapes.
// RUN: attn-opt %s --attn-to-block="block-m=16 block-n=8" | FileCheck %s
// The examples lower without a remark, to kernels only.
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EX --implicit-check-not=remark --implicit-check-not=attn.attention
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-fuse --attn-to-block 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXPRE --implicit-check-not=remark --implicit-check-not=attn.attention

// EX: func.func private @main_mta_lse_kernel
// EX: func.func private @main_mta_output_kernel
// EX: attn_block.launch @main_mta_lse_kernel
// EX: attn_block.launch @main_mta_output_kernel
// EXPRE: func.func private @main_mta_kernel
// EXPRE-NOT: func.func private
// EXPRE: attn_block.launch @main_mta_kernel

// Pre-softmax only (2x3 conv, mixing in groups of 2): one kernel, one pass.
// Each head's query tile (17 rows: 1 halo row above) is loaded, rotated and
// scaled once per program into scratch. Per key tile the score tile of a
// 16x8 output tile carries 1 row above and 1 column each side: S is 17x10;
// the Mask_0 source mask (built once per key tile, for all heads) zeroes it,
// the stencil gives the 16x8 C tile, stored to the group's scratch; the mix
// reads c_h tiles back, then -inf on the output coordinates and the online
// softmax with m, l, acc per head in scratch.
// CHECK-LABEL: func.func private @pre_mta_kernel
// CHECK-SAME: %[[Q:[^:]*]]: memref<?x?x?x16xf32>, %{{[^:]*}}: memref<?x?x?x16xf32>, %{{[^:]*}}: memref<?x?x?x16xf32>, %[[THETA:[^:]*]]: memref<?x2x3xf32>, %[[W:[^:]*]]: memref<?x2xf32>, %[[QS:[^:]*]]: memref<?x?x?x17x16xf32>, %[[C:[^:]*]]: memref<?x?x?x16x8xf32>, %[[M:[^:]*]]: memref<?x?x?x16xf32>, %[[L:[^:]*]]: memref<?x?x?x16xf32>, %[[ACC:[^:]*]]: memref<?x?x?x16x16xf32>, %[[OUT:[^:]*]]: memref<?x?x?x16xf32>)
// CHECK: %[[CH:.*]] = memref.dim %[[W]], %c1
// CHECK: %[[GROUPS:.*]] = arith.divui %{{.*}}, %[[CH]]
// CHECK: scf.for %[[HL0:.*]] = %{{.*}} to %[[CH]]
// CHECK: attn_block.load %[[Q]][{{.*}}] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x16xf32> -> tensor<17x16xf32>
// CHECK: attn_block.store %{{.*}}, %[[QS]][%{{.*}}, %{{.*}}, %[[HL0]], %{{.*}}, %{{.*}}] dims [3, 4] in_bounds
// CHECK: scf.for %[[J0:.*]] = %{{.*}} to %{{.*}} step %c8
// The masks compare i32 coordinates (8 lanes per AVX2 compare, not 4).
// CHECK: arith.trunci %{{.*}} : tensor<17xi64> to tensor<17xi32>
// CHECK: arith.cmpi sle, %{{.*}} : tensor<17x10xi32>
// CHECK: scf.for %[[HL:.*]] = %{{.*}} to %[[CH]]
// CHECK: %[[QT:.*]] = attn_block.load %[[QS]]{{.*}} in_bounds : memref<?x?x?x17x16xf32> -> tensor<17x16xf32>
// CHECK: attn_block.load %{{.*}} dims [2, 3] padding 0.000000e+00 : memref<?x?x?x16xf32> -> tensor<10x16xf32>
// CHECK: attn_block.dot %[[QT]], %{{.*}} transpose_b : tensor<17x16xf32>, tensor<10x16xf32> -> tensor<17x10xf32>
// CHECK: %[[S0:.*]] = arith.select %{{.*}} : tensor<17x10xi1>, tensor<17x10xf32>
// CHECK: %[[K:.*]] = attn_block.load %[[THETA]][%{{.*}}] dims [1, 2] padding 0.000000e+00 : memref<?x2x3xf32> -> tensor<2x3xf32>
// CHECK: %[[CT:.*]] = attn_block.stencil %[[S0]], %[[K]] : tensor<17x10xf32>, tensor<2x3xf32> -> tensor<16x8xf32>
// CHECK: attn_block.store %[[CT]], %[[C]][%{{.*}}, %{{.*}}, %[[HL]], %{{.*}}, %{{.*}}] dims [3, 4] in_bounds
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (tensor<16x8xf32>)
// CHECK: memref.load %[[W]]
// CHECK: attn_block.load %[[C]]{{.*}} in_bounds : memref<?x?x?x16x8xf32> -> tensor<16x8xf32>
// CHECK: arith.select %{{.*}} : tensor<16x8xi1>, tensor<16x8xf32>
// CHECK: attn_block.load %[[M]]{{.*}} in_bounds
// CHECK: attn_block.reduce max
// CHECK: math.exp2
// CHECK: attn_block.store %{{.*}}, %[[M]]
// CHECK: attn_block.dot
// CHECK: attn_block.store %{{.*}}, %[[ACC]]
// CHECK: attn_block.store %{{.*}}, %[[OUT]]
// CHECK-LABEL: func.func @pre(
// CHECK: %[[G:.*]] = tensor.dim %{{.*}}, %c1{{.*}} : tensor<?x2xf32>
// CHECK: %[[GX:.*]] = arith.ceildivui
// CHECK: %[[GY:.*]] = arith.muli
// CHECK: memref.alloc(%[[GX]], %[[GY]], %[[G]]) : memref<?x?x?x16x8xf32>
// CHECK: attn_block.launch @pre_mta_kernel grid(%[[GX]], %[[GY]])
// CHECK-NOT: attn_block.launch
// CHECK: return
func.func @pre(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>,
               %theta: tensor<?x2x3xf32>, %w: tensor<?x2xf32>) -> tensor<?x?x?x16xf32> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%theta) head_mix_pre(%w)
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x2x3xf32>, tensor<?x2xf32>) -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
}

// Post-softmax pieces (2x3 pre, 3x5 post, all-head mixing after the
// softmax, FoX, norm with gate): a prefix kernel for FoX's G (f64), then
// two passes. Pass 1 (16x8 logits, S 17x10) writes the LSE of the tile's
// rows; pass 2 works on 18x12 logits (2 rows above and 2 columns each side
// for the post conv; S 19x14), P = exp2(L - LSE) with the LSE of the halo
// rows, the post stencil to 16x8, Mask_0 on the output, the post mix from
// scratch, and P V as a plain sum; the norm and gate are the epilogue.
// CHECK-LABEL: func.func private @post_mta_fox_prefix
// CHECK: attn_block.scan %{{.*}} : tensor<8xf64>
// CHECK: attn_block.store %{{.*}} dims [2] : tensor<8xf64> -> memref<?x?x?xf64>
// CHECK-LABEL: func.func private @post_mta_lse_kernel
// CHECK: attn_block.dot %{{.*}} transpose_b : tensor<17x16xf32>, tensor<10x16xf32> -> tensor<17x10xf32>
// CHECK: attn_block.load %{{.*}} dims [2] padding 0.000000e+00 : memref<?x?x?xf64> -> tensor<17xf64>
// CHECK: attn_block.stencil %{{.*}} : tensor<17x10xf32>, tensor<2x3xf32> -> tensor<16x8xf32>
// CHECK: math.log2
// CHECK: attn_block.store %{{.*}} dims [2] : tensor<16xf32> -> memref<?x?x?xf32>
// CHECK-LABEL: func.func private @post_mta_output_kernel
// CHECK: attn_block.dot %{{.*}} transpose_b : tensor<19x16xf32>, tensor<14x16xf32> -> tensor<19x14xf32>
// CHECK: attn_block.stencil %{{.*}} : tensor<19x14xf32>, tensor<2x3xf32> -> tensor<18x12xf32>
// CHECK: attn_block.load %{{.*}} dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<18xf32>
// CHECK: math.exp2 %{{.*}} : tensor<18x12xf32>
// CHECK: attn_block.stencil %{{.*}} : tensor<18x12xf32>, tensor<3x5xf32> -> tensor<16x8xf32>
// CHECK: arith.select %{{.*}} : tensor<16x8xi1>, tensor<16x8xf32>
// CHECK: attn_block.store %{{.*}} dims [3, 4] in_bounds : tensor<16x8xf32> -> memref<?x?x?x16x8xf32>
// CHECK: attn_block.load %{{.*}} in_bounds : memref<?x?x?x16x8xf32> -> tensor<16x8xf32>
// CHECK: attn_block.dot %{{.*}} : tensor<16x8xf32>, tensor<8x16xf32> -> tensor<16x16xf32>
// CHECK: math.sqrt
// CHECK: math.exp
// CHECK: attn_block.store %{{.*}} dims [2, 3] : tensor<16x16xf32> -> memref<?x?x?x16xf32>
// CHECK-LABEL: func.func @post(
// CHECK: %[[PRE:.*]] = memref.alloc({{.*}}) : memref<?x?x?xf64>
// CHECK: attn_block.launch @post_mta_fox_prefix grid(%c1
// CHECK: %[[LSE:.*]] = memref.alloc({{.*}}) : memref<?x?x?xf32>
// CHECK: attn_block.launch @post_mta_lse_kernel grid({{.*}}) args({{.*}}%[[LSE]])
// CHECK: memref.alloc({{.*}}) : memref<?x?x?x16x8xf32>
// CHECK: memref.alloc({{.*}}) : memref<?x?x?x16x16xf32>
// CHECK: attn_block.launch @post_mta_output_kernel grid({{.*}}) args({{.*}}%[[LSE]],
// CHECK: return
func.func @post(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>,
                %g: tensor<?x?x?xf32>, %theta: tensor<?x2x3xf32>, %theta2: tensor<?x3x5xf32>,
                %w2: tensor<?x?xf32>, %gamma: tensor<16xf32>, %gw: tensor<16xf32>,
                %gb: tensor<1xf32>) -> tensor<?x?x?x16xf32> {
  %o = attn.attention %q, %k, %v gate(%g) kq_conv_pre(%theta) kq_conv_post(%theta2)
      head_mix_post(%w2) norm(%gamma) norm_gate(%gw, %gb)
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>,
         tensor<?x2x3xf32>, tensor<?x3x5xf32>, tensor<?x?xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<1xf32>) -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
}

// The MTA output norm alone (any mask): one pass, groups of one head.
// CHECK-LABEL: func.func private @norm_mta_kernel
// CHECK: math.sqrt
// CHECK-NOT: attn_block.stencil
// CHECK-LABEL: func.func @norm(
// CHECK: attn_block.launch @norm_mta_kernel
func.func @norm(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %gamma: tensor<16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.attention %q, %k, %v norm(%gamma) mask sliding_window window 3 : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
