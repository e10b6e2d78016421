// attn-block-strip-gpu of padded shared buffers and their windows: a
// padded buffer is the [rows, cols] corner of a [rows, rowStride] alloc,
// and a local_subview the memref.subview of its window, so both keep the
// row stride; local_store and local_load of a window are in-bounds store
// and load of that subview.
// RUN: attn-opt %s --attn-block-strip-gpu | FileCheck %s \
// RUN:   --implicit-check-not=attn_block.local --implicit-check-not=#attn_block

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#pad = #attn_block.padded_shared<rowStride = 88>

// CHECK-LABEL: func.func @window
// CHECK: %[[MEM:.*]] = memref.alloc() : memref<128x88xf16>
// CHECK: %[[CORNER:.*]] = memref.subview %[[MEM]][0, 0] [128, 80] [1, 1] : memref<128x88xf16> to memref<128x80xf16, strided<[88, 1]>>
// CHECK: %[[BUF:.*]] = memref.cast %[[CORNER]] : memref<128x80xf16, strided<[88, 1]>> to memref<128x80xf16, strided<[88, 1], offset: ?>>
// CHECK: %[[TOP:.*]] = memref.subview %[[BUF]][%{{.*}}, %{{.*}}] [64, 80] [1, 1] : memref<128x80xf16, strided<[88, 1], offset: ?>> to memref<64x80xf16, strided<[88, 1], offset: ?>>
// CHECK: attn_block.store %{{.*}}, %[[TOP]][%{{.*}}, %{{.*}}] dims [0, 1] in_bounds : tensor<64x80xf16> -> memref<64x80xf16, strided<[88, 1], offset: ?>>
// CHECK: %[[W:.*]] = memref.subview %[[BUF]][%{{.*}}, %{{.*}}] [64, 80] [1, 1]
// CHECK: attn_block.load %[[W]][%{{.*}}, %{{.*}}] dims [0, 1] padding 0.000000e+00 in_bounds : memref<64x80xf16, strided<[88, 1], offset: ?>> -> tensor<64x80xf16>
func.func @window(%s: tensor<64x80xf16, #mma>, %r: index) -> tensor<64x80xf16, #opA>
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %buf = attn_block.local_alloc : !attn_block.smem<128x80xf16, #pad>
  %top = attn_block.local_subview %buf[%c0, %c0] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<64x80xf16, #pad>
  attn_block.local_store %s, %top : tensor<64x80xf16, #mma> -> !attn_block.smem<64x80xf16, #pad>
  attn_block.barrier
  %w = attn_block.local_subview %buf[%r, %c0] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<64x80xf16, #pad>
  %x = attn_block.local_load %w : !attn_block.smem<64x80xf16, #pad> -> tensor<64x80xf16, #opA>
  return %x : tensor<64x80xf16, #opA>
}
