// RoPE, FoX and RoPE+FoX on the block-program GPU path
// (attn-attention-to-gpu{lowering=block}, FlashToBlockGpu.cpp): the rope
// prologue rotates q and k (the kernel reads rotated tiles), the gate
// prologue writes G' = -gamma log2(e) cumsum(g) [B, Hq, S] alone (no key tile
// records: GpuPlan::blockProgram), and the kernel splits the bias G'_j -
// G'_i as the direct kernels do: S = Q K^T accumulates onto the key term
// u_j = (G'_j - G'_r) / c (r the block's last query row), and the row term
// G'_r - G'_i joins the row max and the exponent's offset.
//
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-attention-to-gpu="lowering=block chip=sm_90" | FileCheck %s --check-prefix=FOX
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-attention-to-gpu="lowering=block chip=sm_80" --attn-block-to-gpu | FileCheck %s --check-prefix=LOWER
// RUN: attn-opt %attn_examples/rope_bf16.mlir --attn-fuse --attn-attention-to-gpu="lowering=block chip=sm_90" | FileCheck %s --check-prefix=ROPE
// RUN: attn-opt %attn_examples/rope_fox_bf16.mlir --attn-to-gpu="lowering=block chip=sm_90 format=isa" | FileCheck %s --check-prefix=ISA
// RUN: attn-opt %attn_examples/rope_fox_bf16.mlir --attn-to-gpu="lowering=block chip=sm_80" | FileCheck %s --check-prefix=BIN
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_80" | FileCheck %s --check-prefix=PREFIX
// D = 128 (two blocks per SM by shared memory): G' of the next key tile is
// loaded a step ahead and carried through the loop; at D = 64 it is not.
// RUN: sed 's/x64x/x128x/g' %attn_examples/fox_bf16.mlir | attn-opt --attn-fuse --attn-attention-to-gpu="lowering=block chip=sm_90a" | FileCheck %s --check-prefix=GAHEAD
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-attention-to-gpu="lowering=block chip=sm_90a" | FileCheck %s --check-prefix=GHERE
// GAHEAD: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %{{.*}}) -> ({{.*}}, index, tensor<64xf32, #[[COL:[^>]*]]>)
// GAHEAD: attn_block.load {{.*}} -> tensor<64xf32, #[[COL]]>
// GAHEAD: scf.yield {{.*}} : {{.*}}, index, tensor<64xf32, #[[COL]]>
// GHERE: scf.for {{.*}} -> (tensor<64xf32, #{{.*}}>, tensor<64x8xf32, #{{.*}}>, tensor<64x64xf32, #{{.*}}>, index) {

