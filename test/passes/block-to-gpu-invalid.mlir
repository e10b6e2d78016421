// What the block-program GPU path refuses, with a diagnostic naming the op
// and the layout or feature, never a crash.
//
// RUN: not attn-opt %s --split-input-file --attn-block-to-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=block chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: not attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=bogus" 2>&1 | FileCheck %s --check-prefix=BOGUS

// WGMMA: lowering=block has no wgmma (sm_90a) kernel yet
// BOGUS: GPU option lowering must be direct or block, got 'bogus'

#blocked = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %s = tensor.splat %x : tensor<64x64xf32, #mma>
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.convert_layout': layout #attn_block.blocked<{{.*}}> of tensor<64x64xf32, #attn_block.blocked<{{.*}}>>: only mma.sync layouts
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
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.reduce': reductions along the rows of an mma tile into its row slice only
    %r = attn_block.reduce max %s axis 0 : tensor<64x64xf32, #mma> -> tensor<64xf32, #col>
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

// Global loads into register layouts: 1-D slice tiles only (FoX's G).
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  func.func private @k(%m: memref<?x?xf32>, %i: index) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    // CHECK: error: attn-block-to-gpu cannot lower 'attn_block.load': global loads into register layouts are lowered for 1-D slice tiles only
    %t = attn_block.load %m[%i, %i] dims [0, 1] padding 0.0 : memref<?x?xf32> -> tensor<64x64xf32, #mma>
    return
  }
}

// -----

// The attention ABI's G is [B, Hq, S] f32.
gpu.module @m {
  func.func private @attention(%q: memref<?x?x?x64xbf16>, %k: memref<?x?x?x64xbf16>, %v: memref<?x?x?x64xbf16>, %g: memref<?x?xf32>, %o: memref<?x?x?x64xbf16>) attributes {attn_block.abi = "attention", attn_block.kernel, attn_block.num_warps = 4 : i64} {
    // CHECK: error: attn-block-to-gpu: the "attention" ABI's G is a [B, Hq, S] f32 memref, got 'memref<?x?xf32>'
    return
  }
}
