// Verifier errors of the block program's layouts, shared buffers and GPU
// ops (dialect/lib/AttnBlockLayouts.cpp, AttnBlockGpuOps.cpp).
//
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{threadsPerWarp must multiply to the 32 threads of a warp, got 16}}
func.func private @f() -> tensor<4x4xf32, #attn_block.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 4], warpsPerCTA = [1, 1], order = [1, 0]>>

// -----

// expected-error @+1 {{'order' must be a permutation of the dims 0..1}}
func.func private @f() -> tensor<4x4xf32, #attn_block.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 1]>>

// -----

// expected-error @+1 {{mma layout version 2 (mma.sync m16n8k16) needs instrShape = [16, 8]}}
func.func private @f() -> tensor<4x4xf32, #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 16]>>

// -----

// expected-error @+1 {{warpsPerCTA[0] must be a multiple of the 4 warps of a warpgroup}}
func.func private @f() -> tensor<4x4xf32, #attn_block.mma<version = 3, warpsPerCTA = [2, 1], instrShape = [64, 64, 16]>>

// -----

// expected-error @+1 {{version must be 2 (mma.sync) or 3 (wgmma), got 1}}
func.func private @f() -> tensor<4x4xf32, #attn_block.mma<version = 1, warpsPerCTA = [4, 1], instrShape = [16, 8]>>

// -----

// expected-error @+1 {{wgmma reads its B operand from shared memory, not registers}}
func.func private @f() -> tensor<4x4xf32, #attn_block.dot_operand<opIdx = 1, parent = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>, kWidth = 2>>

// -----

// expected-error @+1 {{parent must be an #attn_block.mma layout}}
func.func private @f() -> tensor<4x4xf32, #attn_block.dot_operand<opIdx = 0, parent = #attn_block.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>, kWidth = 2>>

// -----

// expected-error @+1 {{swizzleBytes must be 0, 32, 64 or 128, got 48}}
func.func private @f() -> !attn_block.smem<64x64xbf16, #attn_block.nvmma_shared<swizzleBytes = 48, transposed = false>>

// -----

// expected-error @+1 {{shared buffer encoding must be #attn_block.shared, #attn_block.nvmma_shared or #attn_block.padded_shared}}
func.func private @f() -> !attn_block.smem<64x64xbf16, #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>>

// -----

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#blocked = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
func.func @dot_operand_layouts(%a: tensor<64x64xbf16, #blocked>, %b: tensor<64x64xbf16, #blocked>, %c: tensor<64x64xf32, #mma>) {
  // expected-error @+1 {{operand a of an mma accumulator must have layout #attn_block.dot_operand<opIdx = 0}}
  %d = attn_block.dot %a, %b, %c : tensor<64x64xbf16, #blocked>, tensor<64x64xbf16, #blocked> -> tensor<64x64xf32, #mma>
  return
}

// -----

#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#wgA = #attn_block.dot_operand<opIdx = 0, parent = #wg, kWidth = 2>
#blocked = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
func.func @wgmma_b_in_registers(%a: tensor<64x64xbf16, #wgA>, %b: tensor<64x64xbf16, #blocked>, %c: tensor<64x64xf32, #wg>) {
  // expected-error @+1 {{operand b of a wgmma accumulator must be a tile in shared memory}}
  %d = attn_block.dot %a, %b, %c : tensor<64x64xbf16, #wgA>, tensor<64x64xbf16, #blocked> -> tensor<64x64xf32, #wg>
  return
}

// -----

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
func.func @slice_rank(%t: tensor<64x64xf32, #mma>) {
  // expected-error @+1 {{layout #attn_block.slice<dim = 1, parent = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>> describes rank-1 tiles}}
  %u = attn_block.convert_layout %t : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #attn_block.slice<dim = 1, parent = #mma>>
  return
}

// -----

#swz = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @local_index(%buf: !attn_block.smem<2x64x64xbf16, #swz>, %i: index) {
  // expected-error @+1 {{the buffer without its leading dim}}
  %s = attn_block.local_index %buf[%i] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x32xbf16, #swz>
  return
}

// -----

#swz = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @local_load_shape(%buf: !attn_block.smem<64x64xbf16, #swz>) {
  // expected-error @+1 {{does not match buffer}}
  %t = attn_block.local_load %buf : !attn_block.smem<64x64xbf16, #swz> -> tensor<64x32xbf16>
  return
}

// -----

#swz = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @async_copy_row_bytes(%m: memref<?x?xbf16>, %buf: !attn_block.smem<64x1xbf16, #swz>, %i: index) {
  // expected-error @+1 {{are not a multiple of 4 bytes (cp.async)}}
  %t = attn_block.async_copy %m[%i, %i] dims [0, 1] padding 0.0 into %buf : memref<?x?xbf16> -> !attn_block.smem<64x1xbf16, #swz>
  return
}

// -----

