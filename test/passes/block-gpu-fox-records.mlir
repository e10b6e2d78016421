// REQUIRES: ptxas
// FoX's key term in the block program's flash kernel (FlashToBlockGpu.cpp,
// launchFoxRecords): a records kernel writes, per key, u_j = (G'_j - G'_j0)
// / c as bf16 hi + mid + lo in columns 0-2 of a [B, H, S, 16] record; the
// attention kernel copies each key tile's record with its K tile and
// starts S as ones x record^T, one more k16 step of the tensor cores, with
// the row term G'_j0 - G'_i from the tile's reference (carried a step
// ahead). On sm_90a the record buffer is wgmma's interleaved layout
// (swizzleBytes = 0) and the key-term wgmma joins the Q K^T group: one
// commit and one wait for both.
//
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90a" | FileCheck %s
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90a" | FileCheck %s --check-prefix=REC
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_80" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="lowering=block-plan chip=sm_90a format=isa" --attn-dump-ptx=%t.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="lowering=block-plan chip=sm_80 format=isa" --attn-dump-ptx=%t80.ptx -o /dev/null
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin

// The records kernel: 4 warps per 64 keys, the reference at the key tile's
// first key, three bf16 pieces selected by column.
// REC: func.func private @main_fox_records(%[[GP:[^:]*]]: memref<?x?x?xf32>, %[[REC:[^:]*]]: memref<?x?x?x16xbf16>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// REC: attn_block.launch_dependents
// REC-NEXT: attn_block.griddep_wait
// REC: %[[J:.*]] = arith.muli %{{.*}}, %c64
// REC: %[[T:.*]] = arith.divui %[[J]], %c64
// REC: %[[J0:.*]] = arith.muli %[[T]], %c64
// REC: memref.load %[[GP]][%{{.*}}, %{{.*}}, %[[J0]]]
// REC: attn_block.load %[[GP]][%{{.*}}, %{{.*}}, %[[J]]] dims [2]
// REC: arith.truncf %{{.*}} : tensor<64x16xf32, {{.*}}> to tensor<64x16xbf16
// REC: arith.truncf %{{.*}} : tensor<64x16xf32, {{.*}}> to tensor<64x16xbf16
// REC: arith.truncf %{{.*}} : tensor<64x16xf32, {{.*}}> to tensor<64x16xbf16
// REC: attn_block.store %{{.*}}, %[[REC]][%{{.*}}, %{{.*}}, %[[J]], %{{.*}}] dims [2, 3]

// The attention kernel (sm_90a): records in two interleaved stages, copied
// in K's group; ones (registers) x record, then Q K^T onto it.
// CHECK-DAG: #[[IL:.*]] = #attn_block.nvmma_shared<swizzleBytes = 0, transposed = false>
// CHECK-DAG: #[[S:.*]] = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
// CHECK-DAG: #[[ONEA:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[S]], kWidth = 2>
// CHECK: func.func private @main_attention_kernel(
// CHECK-SAME: %[[RECS:[^:]*]]: memref<?x?x?x16xbf16>, %{{[^:]*}}: memref<?x?x?x64xbf16>) attributes {attn_block.kernel, attn_block.min_blocks_per_sm = 4 : i64, attn_block.num_warps = 4 : i64}
// CHECK: %[[SR:.*]] = attn_block.local_alloc : !attn_block.smem<2x64x16xbf16, #[[IL]]>
// CHECK: attn_block.async_copy %[[RECS]]
// CHECK: attn_block.async_commit_group
// CHECK: %[[ONES:.*]] = tensor.splat %{{.*}} : tensor<64x16xbf16, #[[ONEA]]>
// CHECK: scf.for
// CHECK: attn_block.async_copy %[[RECS]]
// CHECK: %[[RT:.*]] = attn_block.local_load %{{.*}} -> tensor<64x16xbf16, #[[IL]]>
// CHECK: %[[U:.*]] = attn_block.dot %[[ONES]], %[[RT]], %{{.*}} transpose_b
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %[[U]] transpose_b

// sm_80: the record in an XOR-swizzled buffer (chunks swap every 4 rows),
// read into mma.sync's B registers; no occupancy hint.
// MMA-DAG: #[[SW:.*]] = #attn_block.shared<vec = 8, perPhase = 4, maxPhase = 2, order = [1, 0]>
// MMA-LABEL: func.func private @main_attention_kernel(
// MMA-SAME: attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// MMA: attn_block.local_alloc : !attn_block.smem<2x64x16xbf16, #[[SW]]>
// MMA: attn_block.dot {{.*}} transpose_b : tensor<64x16xbf16, #

// PTX: .entry main_fox_records(
// PTX: .entry main_attention_kernel(
// The key-term wgmma (m64n64k16: ones from registers, the K-major record,
// scale-d from the zero accumulator) and the four of Q K^T (D = 64, both
// operands shared) in one group: no wait between them.
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 0;
// PTX-NOT: wgmma.wait_group
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX-NOT: wgmma.mma_async
// PTX: wgmma.commit_group.sync.aligned
// PTX-NOT: wgmma.mma_async
// PTX: wgmma.wait_group.sync.aligned 0
