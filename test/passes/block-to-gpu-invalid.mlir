// What the block-program GPU path refuses, with a diagnostic naming the op
// and the layout or feature, never a crash.
//
// RUN: not attn-opt %s --split-input-file --attn-block-to-gpu 2>&1 | FileCheck %s


#blocked = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [0, 1]>
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %s = tensor.splat %x : tensor<64x64xf32, #mma>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.convert_layout': layout #attn_block.blocked<{{.*}}> of tensor<64x64xf32, #attn_block.blocked<{{.*}}>>: blocked layouts are lowered for 1-D tiles and 2-D tiles with order = [1, 0]
    %b = attn_block.convert_layout %s : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
    return
  }
}

// -----

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#col = #attn_block.slice<dim = 0, parent = #mma>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %s = tensor.splat %x : tensor<64x64xf32, #mma>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.reduce': a column reduction over 4 warps exchanges their partials through a scratch buffer of at least that many rows, unswizzled #attn_block.shared or #attn_block.padded_shared
    %r = attn_block.reduce max %s axis 0 : tensor<64x64xf32, #mma> -> tensor<64xf32, #col>
    return
  }
}

// -----

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %s = tensor.splat %x : tensor<64x64xf32, #mma>
    // A fold narrower than an n8 tile would leave a thread's two columns
    // split over lanes: its result is no mma tile.
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.fold': layout #attn_block.mma<{{.*}}> of tensor<64x4xf32, #attn_block.mma<{{.*}}>>: an mma tile must be [16 * warps * k, 8 * n]
    %f = attn_block.fold %s width 4 : tensor<64x64xf32, #mma> -> tensor<64x4xf32, #mma>
    return
  }
}

// -----

gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel} {
    // CHECK: error: attn-block-to-gpu: a GPU kernel needs attn_block.num_warps
    return
  }
}

// -----

// wgmma: the accumulator's N is the instruction's.
#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %a = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv>
    %b = attn_block.local_alloc : !attn_block.smem<128x64xbf16, #nv>
    %at = attn_block.local_load %a : !attn_block.smem<64x64xbf16, #nv> -> tensor<64x64xbf16, #nv>
    %bt = attn_block.local_load %b : !attn_block.smem<128x64xbf16, #nv> -> tensor<128x64xbf16, #nv>
    %acc = tensor.splat %x : tensor<64x128xf32, #wg>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.dot': a wgmma accumulator [M, N] needs N a multiple of 8 up to 256 and instrShape = [64, N, 16]
    %s = attn_block.dot %at, %bt, %acc transpose_b : tensor<64x64xbf16, #nv>, tensor<128x64xbf16, #nv> -> tensor<64x128xf32, #wg>
    return
  }
}

// -----

// wgmma with K = 8: only a register A against an interleaved B, whose
// descriptor can read its 8 columns twice.
#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
#il = #attn_block.nvmma_shared<swizzleBytes = 0, transposed = false>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %a = attn_block.local_alloc : !attn_block.smem<64x8xbf16, #il>
    %b = attn_block.local_alloc : !attn_block.smem<64x8xbf16, #il>
    %at = attn_block.local_load %a : !attn_block.smem<64x8xbf16, #il> -> tensor<64x8xbf16, #il>
    %bt = attn_block.local_load %b : !attn_block.smem<64x8xbf16, #il> -> tensor<64x8xbf16, #il>
    %acc = tensor.splat %x : tensor<64x64xf32, #wg>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.dot': a wgmma dot with K = 8 takes A from registers and B interleaved (swizzleBytes = 0), whose descriptor reads its 8 columns twice
    %s = attn_block.dot %at, %bt, %acc transpose_b : tensor<64x8xbf16, #il>, tensor<64x8xbf16, #il> -> tensor<64x64xf32, #wg>
    return
  }
}

// -----