#swz = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @async_copy_indices(%m: memref<?x?x?x64xbf16>, %buf: !attn_block.smem<64x64xbf16, #swz>, %i: index) {
  // expected-error @+1 {{needs 4 indices}}
  %t = attn_block.async_copy %m[%i, %i] dims [2, 3] padding 0.0 into %buf : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
  return
}

// -----

// expected-error @+1 {{'attn_block.num_warps' must be an integer in [1, 32]}}
func.func private @k() attributes {attn_block.num_warps = 0 : i64}

// -----

// expected-error @+1 {{unknown attn_block attribute 'attn_block.warps'}}
func.func private @k() attributes {attn_block.warps = 4 : i64}

// -----

// expected-error @+1 {{'attn_block.min_blocks_per_sm' must be an integer in [1, 32]}}
func.func private @k() attributes {attn_block.min_blocks_per_sm = 0 : i64}

// -----

func.func @not_a_kernel() {
  // expected-error @+1 {{'attn_block.griddep_wait' op orders a GPU kernel after the kernels it was launched dependent on: it must be inside a function marked 'attn_block.kernel'}}
  attn_block.griddep_wait
  return
}

// -----

func.func @not_a_kernel_either() {
  // expected-error @+1 {{'attn_block.launch_dependents' op lets the kernel after this one start early: it must be inside a function marked 'attn_block.kernel'}}
  attn_block.launch_dependents
  return
}

// -----

// attn_block.num_warps against the layouts (AttnBlockDialect.cpp,
// verifyRegionWarps): a 96-thread kernel over 4-warp mma tiles compiled.
#mma4 = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
// expected-error @+1 {{'func.func' op tile 'tensor<64x64xf32, #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>>' is spread over 4 warps, but the warps that run it are 3 (attn_block.num_warps = 3 on the kernel)}}
func.func @mma_warps(%a: tensor<64x64xf32, #mma4>) -> tensor<64x64xf32, #mma4>
    attributes {attn_block.kernel, attn_block.num_warps = 3 : i64} {
  return %a : tensor<64x64xf32, #mma4>
}

// -----

// A blocked tile over fewer warps than the kernel runs, and a row slice of
// an mma tile (its parent's warps).
#b2 = #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]>
func.func @blocked_warps(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  // expected-error @+1 {{'tensor.splat' op tile 'tensor<256xf32, #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]>>' is spread over 2 warps, but the warps that run it are 4}}
  %t = tensor.splat %x : tensor<256xf32, #b2>
  return
}

// -----

#mma8 = #attn_block.mma<version = 2, warpsPerCTA = [8, 1], instrShape = [16, 8]>
#row8 = #attn_block.slice<dim = 1, parent = #mma8>
func.func @slice_warps(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  // expected-error @+1 {{is spread over 8 warps, but the warps that run it are 4}}
  %t = tensor.splat %x : tensor<64xf32, #row8>
  return
}

// -----

// local_index with a constant stage outside the buffer.
#sh = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @stage_past_end() {
  %c2 = arith.constant 2 : index
  %b = attn_block.local_alloc : !attn_block.smem<2x64x64xf16, #sh>
  // expected-error @+1 {{stage 2 of '!attn_block.smem<2x64x64xf16, #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>>', which has 2 stages}}
  %s = attn_block.local_index %b[%c2] : !attn_block.smem<2x64x64xf16, #sh> -> !attn_block.smem<64x64xf16, #sh>
  return
}

// -----

#sh = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @negative_stage() {
  %cm1 = arith.constant -1 : index
  %b = attn_block.local_alloc : !attn_block.smem<2x64x64xf16, #sh>
  // expected-error @+1 {{stage -1 of}}
  %s = attn_block.local_index %b[%cm1] : !attn_block.smem<2x64x64xf16, #sh> -> !attn_block.smem<64x64xf16, #sh>
  return
}

// -----

#sh = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @store_add_not_f32(%m: memref<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %b = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #sh>
  // expected-error @+1 {{adds a 2-D f32 buffer into an f32 memref}}
  attn_block.async_store_add %b into %m[%c0, %c0] dims [0, 1] : !attn_block.smem<64x64xbf16, #sh> -> memref<?x64xbf16>
  return
}

// -----

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#col = #attn_block.slice<dim = 0, parent = #mma>
#p = #attn_block.padded_shared<rowStride = 72>
func.func @reduce_scratch_columns(%x: tensor<64x64xf32, #mma>) {
  %b = attn_block.local_alloc : !attn_block.smem<4x32xf32, #p>
  // expected-error @+1 {{scratch '!attn_block.smem<4x32xf32, #attn_block.padded_shared<rowStride = 72>>' must be [warps, 64] of 'f32'}}
  %c = attn_block.reduce sum %x axis 0 scratch(%b : !attn_block.smem<4x32xf32, #p>) : tensor<64x64xf32, #mma> -> tensor<64xf32, #col>
  return
}
