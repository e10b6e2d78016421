// attn-to-block with packed sequences (cu_seqlens): the flash kernel takes
// the offsets (plain, RoPE or FoX, any mask; PaTH and PaTH-FoX; MTA:
// packed-sequences-mta-block.mlir).
// RUN: attn-opt %s --attn-to-block --verify-diagnostics | FileCheck %s

// RoPE: the table kernel takes the offsets too; each row's position is its
// index minus its sequence's start (sequenceBounds' search and loop).
// CHECK-LABEL: func.func private @fox_rope_attention_kernel(
// CHECK-SAME: memref<?xi32>
// CHECK-LABEL: func.func private @fox_rope_rope_table(
// CHECK-SAME: memref<?xi32>
// CHECK: %[[POS:.*]] = attn_block.iota
// CHECK: scf.while
// CHECK: %[[STARTS:.*]] = scf.for {{.*}} -> (tensor<16xi64
// CHECK: arith.subi %[[POS]], %[[STARTS]] : tensor<16xi64
func.func @fox_rope(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                    %g: tensor<1x2x?xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %k, %v rope(1.0e+04) gate(%g) cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>)
      -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// The kernel takes cu_seqlens; a binary search of scalar loads finds the
// block's first and last rows' sequences, a loop over the sequences that
// start inside the block sets each row's start, the walk begins at the
// first row's start and a tile before the last row's start is masked.
// CHECK-LABEL: func.func private @fox_window_attention_kernel(
// CHECK-SAME: memref<?xi32>
// CHECK: scf.while
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK: scf.for {{.*}} -> (tensor<64xi64
// CHECK: arith.maxsi
// CHECK: scf.for
// CHECK-LABEL: func.func @fox_window(
// CHECK: attn_block.launch @fox_window_attention_kernel
func.func @fox_window(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                      %g: tensor<1x2x?xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %k, %v gate(%g) cu_seqlens(%cu) mask sliding_window window 5
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>)
      -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// PaTH: the attention kernel takes the offsets (its rows' starts mask the
// diagonal block and the walk's chunks before the last row's start); the
// chunk kernel does not need them.
// CHECK-LABEL: func.func private @path_path_attention_kernel(
// CHECK-SAME: memref<?xi32>
// CHECK: scf.while
// CHECK: scf.for {{.*}} -> (tensor<64xi64
func.func @path(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                %w: tensor<1x2x?x16xf32>, %beta: tensor<1x2x?xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %k, %v path(%w, %beta) cu_seqlens(%cu)
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?xf32>, tensor<?xi32>)
      -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// Without a mask the rows' sequence ends come too (a second carried tile)
// and bound the walk.
// CHECK-LABEL: func.func private @plain_none_attention_kernel(
// CHECK-SAME: memref<?xi32>
// CHECK: scf.for {{.*}} -> (tensor<64xi64, {{.*}}>, tensor<64xi64
// CHECK: arith.minsi
func.func @plain_none(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>,
                      %cu: tensor<?xi32>) -> tensor<1x2x?x16xf32> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cu) mask none
      : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<?xi32>)
      -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}