// The gate kernel's output is G alone (B*Hq*S floats), and attention is a
// dependent launch (its griddep_wait: block-gpu-dependent-launch.mlir).
// FOX: attn_launch.buffer<"gate_prefix", bytes = ()[s0, s1, s2, s3, s4] -> (((s0 * s1) * s4) * 4)>
// FOX: #attn_launch.kernel<name = @main_gpu::@gate
// FOX: #attn_launch.kernel<name = @main_gpu::@attention, {{.*}}, args = [#attn_launch.arg<input 0, {{.*}}>, #attn_launch.arg<input 1, {{.*}}>, #attn_launch.arg<input 2, {{.*}}>, #attn_launch.arg<output, {{.*}}>, #attn_launch.arg<scratch 0, {{.*}}>, {{.*}}], dependent = true>]>
// FOX: attn.plan = {{{.*}}block_program = 1 : i64
// FOX: func.func private @attention(%[[Q:.*]]: memref<?x?x?x64xbf16>, %[[K:.*]]: memref<?x?x?x64xbf16>, %[[V:.*]]: memref<?x?x?x64xbf16>, %[[G:.*]]: memref<?x?x?xf32>, %[[O:.*]]: memref<?x?x?x64xbf16>)
// FOX-SAME: attn_block.abi = "attention"
// G' at the query rows, once: the row slice of the accumulator layout.
// FOX: %[[GI:.*]] = attn_block.load %[[G]][%{{.*}}, %{{.*}}, %{{.*}}] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32, #[[ROW:.*]]>
// G'_r (a scalar load) and the row term, once.
// FOX: %[[GR:.*]] = memref.load %[[G]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?xf32>
// FOX: %[[GRS:.*]] = tensor.splat %[[GR]] : tensor<64xf32, #[[ROW]]>
// FOX: %[[RT:.*]] = arith.subf %[[GRS]], %[[GI]] : tensor<64xf32, #[[ROW]]>
// FOX: %[[NEGR:.*]] = arith.mulf %[[GR]], %{{.*}} : f32
// FOX: scf.for %[[J:[^ ]*]] =
// G' at the tile's keys (the column slice), first in the step; u as one fma
// per element, broadcast as the S dot's accumulator.
// FOX-NEXT: arith.subi
// FOX-NEXT: %[[GJ:.*]] = attn_block.load %[[G]][%{{.*}}, %{{.*}}, %[[J]]] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<64xf32, #[[COL:.*]]>
// FOX: %[[OFF:.*]] = tensor.splat %[[NEGR]] : tensor<64xf32, #[[COL]]>
// FOX: %[[U:.*]] = math.fma %[[GJ]], %{{.*}}, %[[OFF]] : tensor<64xf32, #[[COL]]>
// FOX-NEXT: %[[UB:.*]] = attn_block.broadcast %[[U]] axis 0 : tensor<64xf32, #[[COL]]> -> tensor<64x64xf32, #[[MMA:.*]]>
// FOX-NEXT: %[[S:.*]] = attn_block.dot %{{.*}}, %{{.*}}, %[[UB]] transpose_b
// No bias per score: the row max takes the row term in its fma.
// FOX-NOT: arith.addf %{{.*}} : tensor<64x64xf32
// FOX: math.fma %{{.*}}, %{{.*}}, %[[RT]] : tensor<64xf32, #[[ROW]]>
// FOX: arith.subf %[[RT]], %{{.*}} : tensor<64xf32, #[[ROW]]>

// The ABI's G (argument 4, flat f32) viewed [B, Hq, S]; each register of a
// slice tile is one scalar load, bounds-checked (padding past S) where the
// thread's slice is not wholly inside.
// LOWER: gpu.func @attention(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %[[GF:.*]]: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel
// LOWER: %[[GV:.*]] = memref.reinterpret_cast %[[GF]] to offset: [0], sizes: [%{{.*}}, %{{.*}}, %{{.*}}], strides: [%{{.*}}, %{{.*}}, 1] : memref<?xf32> to memref<?x?x?xf32>
// G' at the rows (2 registers a thread): both plain loads where the whole
// slice is inside, else one guard each.
// LOWER: scf.if %{{.*}} -> (f32, f32) {
// LOWER: memref.load %[[GV]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?xf32>
// LOWER: scf.if %{{.*}} -> (f32) {
// LOWER-NEXT: memref.load %[[GV]]
// LOWER: scf.for
// G' at a key tile's columns (16 registers), then the S products.
// LOWER: scf.if %{{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// LOWER: memref.load %[[GV]]
// LOWER: nvvm.mma.sync
// LOWER-NOT: attn_block.

// RoPE: the rope kernel rotates q (q_rotated) and k (k_rotated); attention
// reads both and takes no cos/sin tables.
// ROPE: attn_launch.buffer<"q_rotated"
// ROPE: attn_launch.buffer<"k_rotated"
// ROPE: #attn_launch.kernel<name = @main_gpu::@rope,
// ROPE: #attn_launch.kernel<name = @main_gpu::@rope,
// ROPE: #attn_launch.kernel<name = @main_gpu::@attention, {{.*}}, args = [#attn_launch.arg<scratch 2, {{.*}}>, #attn_launch.arg<scratch 3, {{.*}}>, #attn_launch.arg<input 2, {{.*}}>, #attn_launch.arg<output, {{.*}}>, #attn_launch.arg<output, {{.*}}>, #attn_launch.arg<scalar ()[s0, s1, s2, s3, s4, s5] -> (s1)>, #attn_launch.arg<scalar ()[s0, s1, s2, s3, s4, s5] -> (s2)>, #attn_launch.arg<scalar ()[s0, s1, s2, s3, s4, s5] -> (s3)>, #attn_launch.arg<scalar ()[s0, s1, s2, s3, s4, s5] -> (s4)>], dependent = true>]>
// ROPE: func.func private @attention(%{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?x64xbf16>) attributes {attn_block.abi = "attention"
// ROPE-NOT: attn_block.rope

