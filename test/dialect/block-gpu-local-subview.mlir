// Padded shared buffers and their windows (local_subview): MTA's stencil
// stores f16 score tiles into a padded buffer and reads them back as mma A
// operands at row offsets R + a. Round trip, custom and generic form.
//
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#pad = #attn_block.padded_shared<rowStride = 88>
#padB = #attn_block.padded_shared<rowStride = 72>

// CHECK-DAG: #[[PAD:.*]] = #attn_block.padded_shared<rowStride = 88>
// CHECK-DAG: #[[PADB:.*]] = #attn_block.padded_shared<rowStride = 72>
// CHECK-LABEL: func.func @stencil_dot
// CHECK: attn_block.local_alloc : !attn_block.smem<128x80xf16, #[[PAD]]>
// CHECK: attn_block.local_store %{{.*}}, %{{.*}} : tensor<128x80xf16, #{{.*}}> -> !attn_block.smem<128x80xf16, #[[PAD]]>
// CHECK: attn_block.local_subview %{{.*}}[%{{.*}}, %{{.*}}] : !attn_block.smem<128x80xf16, #[[PAD]]> -> !attn_block.smem<64x80xf16, #[[PAD]]>
// CHECK: attn_block.local_subview %{{.*}}[%{{.*}}, %{{.*}}] : !attn_block.smem<480x64xf16, #[[PADB]]> -> !attn_block.smem<80x64xf16, #[[PADB]]>
// CHECK: attn_block.async_copy {{.*}} into %{{.*}} : memref<?x?x80x64xf16> -> !attn_block.smem<80x64xf16, #[[PADB]]>
// CHECK: attn_block.local_load %{{.*}} : !attn_block.smem<64x80xf16, #[[PAD]]> -> tensor<64x80xf16, #{{.*}}>
func.func @stencil_dot(%s: tensor<128x80xf16, #mma>, %toe: memref<?x?x80x64xf16>,
                       %a: index, %acc: tensor<64x64xf32, #mma>)
    -> tensor<64x64xf32, #mma>
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c80 = arith.constant 80 : index
  %buf = attn_block.local_alloc : !attn_block.smem<128x80xf16, #pad>
  %tb = attn_block.local_alloc : !attn_block.smem<480x64xf16, #padB>
  attn_block.local_store %s, %buf : tensor<128x80xf16, #mma> -> !attn_block.smem<128x80xf16, #pad>
  attn_block.barrier
  %w = attn_block.local_subview %buf[%a, %c0] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<64x80xf16, #pad>
  %tw = attn_block.local_subview %tb[%c80, %c0] : !attn_block.smem<480x64xf16, #padB> -> !attn_block.smem<80x64xf16, #padB>
  %t = attn_block.async_copy %toe[%c0, %a, %c0, %c0] dims [2, 3] padding 0.0 into %tw : memref<?x?x80x64xf16> -> !attn_block.smem<80x64xf16, #padB>
  %g = attn_block.async_commit_group %t
  attn_block.async_wait %g pending 0
  attn_block.barrier
  %x = attn_block.local_load %w : !attn_block.smem<64x80xf16, #pad> -> tensor<64x80xf16, #opA>
  %y = attn_block.local_load %tw : !attn_block.smem<80x64xf16, #padB> -> tensor<80x64xf16, #opB>
  %r = attn_block.dot %x, %y, %acc : tensor<64x80xf16, #opA>, tensor<80x64xf16, #opB> -> tensor<64x64xf32, #mma>
  return %r : tensor<64x64xf32, #mma>
}
