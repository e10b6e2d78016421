// attn_block.reduce along axis 0 (column sums of an mma tile) and the
// reducing store of a slice: they print and parse; the CPU reduces with
// linalg.reduce over dim 0 and adds with memref.atomic_rmw; on the GPU each
// thread adds its rows, xor shuffles 4, 8 and 16 join the quads, quad 0 of
// each warp writes the warp's partials into the scratch buffer, and after a
// barrier every thread adds the 4 warps' rows in warp order (a second
// barrier frees the buffer); the slice's reducing store adds from the 4
// threads of quad 0 of warp 0 only (tid < 4), that of a row slice from the
// first lane of each quad (tid % 4 = 0). FoX's row sums of dS in the
// one-walk backward (FlashGradToBlock.cpp) are built of these.
// RUN: attn-opt %s | attn-opt | FileCheck %s --check-prefix=ROUND
// RUN: attn-opt %s --attn-block-strip-gpu --attn-block-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --attn-block-to-gpu | FileCheck %s --check-prefix=GPU
// A thread holds 2 columns of each of the 8 n8 tiles: 16 column registers,
// each combined over 3 shuffles.
// RUN: attn-opt %s --attn-block-to-gpu | awk "/gpu.func @column_sums/,/gpu.return/" | grep -c "gpu.shuffle  xor" | FileCheck %s --check-prefix=SHUFFLES
// SHUFFLES: {{^}}48{{$}}

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#col = #attn_block.slice<dim = 0, parent = #mma>
#row = #attn_block.slice<dim = 1, parent = #mma>
#p = #attn_block.padded_shared<rowStride = 72>
gpu.module @m {
  // ROUND-LABEL: func.func private @column_sums
  // ROUND: attn_block.reduce sum %{{.*}} axis 0 scratch(%{{.*}} : !attn_block.smem<4x64xf32, #{{.*}}>) : tensor<64x64xf32, #{{.*}}> -> tensor<64xf32, #{{.*}}>
  // ROUND: attn_block.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] dims [1] add :
  // CPU-LABEL: func.func private @column_sums
  // CPU: linalg.reduce
  // CPU-SAME: dimensions = [0]
  // CPU: memref.atomic_rmw addf
  // GPU-LABEL: gpu.func @column_sums
  // GPU: gpu.shuffle  xor %{{.*}}, %c4_i32
  // GPU: gpu.shuffle  xor %{{.*}}, %c8_i32
  // GPU: gpu.shuffle  xor %{{.*}}, %c16_i32
  // GPU: arith.cmpi ult, %{{.*}}, %c4
  // GPU: scf.if
  // GPU: memref.store {{.*}} : memref<?xf32, #gpu.address_space<workgroup>>
  // GPU: gpu.barrier
  // GPU-COUNT-4: memref.load {{.*}} : memref<?xf32, #gpu.address_space<workgroup>>
  // GPU: gpu.barrier
  // GPU: arith.cmpi ult, %thread_id_x{{.*}}, %c4{{.*}} : index
  // GPU: scf.if
  // GPU: memref.atomic_rmw addf
  func.func private @column_sums(%s: memref<64x64xf32>, %o: memref<?x?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %h = attn_block.program_id 1
    %buf = attn_block.local_alloc : !attn_block.smem<4x64xf32, #p>
    %x = attn_block.load %s[%c0, %c0] dims [0, 1] padding 0.0 : memref<64x64xf32> -> tensor<64x64xf32, #mma>
    %c = attn_block.reduce sum %x axis 0 scratch(%buf : !attn_block.smem<4x64xf32, #p>) : tensor<64x64xf32, #mma> -> tensor<64xf32, #col>
    attn_block.store %c, %o[%h, %c0] dims [1] add : tensor<64xf32, #col> -> memref<?x?xf32>
    return
  }

  // GPU-LABEL: gpu.func @row_sums
  // GPU: gpu.shuffle  xor %{{.*}}, %c2_i32
  // GPU: %[[LANE:.*]] = arith.remui %thread_id_x{{.*}}, %c4{{.*}} : index
  // GPU: arith.cmpi eq, %[[LANE]], %c0
  // GPU: scf.if
  // GPU: memref.atomic_rmw addf
  func.func private @row_sums(%s: memref<64x64xf32>, %o: memref<?x?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %h = attn_block.program_id 1
    %x = attn_block.load %s[%c0, %c0] dims [0, 1] padding 0.0 : memref<64x64xf32> -> tensor<64x64xf32, #mma>
    %r = attn_block.reduce sum %x axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
    attn_block.store %r, %o[%h, %c0] dims [1] add : tensor<64xf32, #row> -> memref<?x?xf32>
    return
  }
}
