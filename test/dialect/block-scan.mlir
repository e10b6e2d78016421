// attn_block.scan: the form without a layout (CPU), with a blocked layout
// and its scratch buffer for the warps' totals (GPU), and the verifier's
// errors (dialect/lib/AttnBlockDialect.cpp, ScanOp::verify).
//
// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

#b8 = #attn_block.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#flat = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [0]>
// CHECK-LABEL: func.func @scans
// CHECK: attn_block.scan %{{.*}} : tensor<16xf32>
// CHECK: attn_block.scan %{{.*}} scratch(%{{.*}} : !attn_block.smem<8xf64, #{{.*}}>) : tensor<2048xf64, #{{.*}}>
func.func @scans(%x: tensor<16xf32>, %y: tensor<2048xf64, #b8>) -> (tensor<16xf32>, tensor<2048xf64, #b8>) {
  %a = attn_block.scan %x : tensor<16xf32>
  %buf = attn_block.local_alloc : !attn_block.smem<8xf64, #flat>
  %b = attn_block.scan %y scratch(%buf : !attn_block.smem<8xf64, #flat>) : tensor<2048xf64, #b8>
  return %a, %b : tensor<16xf32>, tensor<2048xf64, #b8>
}

// -----

#b8 = #attn_block.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
func.func @no_scratch(%y: tensor<2048xf64, #b8>) -> tensor<2048xf64, #b8> {
  // expected-error @+1 {{a tile spread over 8 warps needs a scratch buffer for the warps' totals}}
  %b = attn_block.scan %y : tensor<2048xf64, #b8>
  return %b : tensor<2048xf64, #b8>
}

// -----

#b8 = #attn_block.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#flat = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [0]>
func.func @small_scratch(%y: tensor<2048xf64, #b8>) -> tensor<2048xf64, #b8> {
  %buf = attn_block.local_alloc : !attn_block.smem<4xf64, #flat>
  // expected-error @+1 {{must be a 1-D buffer of 'f64' with at least the 8 warps of}}
  %b = attn_block.scan %y scratch(%buf : !attn_block.smem<4xf64, #flat>) : tensor<2048xf64, #b8>
  return %b : tensor<2048xf64, #b8>
}

// -----

#b8 = #attn_block.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#flat = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [0]>
func.func @scratch_type(%y: tensor<2048xf64, #b8>) -> tensor<2048xf64, #b8> {
  %buf = attn_block.local_alloc : !attn_block.smem<8xf32, #flat>
  // expected-error @+1 {{must be a 1-D buffer of 'f64'}}
  %b = attn_block.scan %y scratch(%buf : !attn_block.smem<8xf32, #flat>) : tensor<2048xf64, #b8>
  return %b : tensor<2048xf64, #b8>
}

// -----

#flat = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [0]>
func.func @scratch_without_layout(%x: tensor<16xf32>) -> tensor<16xf32> {
  %buf = attn_block.local_alloc : !attn_block.smem<8xf32, #flat>
  // expected-error @+1 {{a scratch buffer is for a tile in a register layout}}
  %a = attn_block.scan %x scratch(%buf : !attn_block.smem<8xf32, #flat>) : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @rank2(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{scans a 1-D tile, got 'tensor<4x4xf32>'}}
  %a = attn_block.scan %x : tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}