// wgmma descriptors: the 128-byte swizzle or the interleaved layout only.
#nv64 = #attn_block.nvmma_shared<swizzleBytes = 64, transposed = false>
gpu.module @m {
  func.func private @k() attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %a = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv64>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.local_load': wgmma descriptors are lowered for 2-D 16-bit buffers of 8 * k rows in the 128-byte swizzle {{.*}} or interleaved (swizzleBytes = 0, 8 * n columns)
    %at = attn_block.local_load %a : !attn_block.smem<64x64xbf16, #nv64> -> tensor<64x64xbf16, #nv64>
    return
  }
}

// -----

// A warpgroup's accumulator covers 16 rows per warp.
#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    // CHECK: error: attn-block-to-gpu cannot lower 'tensor.splat': layout #attn_block.mma<version = 3{{.*}}: a wgmma (mma version 3) tile must have 16 * warps rows
    %acc = tensor.splat %x : tensor<128x64xf32, #wg>
    return
  }
}

// -----

// cp.async into nvmma_shared: the 128-byte swizzle of 64-column panels.
#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
gpu.module @m {
  func.func private @k(%src: memref<?x?x?x32xbf16>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %a = attn_block.local_alloc : !attn_block.smem<64x32xbf16, #nv>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.async_copy': cp.async into #attn_block.nvmma_shared is lowered for 16-bit tiles of 8 * k rows in the 128-byte swizzle (64 * n columns) or interleaved (swizzleBytes = 0, 8 * n columns)
    %t = attn_block.async_copy %src[%c0, %c0, %c0, %c0] dims [2, 3] padding 0.0 into %a : memref<?x?x?x32xbf16> -> !attn_block.smem<64x32xbf16, #nv>
    return
  }
}

// -----

// Global loads into register layouts: 1-D slice tiles (FoX's G) and 2-D
// accumulator tiles (PaTH's f32 q and k, MTA's shifted score tiles);
// operand tiles go through shared memory.
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#A = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
gpu.module @m {
  func.func private @k(%m: memref<?x64xbf16>, %i: index) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.load': global loads into register layouts are lowered for 1-D slice or blocked tiles and 2-D mma accumulator or blocked tiles only
    %t = attn_block.load %m[%i, %c0] dims [0, 1] padding 0.0 : memref<?x64xbf16> -> tensor<64x64xbf16, #A>
    return
  }
}

// -----

// mma.sync reads a transposed A from shared memory only.
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
gpu.module @m {
  func.func private @k(%x: bf16, %y: bf16) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %a = tensor.splat %x : tensor<64x64xbf16, #opA>
    %b = tensor.splat %y : tensor<64x64xbf16, #opB>
    %cz = arith.constant 0.0 : f32
    %z = tensor.splat %cz : tensor<64x64xf32, #mma>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.dot': mma.sync reads a transposed A from shared memory (a local_load, ldmatrix.trans)
    %d = attn_block.dot %a, %b, %z transpose_a : tensor<64x64xbf16, #opA>, tensor<64x64xbf16, #opB> -> tensor<64x64xf32, #mma>
    return
  }
}

// -----

// A bulk reduction reads whole rows as they lie: not from a swizzled
// buffer.
#sh = #attn_block.shared<vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]>
gpu.module @m {
  func.func private @k(%m: memref<?x64xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %b = attn_block.local_alloc : !attn_block.smem<64x64xf32, #sh>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.async_store_add': a bulk store reads whole rows as they lie: the buffer must be #attn_block.padded_shared or unswizzled #attn_block.shared
    attn_block.async_store_add %b into %m[%c0, %c0] dims [0, 1] : !attn_block.smem<64x64xf32, #sh> -> memref<?x64xf32>
    return
  }
}

// -----

// ... and adds whole rows into 16-byte aligned memory: not past the
// memref's columns.
#sh = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
gpu.module @m {
  func.func private @k(%m: memref<?x32xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %b = attn_block.local_alloc : !attn_block.smem<64x64xf32, #sh>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.async_store_add': a bulk store adds whole rows at 16-byte bounds: the columns must be the memref's contiguous innermost dim, of static size, from a constant column, every row 16-byte aligned
    attn_block.async_store_add %b into %m[%c0, %c0] dims [0, 1] : !attn_block.smem<64x64xf32, #sh> -> memref<?x32xf32>
    return
  }
}