// RoPE+FoX down to PTX and a cubin: the four prologue kernels and attention.
// ISA: .entry rope_table
// ISA: .entry rope
// ISA: .entry gate
// ISA: .entry attention
// ISA: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BIN: gpu.binary @main_gpu

// attn-to-block{target=...} has no GPU prologue (its RoPE kernels:
// rope-to-block-gpu.mlir): FoX's G' comes from a block kernel doing what
// the gate kernel does (f64 prefix sums times -gamma log2(e) = -1.4427, f32
// out), launched over the B*Hq rows first; its GPU form is a tile program
// of 8 warps: rounds of 2048 keys in a blocked tile, scanned with the 8
// warps' totals in a shared scratch, plus the carried total.
// PREFIX: #blocked = #attn_block.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
// PREFIX: func.func private @main_attention_kernel(%{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?xf32>, %{{.*}}: memref<?x?x?x64xbf16>)
// PREFIX: attn_block.load %{{.*}} -> tensor<64xf32, #{{.*}}>
// PREFIX: func.func private @main_gate_prefix(%[[G:.*]]: memref<?x?x?xf32>, %[[GP:.*]]: memref<?x?x?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 8 : i64}
// PREFIX: %[[TOT:.*]] = attn_block.local_alloc : !attn_block.smem<8xf64, #[[FLAT:.*]]>
// PREFIX: arith.constant -1.4426950408889634 : f64
// PREFIX: scf.for %[[R0:.*]] = %{{.*}} step %c2048 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f64)
// PREFIX-NEXT: %[[X:.*]] = attn_block.load %[[G]][%{{.*}}, %{{.*}}, %[[R0]]] dims [2] padding 0.000000e+00 : memref<?x?x?xf32> -> tensor<2048xf32, #[[B:.*]]>
// PREFIX-NEXT: %[[XD:.*]] = arith.extf %[[X]] : tensor<2048xf32, #[[B]]> to tensor<2048xf64, #[[B]]>
// PREFIX-NEXT: %[[CUM:.*]] = attn_block.scan %[[XD]] scratch(%[[TOT]] : !attn_block.smem<8xf64, #[[FLAT]]>) : tensor<2048xf64, #[[B]]>
// PREFIX-NEXT: %[[LAST:.*]] = tensor.extract %[[CUM]][%c2047]
// PREFIX-NEXT: %[[CARRY:.*]] = tensor.splat %[[ACC]] : tensor<2048xf64, #[[B]]>
// PREFIX-NEXT: %[[SUM:.*]] = arith.addf %[[CUM]], %[[CARRY]]
// PREFIX-NEXT: arith.mulf %[[SUM]]
// PREFIX-NEXT: arith.truncf %{{.*}} : tensor<2048xf64, #[[B]]> to tensor<2048xf32, #[[B]]>
// PREFIX-NEXT: attn_block.store %{{.*}}, %[[GP]][%{{.*}}, %{{.*}}, %[[R0]]] dims [2] : tensor<2048xf32, #[[B]]> -> memref<?x?x?xf32>
// PREFIX-NEXT: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[LAST]] : f64
// PREFIX-NEXT: scf.yield %[[NEXT]] : f64
// PREFIX: func.func @main
// PREFIX: %[[GPB:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// PREFIX: attn_block.launch @main_gate_prefix grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %[[GPB]])
// PREFIX: attn_block.launch @main_attention_kernel grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[GPB]], %{{.*}})
