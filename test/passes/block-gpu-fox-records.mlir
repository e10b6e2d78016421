// REQUIRES: ptxas
// FoX's bias in the block program's flash kernel (FlashToBlockGpu.cpp,
// foxOperand, launchFoxRecords): a records kernel writes, per key, v_j =
// G'_j / c as bf16 hi + mid + lo in columns 0-2 of a [B, H, S, 8] record
// ones in columns 3-5; the attention kernel makes its query rows' operand
// [1, 1, 1, pieces of -G'_i / c] once, copies each key tile's records with
// its K tile and starts S as operand x record^T = (G'_j - G'_i) / c, one
// more step of the tensor cores (K = 8: 16-byte records, as many blocks per
// SM as plain attention at D = 64): no per-tile reference, no row term.
// On sm_90a the record buffer is wgmma's interleaved layout (swizzleBytes =
// 0) and the bias wgmma joins the Q K^T group: one commit and one wait for
// both.
//
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90a" | FileCheck %s
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90a" | FileCheck %s --check-prefix=REC
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_80" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="chip=sm_90a format=isa" --attn-dump-ptx=%t.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="chip=sm_80 format=isa" --attn-dump-ptx=%t80.ptx -o /dev/null
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin

// The records kernel: 4 warps per 64 keys, G' at the keys times 1 / c, no
// reference (no scalar load of G'), three bf16 pieces selected by column.
// REC: func.func private @main_fox_records(%[[GP:[^:]*]]: memref<?x?x?xf32>, %[[REC:[^:]*]]: memref<?x?x?x8xbf16>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// REC: attn_block.launch_dependents
// REC-NEXT: attn_block.griddep_wait
// REC: %[[J:.*]] = arith.muli %{{.*}}, %c64
// REC-NOT: memref.load
// REC: %[[G:.*]] = attn_block.load %[[GP]][%{{.*}}, %{{.*}}, %[[J]]] dims [2]
// REC: arith.mulf %[[G]]
// REC-NOT: arith.negf
// REC: arith.truncf %{{.*}} : tensor<64x8xf32, {{.*}}> to tensor<64x8xbf16
// REC: arith.truncf %{{.*}} : tensor<64x8xf32, {{.*}}> to tensor<64x8xbf16
// REC: arith.truncf %{{.*}} : tensor<64x8xf32, {{.*}}> to tensor<64x8xbf16
// REC: attn_block.store %{{.*}}, %[[REC]][%{{.*}}, %{{.*}}, %[[J]], %{{.*}}] dims [2, 3]

// The attention kernel (sm_90a): records in two interleaved stages, copied
// in K's group; the query rows' operand from G' at the rows (negated
// pieces), converted to the A layout (registers) before the walk; then per
// step operand x record and Q K^T onto it, and nothing of FoX carried
// through the loop (m, l, acc and the stage only).
// CHECK-DAG: #[[IL:.*]] = #attn_block.nvmma_shared<swizzleBytes = 0, transposed = false>
// CHECK-DAG: #[[S:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
// CHECK-DAG: #[[OPA:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[S]], kWidth = 2>
// CHECK: func.func private @main_attention_kernel(
// CHECK-SAME: %[[RECS:[^:]*]]: memref<?x?x?x8xbf16>, %{{[^:]*}}: memref<?x?x?x64xbf16>, %{{[^:]*}}: memref<?x?x?xf32>) attributes {attn_block.kernel, attn_block.min_blocks_per_sm = 4 : i64, attn_block.num_warps = 4 : i64}
// CHECK: %[[SR:.*]] = attn_block.local_alloc : !attn_block.smem<2x64x8xbf16, #[[IL]]>
// CHECK: attn_block.async_copy %[[RECS]]
// CHECK: attn_block.async_commit_group
// CHECK: %[[GI:.*]] = attn_block.load %{{.*}} dims [2] {{.*}} -> tensor<64xf32,
// CHECK: %[[W:.*]] = arith.mulf %[[GI]]
// CHECK: arith.negf %[[W]]
// CHECK: %[[A:.*]] = attn_block.convert_layout %{{.*}} : tensor<64x8xbf16, #[[S]]> -> tensor<64x8xbf16, #[[OPA]]>
// CHECK: scf.for {{.*}} iter_args(%{{[^)]*}}, %{{[^)]*}}, %{{[^)]*}}, %{{[^)]*}}) -> (tensor<64xf32, {{.*}}>, tensor<64x8xf32, {{.*}}>, tensor<64x64xf32, {{.*}}>, index)
// CHECK-NOT: memref.load
// CHECK: attn_block.async_copy %[[RECS]]
// CHECK: %[[RT:.*]] = attn_block.local_load %{{.*}} -> tensor<64x8xbf16, #[[IL]]>
// CHECK: %[[U:.*]] = attn_block.dot %[[A]], %[[RT]], %{{.*}} transpose_b
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %[[U]] transpose_b

// sm_80: the record in an unswizzled buffer (16-byte rows: an ldmatrix's
// 8 rows are 128 consecutive bytes), read into mma.sync's B registers; no
// occupancy hint.
// MMA-DAG: #[[SW:.*]] = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 1, order = [1, 0]>
// MMA-LABEL: func.func private @main_attention_kernel(
// MMA-SAME: attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// MMA: attn_block.local_alloc : !attn_block.smem<2x64x8xbf16, #[[SW]]>
// MMA: attn_block.dot {{.*}} transpose_b : tensor<64x8xbf16, #

// PTX: .entry main_fox_records(
// PTX: .entry main_attention_kernel(
// The bias wgmma (m64n64k16: the operand from registers, zeros for k 8-15,
// the K-major record read twice, scale-d from the zero accumulator) and
// the four of Q K^T (D = 64, both operands shared) in one group: no wait
// between them.
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 0;
// PTX-NOT: wgmma.wait_group
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX-NOT: wgmma.mma_async
// PTX: wgmma.commit_group.sync.aligned
// PTX-NOT: wgmma.mma_async
// PTX: wgmma.wait_group.sync.aligned 0
