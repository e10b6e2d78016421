// attn_block.load of a 2-D tile in an mma accumulator layout (PaTH's f32
// transport starts from q and k there): each thread loads its registers,
// one scf.if per row its registers sit on (rows outside the memref read
// the padding), the inverse of the register store.
//
// A tile narrower than the memref's row, or at another column (MTA's
// stencil reads its score tile shifted by each tap), checks every
// register's column too: a clamped address and a select. A 1-D slice tile
// (MTA's row statistics) stores one bounds-checked scalar per register.
// RUN: attn-opt %s --split-input-file --attn-block-to-gpu | FileCheck %s

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  // CHECK-LABEL: gpu.func @k
  // A [64, 16] tile over 4 warps: rows warp*16 + lane/4 (+8), columns
  // 2*(lane%4) (+1) of each n8 tile: two rows of 4 registers per thread.
  // The columns lie inside the row (a constant first column): each
  // register pair is one aligned 8-byte load (kernel buffers are 16-byte
  // aligned, the row length and the pair's column even).
  // CHECK: %[[OK:.*]] = arith.andi
  // CHECK: scf.if %[[OK]] -> (f32, f32, f32, f32)
  // CHECK-COUNT-2: vector.load {{.*}} {alignment = 8 : i64} : memref<?x16xf32>, vector<2xf32>
  // CHECK: } else {
  // CHECK-NEXT: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32
  // CHECK: scf.if {{.*}} -> (f32, f32, f32, f32)
  // CHECK-COUNT-2: vector.load
  // CHECK-NOT: memref.load
  // CHECK: vector.store {{.*}} {alignment = 8 : i64}
  // (The row comes from the program id: the flat-pointer ABI passes
  // memrefs and their sizes only.)
  func.func private @k(%src: memref<?x16xf32>, %dst: memref<?x16xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %row = attn_block.program_id 0
    %t = attn_block.load %src[%row, %c0] dims [0, 1] padding -1.5 : memref<?x16xf32> -> tensor<64x16xf32, #mma>
    attn_block.store %t, %dst[%row, %c0] dims [0, 1] : tensor<64x16xf32, #mma> -> memref<?x16xf32>
    return
  }
}

// -----

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#row = #attn_block.slice<dim = 1, parent = #mma>
gpu.module @m {
  // CHECK-LABEL: gpu.func @shifted
  // CHECK: scf.if {{.*}} -> (f32, f32, f32, f32)
  // CHECK: arith.maxsi
  // CHECK: arith.minsi
  // CHECK: memref.load
  // CHECK: arith.select
  // CHECK-LABEL: gpu.func @rowstats
  // Rows warp*16 + lane/4 and + 8: two guarded scalar stores.
  // CHECK-COUNT-2: memref.store
  // CHECK-NOT: memref.store
  func.func private @shifted(%src: memref<?x32xf32>, %dst: memref<?x16xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %row = attn_block.program_id 0
    %col = attn_block.program_id 1
    %t = attn_block.load %src[%row, %col] dims [0, 1] padding 0.0 : memref<?x32xf32> -> tensor<64x16xf32, #mma>
    attn_block.store %t, %dst[%row, %c0] dims [0, 1] : tensor<64x16xf32, #mma> -> memref<?x16xf32>
    return
  }
  func.func private @rowstats(%dst: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %row = attn_block.program_id 0
    %x = arith.constant 2.5 : f32
    %t = tensor.splat %x : tensor<64xf32, #row>
    attn_block.store %t, %dst[%row] dims [0] : tensor<64xf32, #row> -> memref<?xf32>
    return
  }
}

// -----

// in_bounds (a scratch the lowering sized itself, as MTA's score tiles):
// no guard on the load or the store.
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  // CHECK-LABEL: gpu.func @scratch
  // CHECK-NOT: scf.if
  // CHECK-COUNT-4: memref.load
  // CHECK-NOT: scf.if
  // CHECK: vector.store
  // CHECK-NOT: scf.if
  // CHECK: gpu.return
  func.func private @scratch(%src: memref<?x32xf32>, %dst: memref<?x16xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %row = attn_block.program_id 0
    %col = attn_block.program_id 1
    %t = attn_block.load %src[%row, %col] dims [0, 1] padding 0.0 in_bounds : memref<?x32xf32> -> tensor<64x16xf32, #mma>
    attn_block.store %t, %dst[%row, %c0] dims [0, 1] in_bounds : tensor<64x16xf32, #mma> -> memref<?x16xf32>
    return
  }
}

// -----

// A 2-D blocked tile (the rope kernels' rows, RopeToBlockGpu.cpp): 4
// threads a row of 8 consecutive columns each, 8 rows a warp, 4 warps: a
// [32, 32] tile is one repetition, so a thread holds one row of 8 bf16.
// The row is guarded; the 8 columns are one 16-byte load and one 16-byte
// store (the row length 64 and the first column 32 are multiples of 8).
// The thread's base: row (warp * 8 + lane / 4), column (lane % 4) * 8.
#blk = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
gpu.module @m {
  // CHECK-LABEL: gpu.func @rows
  // CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
  // CHECK: arith.remui %[[LANE]], %c4
  // CHECK: arith.divui %[[LANE]], %c4
  // CHECK: scf.if %{{.*}} -> (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16)
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
  // CHECK-NOT: memref.load
  // CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
  // CHECK-NOT: memref.store
  // CHECK: gpu.return
  func.func private @rows(%src: memref<?x64xbf16>, %dst: memref<?x64xbf16>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c32 = arith.constant 32 : index
    %row = attn_block.program_id 0
    %t = attn_block.load %src[%row, %c32] dims [0, 1] padding 0.0 : memref<?x64xbf16> -> tensor<32x32xbf16, #blk>
    attn_block.store %t, %dst[%row, %c32] dims [0, 1] : tensor<32x32xbf16, #blk> -> memref<?x64xbf16>
    return
  }
}

