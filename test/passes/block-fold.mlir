// attn_block.fold: the [M, N] tile's column blocks of `width` columns
// summed, result[i, c] = sum_k input[i, k * width + c]. The flash kernel's
// GPU form carries its softmax row sums folded to 8 columns and reduces
// them over the lanes once after the key loop.
//
// Round trip, then the two backends: on the GPU an mma tile folds by
// in-thread adds only (the two columns a thread holds of every n8 tile are
// the same columns modulo 8: a [64, 32] tile over 4 warps is 16 registers
// per thread, folded into 4 with 12 adds and no shuffle); on the CPU it is
// a linalg.reduce over the middle axis of the [M, N / w, w] view.
//
// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s --split-input-file --attn-block-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --split-input-file --attn-block-strip-gpu --attn-block-to-cpu | FileCheck %s --check-prefix=CPU

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
gpu.module @m {
  // ROUND-LABEL: func.func private @k
  // ROUND: attn_block.fold %{{.*}} width 8 : tensor<64x32xf32, #mma> -> tensor<64x8xf32, #mma>
  // GPU-LABEL: gpu.func @k
  // GPU-NOT: gpu.shuffle
  // GPU-COUNT-12: arith.addf
  // GPU-NOT: arith.addf
  // GPU-NOT: gpu.shuffle
  // GPU: gpu.return
  // CPU-LABEL: func.func private @k
  // CPU: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [64, 4, 8] : tensor<64x32xf32> into tensor<64x4x8xf32>
  // CPU: linalg.reduce ins(%{{.*}} : tensor<64x4x8xf32>) outs(%{{.*}} : tensor<64x8xf32>) dimensions = [1]
  func.func private @k(%src: memref<?x32xf32>, %dst: memref<?x8xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %row = attn_block.program_id 0
    %t = attn_block.load %src[%row, %c0] dims [0, 1] padding 0.0 : memref<?x32xf32> -> tensor<64x32xf32, #mma>
    %f = attn_block.fold %t width 8 : tensor<64x32xf32, #mma> -> tensor<64x8xf32, #mma>
    attn_block.store %f, %dst[%row, %c0] dims [0, 1] : tensor<64x8xf32, #mma> -> memref<?x8xf32>
    return
  }
}
