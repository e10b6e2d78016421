// MTA's GPU form (MtaToBlockGpu.cpp, docs/block-program.md "MTA's GPU
// form"): attn-to-block{target=sm_90} lowers the released configuration to
// the rope kernels (q, k rotated into hi/lo pairs), the Toeplitz kernels of
// the two convs, the LSE pass and the output pass over (64-query tile,
// batch x head group) programs, 4 warps, mma.sync layouts. Each stencil
// stores its tiles as an f16 pair (hi, lo) into padded shared buffers and
// runs c_q steps of tensor-core dots: the pair's windows at row R + a times
// one query tap's Toeplitz rows, the next tap's copied in meanwhile (two
// stages). The rows above come from one score tile ending 16 rows above the
// output tile (overlapping it). Pre-only: one kernel whose softmax state is
// the key loop's carried values (no mixing: one head per program), no state
// scratch. On sm_80 (163 KB) both passes take the dots, the output pass
// with one stage.
// RUN: attn-opt %attn_examples/mta_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" | FileCheck %s
// RUN: attn-opt %attn_examples/mta_pre_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" | FileCheck %s --check-prefix=PRE
// RUN: attn-opt %attn_examples/mta_bf16.mlir --attn-fuse --attn-to-block="target=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: not attn-opt %s --split-input-file --attn-to-block="target=sm_90" 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-DAG: #[[P88:.*]] = #attn_block.padded_shared<rowStride = 88>
// CHECK-DAG: #[[P72:.*]] = #attn_block.padded_shared<rowStride = 72>
// CHECK-DAG: #[[P104:.*]] = #attn_block.padded_shared<rowStride = 104>
// CHECK: func.func private @main_rope_q(
// CHECK-SAME: %arg4: memref<?x?x?x128xbf16>)
// Program (h c_q + a, k) writes row k of Toe_a[k, n] = theta[h, a, k - n -
// 3] (0 outside the band), f16, as wide as pass 2's pre conv (96 x 80).
// CHECK: func.func private @main_mta_toeplitz_pre(%{{.*}}: memref<?x6x11xf32>, %{{.*}}: memref<?x6x96x80xf16>)
// CHECK-SAME: attn_block.num_warps = 1
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %c80
// CHECK: %[[D:.*]] = arith.subi %{{.*}}, %c3
// CHECK: arith.cmpi slt, %[[D]], %c11
// CHECK: memref.load
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[N]]] : memref<?x6x96x80xf16>
// CHECK: func.func private @main_mta_toeplitz_post(%{{.*}}: memref<?x6x11xf32>, %{{.*}}: memref<?x6x80x64xf16>)
// CHECK: func.func private @main_mta_lse_kernel(
// CHECK-SAME: attn_block.num_warps = 4
// A program's part: px mod 4 of the walk's n tiles [n s / 4, n (s + 1) / 4).
// CHECK: arith.remui %{{.*}}, %c4
// q, k and their lo halves (no V buffer in the LSE pass), the pair [80, 80]
// (score rows -16 .. 63) and two taps' Toe_a [2 x 80, 64].
// CHECK: attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<80x128xbf16
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<64x128xbf16
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<80x128xbf16
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<80x80xf16, #[[P88]]>
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<80x80xf16, #[[P88]]>
// CHECK-NEXT: attn_block.local_alloc : !attn_block.smem<160x64xf16, #[[P72]]>
// The scores as q_hi k_hi^T + q_lo k_hi^T + q_hi k_lo^T (RoPE's pairs).
// CHECK-COUNT-3: attn_block.dot {{.*}} transpose_b : tensor<64x128xbf16, {{.*}} -> tensor<64x80xf32, #mma>
// S = hi + lo into the pair's windows: the tile from 16 rows above at row
// 0, a barrier, the output tile at row 16 (over the rows they share).
// CHECK: %[[HI:.*]] = arith.truncf %{{.*}} : tensor<64x80xf32, #mma> to tensor<64x80xf16, #mma>
// CHECK: %[[EXT:.*]] = arith.extf %[[HI]]
// CHECK: %[[REST:.*]] = arith.subf %{{.*}}, %[[EXT]]
// CHECK: %[[LO:.*]] = arith.truncf %[[REST]]
// CHECK: %[[W0:.*]] = attn_block.local_subview %{{.*}}[%c0{{.*}}, %c0{{.*}}] : !attn_block.smem<80x80xf16, #[[P88]]> -> !attn_block.smem<64x80xf16, #[[P88]]>
// CHECK: attn_block.local_store %[[HI]], %[[W0]] : tensor<64x80xf16, #mma> -> !attn_block.smem<64x80xf16, #[[P88]]>
// CHECK: attn_block.local_store %[[LO]]
// CHECK: attn_block.barrier
// CHECK: attn_block.local_subview %{{.*}}[%c16{{.*}}, %c0{{.*}}] : !attn_block.smem<80x80xf16, #[[P88]]> -> !attn_block.smem<64x80xf16, #[[P88]]>
// CHECK: attn_block.local_store
// CHECK: attn_block.barrier
// Tap 0's Toe_a into stage 0, then the 6 query taps: wait for tap a, a
// barrier, tap a + 1 into the other stage, the windows at row 16 - 5 + a.
// CHECK: attn_block.async_copy %{{.*}}[%{{.*}}, %c0{{.*}}, %{{.*}}, %{{.*}}] dims [2, 3] {{.*}} : memref<?x6x96x80xf16> -> !attn_block.smem<80x64xf16, #[[P72]]>
// CHECK: attn_block.async_commit_group
// CHECK: scf.for %[[A:.*]] = %{{.*}} to %c6 {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<64x64xf32, #mma>)
// CHECK: attn_block.async_wait pending 0
// CHECK: attn_block.barrier
// CHECK: scf.if
// CHECK: attn_block.async_copy {{.*}} : memref<?x6x96x80xf16> -> !attn_block.smem<80x64xf16, #[[P72]]>
// CHECK: attn_block.async_commit_group
// CHECK: %[[R:.*]] = arith.addi %[[A]], %c11
// CHECK: attn_block.local_subview %{{.*}}[%[[R]], %{{.*}}] : !attn_block.smem<80x80xf16, #[[P88]]> -> !attn_block.smem<64x80xf16, #[[P88]]>
// CHECK: attn_block.dot {{.*}} : tensor<64x80xf16, #{{.*}}>, tensor<80x64xf16, #{{.*}}> -> tensor<64x64xf32, #mma>
// CHECK: attn_block.dot {{.*}} : tensor<64x80xf16, #{{.*}}>, tensor<80x64xf16, #{{.*}}> -> tensor<64x64xf32, #mma>
// CHECK-NEXT: scf.yield
// CHECK: func.func private @main_mta_lse_merge(
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(
// CHECK: math.exp2
// CHECK: func.func private @main_mta_output_kernel(
// CHECK: attn_block.local_alloc : !attn_block.smem<96x128xbf16
// Pass 2: the pair [96, 96] (score rows -32 .. 63: two score tiles),
// two stages of Toe_a [96, 80]; the post stencil's pair [80, 80] (logit
// rows -16 .. 63) and Toe_a stages are windows of them.
// CHECK: %[[SHI:.*]] = attn_block.local_alloc : !attn_block.smem<96x96xf16, #[[P104]]>
// CHECK: attn_block.local_alloc : !attn_block.smem<96x96xf16, #[[P104]]>
// CHECK: %[[STOE:.*]] = attn_block.local_alloc : !attn_block.smem<192x80xf16, #[[P88]]>
// CHECK: attn_block.local_subview %[[SHI]][%c0{{.*}}, %c0{{.*}}] : !attn_block.smem<96x96xf16, #[[P104]]> -> !attn_block.smem<80x80xf16, #[[P104]]>
// CHECK: attn_block.local_subview %[[STOE]][%c0{{.*}}, %c0{{.*}}] : !attn_block.smem<192x80xf16, #[[P88]]> -> !attn_block.smem<160x64xf16, #[[P88]]>
// CHECK-COUNT-2: attn_block.dot {{.*}} transpose_b : tensor<64x128xbf16, {{.*}} -> tensor<64x96xf32, #mma>
// CHECK-NOT: attn_block.dot {{.*}} transpose_b : tensor<64x128xbf16, {{.*}} -> tensor<64x96xf32, #mma>
// CHECK: attn_block.dot {{.*}} transpose_b : tensor<64x128xbf16, {{.*}} -> tensor<64x96xf32, #mma>
// Two logit row tiles (-1, 0) per pre tap, then the post stencil.
// CHECK: iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<64x80xf32, #mma>, tensor<64x80xf32, #mma>)
// CHECK: scf.if
// CHECK: attn_block.async_copy {{.*}} : memref<?x6x96x80xf16> -> !attn_block.smem<96x80xf16, #[[P88]]>
// CHECK-COUNT-4: attn_block.dot {{.*}} : tensor<64x96xf16, #{{.*}}>, tensor<96x80xf16, #{{.*}}> -> tensor<64x80xf32, #mma>
// CHECK: iter_args(%{{.*}} = %{{.*}}) -> (tensor<64x64xf32, #mma>)
// CHECK: attn_block.async_copy {{.*}} : memref<?x6x80x64xf16> -> !attn_block.smem<80x64xf16, #[[P88]]>
// CHECK-COUNT-2: attn_block.dot {{.*}} : tensor<64x80xf16, #{{.*}}>, tensor<80x64xf16, #{{.*}}> -> tensor<64x64xf32, #mma>
// CHECK: attn_block.launch @main_rope_table
// CHECK: attn_block.launch @main_rope_q
// CHECK: attn_block.launch @main_rope_k
// The Toeplitz grids: (H c_q, K).
// CHECK: %[[HC:.*]] = arith.muli %{{.*}}, %c6
// CHECK: attn_block.launch @main_mta_toeplitz_pre grid(%[[HC]], %c96
// CHECK: attn_block.launch @main_mta_toeplitz_post grid(%{{.*}}, %c80
// The passes take 4 parts of each query tile's walk (grid x = tiles x 4),
// each merge one program per (row tile, batch x head): the parts' (m, l)
// into the LSE, their P V sums (then the norm) into the output.
// CHECK: %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c64
// CHECK: %[[PARTS:.*]] = arith.muli %[[TILES]], %c4
// CHECK: %[[PM:.*]] = memref.alloc(%c4{{.*}}) : memref<?x?x?x?xf32>
// CHECK: %[[PO:.*]] = memref.alloc(%c4{{.*}}) : memref<?x?x?x?x128xf32>
// CHECK: attn_block.launch @main_mta_lse_kernel grid(%[[PARTS]],
// CHECK: attn_block.launch @main_mta_lse_merge grid(%[[TILES]],
// CHECK: attn_block.launch @main_mta_output_kernel grid(%[[PARTS]],
// CHECK: attn_block.launch @main_mta_output_merge grid(%[[TILES]],

// PRE: func.func private @main_mta_toeplitz_pre(%{{.*}}: memref<?x6x11xf32>, %{{.*}}: memref<?x6x80x64xf16>)
// PRE: func.func private @main_mta_kernel(
// PRE: %{{.*}}:3 = scf.for {{.*}} iter_args(
// PRE-SAME: tensor<64xf32, #{{.*}}>, tensor<64xf32, #{{.*}}>, tensor<64x128xf32, #{{.*}}>
// PRE: attn_block.local_store
// PRE: attn_block.dot {{.*}} : tensor<64x80xf16, #{{.*}}>, tensor<80x64xf16, #{{.*}}> -> tensor<64x64xf32, #mma>
// PRE-NOT: func.func private
// PRE: attn_block.launch @main_mta_toeplitz_pre
// PRE: attn_block.launch @main_mta_kernel

// SM80: func.func private @main_mta_toeplitz_pre(%{{.*}}: memref<?x6x11xf32>, %{{.*}}: memref<?x6x96x80xf16>)
// SM80: func.func private @main_mta_toeplitz_post(
// SM80: func.func private @main_mta_lse_kernel(
// SM80: attn_block.local_alloc : !attn_block.smem<160x64xf16
// SM80: func.func private @main_mta_output_kernel(
// SM80: attn_block.local_alloc : !attn_block.smem<96x96xf16
// SM80: attn_block.local_alloc : !attn_block.smem<96x80xf16
// SM80-NOT: memref<?x?x192x96xf32>
// SM80: attn_block.launch @main_mta_output_kernel

// BAD: error: attn-to-block{target=sm_90}: the MTA GPU form takes bf16 or f16 q, k, v (the m16n8k16 mma.sync operands)
func.func @f32(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x64x64xf32>, %v: tensor<1x1x64x64xf32>,
               %tp: tensor<1x2x3xf32>) -> tensor<1x1x64x64xf32> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%tp)
      : (tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x2x3xf32>) -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

// BAD: error: attn-to-block{target=sm_90}: the MTA GPU form takes key-query kernels of up to 65 x 17 taps (a row tile above, 8 keys each side), got 2 x 19
func.func @wide(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>,
                %tp: tensor<1x2x19xf32>) -> tensor<1x1x64x64xbf16> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%tp)
      : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x2x19xf32>) -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}

// -----

// BAD: error: attn-to-block{target=sm_90}: the MTA GPU form needs head dims 64 or 128, got 32
func.func @d32(%q: tensor<1x1x64x32xbf16>, %k: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x32xbf16>,
               %tp: tensor<1x2x3xf32>) -> tensor<1x1x64x32xbf16> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%tp)
      : (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x2x3xf32>) -> tensor<1x1x64x32xbf16>
  return %o : tensor<1x1x64x32xbf16>
}