// -----

// A first column not a multiple of the run (4): each element is its own
// access. f32 runs of 8 are two 16-byte accesses' worth, claimed 16-byte
// aligned (the buffers' alignment), not 32.
#blk = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
gpu.module @m {
  // CHECK-LABEL: gpu.func @odd
  // CHECK-NOT: vector.load
  // CHECK-COUNT-8: memref.load
  // CHECK-NOT: vector.store
  // CHECK-COUNT-8: memref.store
  // CHECK-LABEL: gpu.func @wide
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?x32xf32>, vector<8xf32>
  // CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<?x32xf32>, vector<8xf32>
  func.func private @odd(%src: memref<?x64xbf16>, %dst: memref<?x64xbf16>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c4 = arith.constant 4 : index
    %row = attn_block.program_id 0
    %t = attn_block.load %src[%row, %c4] dims [0, 1] padding 0.0 : memref<?x64xbf16> -> tensor<32x32xbf16, #blk>
    attn_block.store %t, %dst[%row, %c4] dims [0, 1] : tensor<32x32xbf16, #blk> -> memref<?x64xbf16>
    return
  }
  func.func private @wide(%src: memref<?x32xf32>, %dst: memref<?x32xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %row = attn_block.program_id 0
    %t = attn_block.load %src[%row, %c0] dims [0, 1] padding 0.0 : memref<?x32xf32> -> tensor<32x32xf32, #blk>
    attn_block.store %t, %dst[%row, %c0] dims [0, 1] : tensor<32x32xf32, #blk> -> memref<?x32xf32>
    return
  }
}

// -----

// Slices of a 2-D blocked layout (the rope table's positions and
// frequencies): a row iota holds the thread's rows, a column iota its
// columns, and their broadcasts into the parent pick the matching
// register: one element a thread ([16, 8] over 4 threads-rows x 8 lanes
// per row, 4 warps), so each side is one scalar.
#blk = #attn_block.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #attn_block.slice<dim = 1, parent = #blk>
#cols = #attn_block.slice<dim = 0, parent = #blk>
gpu.module @m {
  // CHECK-LABEL: gpu.func @grid
  // CHECK-COUNT-2: arith.index_cast %{{.*}} : index to i64
  // CHECK: arith.addi %{{.*}}, %{{.*}} : i64
  // CHECK-NOT: arith.addi %{{.*}}, %{{.*}} : i64
  // CHECK: arith.sitofp %{{.*}} : i64 to f32
  // CHECK: memref.store
  // CHECK-NOT: memref.store
  func.func private @grid(%dst: memref<?x8xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %row = attn_block.program_id 0
    %r = attn_block.iota %row : tensor<16xi64, #rows>
    %c = attn_block.iota %c0 : tensor<8xi64, #cols>
    %rb = attn_block.broadcast %r axis 1 : tensor<16xi64, #rows> -> tensor<16x8xi64, #blk>
    %cb = attn_block.broadcast %c axis 0 : tensor<8xi64, #cols> -> tensor<16x8xi64, #blk>
    %s = arith.addi %rb, %cb : tensor<16x8xi64, #blk>
    %f = arith.sitofp %s : tensor<16x8xi64, #blk> to tensor<16x8xf32, #blk>
    attn_block.store %f, %dst[%row, %c0] dims [0, 1] : tensor<16x8xf32, #blk> -> memref<?x8xf32>
    return
  }
}

// -----

// A store of a tile wider than the memref's row (the GPU forms' padded
// head dims: a [64, 16] tile into rows of 12): every register is stored
// alone, each under a test of its column against the row length, inside
// the row's test.
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  // CHECK-LABEL: gpu.func @narrow_rows
  // CHECK: memref.dim %{{.*}} : memref<?x12xf32>
  // CHECK: %[[W:.*]] = memref.dim %{{.*}} : memref<?x12xf32>
  // CHECK: scf.if
  // CHECK: %[[C:.*]] = arith.cmpi slt, %{{.*}}, %[[W]] : index
  // CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %[[C]] : i1
  // CHECK: scf.if %[[OK]] {
  // CHECK-NEXT: memref.store {{.*}} : memref<?x12xf32>
  // CHECK-NOT: vector.store
  // CHECK: gpu.return
  func.func private @narrow_rows(%src: memref<?x16xf32>, %dst: memref<?x12xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %row = attn_block.program_id 0
    %t = attn_block.load %src[%row, %c0] dims [0, 1] padding 0.0 : memref<?x16xf32> -> tensor<64x16xf32, #mma>
    attn_block.store %t, %dst[%row, %c0] dims [0, 1] : tensor<64x16xf32, #mma> -> memref<?x12xf32>
    return
  }
}
