// Verifier errors of padded shared buffers and local_subview.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

#pad = #attn_block.padded_shared<rowStride = 64>
// expected-error @+1 {{row stride of at least its columns}}
func.func @stride_too_small(%b: !attn_block.smem<64x80xf16, #pad>) {
  return
}

// -----

// expected-error @+1 {{rowStride must be >= 1}}
func.func @stride_zero(%b: !attn_block.smem<64x80xf16, #attn_block.padded_shared<rowStride = 0>>) {
  return
}

// -----

#pad = #attn_block.padded_shared<rowStride = 88>
// expected-error @+1 {{is 2-D}}
func.func @padded_3d(%b: !attn_block.smem<2x64x80xf16, #pad>) {
  return
}

// -----

#swz = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @swizzled_parent(%b: !attn_block.smem<128x64xf16, #swz>, %r: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{window of a #attn_block.padded_shared buffer}}
  %w = attn_block.local_subview %b[%r, %c0] : !attn_block.smem<128x64xf16, #swz> -> !attn_block.smem<64x64xf16, #swz>
  return
}

// -----

#pad = #attn_block.padded_shared<rowStride = 88>
#pad2 = #attn_block.padded_shared<rowStride = 72>
func.func @other_stride(%b: !attn_block.smem<128x80xf16, #pad>, %r: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{same layout (one row stride)}}
  %w = attn_block.local_subview %b[%r, %c0] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<64x64xf16, #pad2>
  return
}

// -----

#pad = #attn_block.padded_shared<rowStride = 88>
func.func @other_elements(%b: !attn_block.smem<128x80xf16, #pad>, %r: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{has its elements}}
  %w = attn_block.local_subview %b[%r, %c0] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<64x80xbf16, #pad>
  return
}

// -----

#pad = #attn_block.padded_shared<rowStride = 88>
func.func @rows_past_end(%b: !attn_block.smem<128x80xf16, #pad>) {
  %c0 = arith.constant 0 : index
  %c96 = arith.constant 96 : index
  // expected-error @+1 {{window at row 96 of 64 rows leaves}}
  %w = attn_block.local_subview %b[%c96, %c0] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<64x80xf16, #pad>
  return
}

// -----

#pad = #attn_block.padded_shared<rowStride = 88>
func.func @columns_past_end(%b: !attn_block.smem<128x80xf16, #pad>, %r: index) {
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{window at column 32 of 64 columns leaves}}
  %w = attn_block.local_subview %b[%r, %c32] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<64x64xf16, #pad>
  return
}

// -----

#pad = #attn_block.padded_shared<rowStride = 88>
func.func @too_big(%b: !attn_block.smem<128x80xf16, #pad>, %r: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{more rows than}}
  %w = attn_block.local_subview %b[%r, %c0] : !attn_block.smem<128x80xf16, #pad> -> !attn_block.smem<192x80xf16, #pad>
  return
}
