// RoPE in the GPU form of attn-to-block (RopeToBlockGpu.cpp): the cos/sin
// tables (angles in f64) and the rotated q and k come from three GPU-form
// block kernels launched before attention, which reads the rotated buffers;
// the route goes through attn-block-launch-plan to PTX.
//
// RUN: attn-opt %s --attn-to-block="target=sm_90" | FileCheck %s
// RUN: attn-opt %s --attn-to-block="target=sm_90a" | FileCheck %s --check-prefix=WGMMA
// RUN: attn-opt %attn_examples/rope_fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_80" | FileCheck %s --check-prefix=FOX
// RUN: attn-opt %attn_examples/rope_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" --attn-block-launch-plan="chip=sm_90" | FileCheck %s --check-prefix=PLAN
// RUN: attn-opt %attn_examples/rope_fox_bf16.mlir --attn-to-gpu="chip=sm_90 format=none" | FileCheck %s --check-prefix=NVVM

// Interleaved pairs, rope_dim 32 of D = 64, rope_offset 7, GQA 4 -> 2.
func.func @inter(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_style interleaved rope_dim 32 rope_offset 7 : (tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

// Half pairs over all of D = 128, queries at rope_q_offset 3 + i, f16.
func.func @qoff(%q: tensor<1x2x?x128xf16>, %k: tensor<1x2x?x128xf16>, %v: tensor<1x2x?x128xf16>) -> tensor<1x2x?x128xf16> {
  %o = attn.attention %q, %k, %v rope(5.000000e+05) rope_q_offset 3 : (tensor<1x2x?x128xf16>, tensor<1x2x?x128xf16>, tensor<1x2x?x128xf16>) -> tensor<1x2x?x128xf16>
  return %o : tensor<1x2x?x128xf16>
}

// The table kernel: program (r, 1) writes query row r at
// rope_offset + S - T + r, program (r, 0) key row r at rope_offset + r
// (S, T: the tables' lengths); R/2 = 16 frequencies, exponent
// -2 ln(1e4) / 32, cos and sin of the f64 angle stored f32.
// CHECK: func.func private @inter_rope_table(%[[CK:[^:]*]]: memref<?x16xf32>, %[[SK:[^:]*]]: memref<?x16xf32>, %[[CQ:[^:]*]]: memref<?x16xf32>, %[[SQ:[^:]*]]: memref<?x16xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64}
// CHECK-DAG: %[[ROW:.*]] = attn_block.program_id 0
// CHECK-DAG: %[[WHICH:.*]] = attn_block.program_id 1
// CHECK-DAG: %[[S:.*]] = memref.dim %[[CK]], %{{.*}} : memref<?x16xf32>
// CHECK-DAG: %[[T:.*]] = memref.dim %[[CQ]], %{{.*}} : memref<?x16xf32>
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK: %[[KS:.*]] = arith.addi %[[C7]], %[[S]] : index
// CHECK: %[[QBASE:.*]] = arith.subi %[[KS]], %[[T]] : index
// CHECK: scf.if %{{.*}} {
// CHECK: arith.cmpi slt, %[[ROW]], %[[T]] : index
// CHECK: %[[QPOS:.*]] = arith.addi %[[QBASE]], %[[ROW]] : index
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK: arith.constant -0.57564627324851148 : f64
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c16
// CHECK: %[[INV:.*]] = math.exp %{{.*}} : f64
// CHECK: %[[ANG:.*]] = arith.mulf %{{.*}}, %[[INV]] : f64
// CHECK: math.cos %[[ANG]] : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: memref.store %{{.*}}, %[[CQ]][%[[ROW]], %[[I]]]
// CHECK: math.sin %[[ANG]] : f64
// CHECK: memref.store %{{.*}}, %[[SQ]][%[[ROW]], %[[I]]]
// CHECK: } else {
// CHECK: arith.cmpi slt, %[[ROW]], %[[S]] : index
// CHECK: arith.addi %[[C7]], %[[ROW]] : index
// CHECK: memref.store %{{.*}}, %[[CK]]
// CHECK: memref.store %{{.*}}, %[[SK]]

// The rotation: program (i, b * H + h); pair p is (2p, 2p + 1), rotated in
// f32 and rounded to bf16, straight-line code: the 16 pairs' loads, then
// their stores; columns 32 .. 63 copied (32 loads, then 32 stores).
// CHECK: func.func private @inter_rope_q(%[[X:[^:]*]]: memref<?x4x?x64xbf16>, %[[C:[^:]*]]: memref<?x16xf32>, %[[SN:[^:]*]]: memref<?x16xf32>, %[[Y:[^:]*]]: memref<?x4x?x64xbf16>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64}
// CHECK: %[[I:.*]] = attn_block.program_id 0
// CHECK: %[[BH:.*]] = attn_block.program_id 1
// CHECK: %[[B:.*]] = arith.divui %[[BH]], %{{.*}} : index
// CHECK: %[[H:.*]] = arith.remui %[[BH]], %{{.*}} : index
// CHECK-NOT: scf.for
// CHECK: %[[XA:.*]] = memref.load %[[X]][%[[B]], %[[H]], %[[I]], %c0{{(_[0-9]+)?}}]
// CHECK: %[[FA:.*]] = arith.extf %[[XA]] : bf16 to f32
// CHECK: %[[XB:.*]] = memref.load %[[X]][%[[B]], %[[H]], %[[I]], %c1{{(_[0-9]+)?}}]
// CHECK: %[[FB:.*]] = arith.extf %[[XB]] : bf16 to f32
// CHECK: %[[CS:.*]] = memref.load %[[C]][%[[I]], %c0{{(_[0-9]+)?}}]
// CHECK: %[[SS:.*]] = memref.load %[[SN]][%[[I]], %c0{{(_[0-9]+)?}}]
// CHECK: memref.load %[[X]][%[[B]], %[[H]], %[[I]], %c31{{(_[0-9]+)?}}]
// CHECK: memref.load %[[SN]][%[[I]], %c15{{(_[0-9]+)?}}]
// CHECK-NOT: memref.load
// CHECK: %[[AC:.*]] = arith.mulf %[[FA]], %[[CS]] : f32
// CHECK-NEXT: %[[BS:.*]] = arith.mulf %[[FB]], %[[SS]] : f32
// CHECK-NEXT: %[[YA:.*]] = arith.subf %[[AC]], %[[BS]] : f32
// CHECK-NEXT: %[[AS:.*]] = arith.mulf %[[FA]], %[[SS]] : f32
// CHECK-NEXT: %[[BC:.*]] = arith.mulf %[[FB]], %[[CS]] : f32
// CHECK-NEXT: %[[YB:.*]] = arith.addf %[[AS]], %[[BC]] : f32
// CHECK: %[[TA:.*]] = arith.truncf %[[YA]] : f32 to bf16
// CHECK: memref.store %[[TA]], %[[Y]][%[[B]], %[[H]], %[[I]], %c0{{(_[0-9]+)?}}]
// CHECK: %[[TB:.*]] = arith.truncf %[[YB]] : f32 to bf16
// CHECK: memref.store %[[TB]], %[[Y]][%[[B]], %[[H]], %[[I]], %c1{{(_[0-9]+)?}}]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[B]], %[[H]], %[[I]], %c31{{(_[0-9]+)?}}]
// CHECK: memref.load %[[X]][%[[B]], %[[H]], %[[I]], %c32{{(_[0-9]+)?}}]
// CHECK: memref.load %[[X]][%[[B]], %[[H]], %[[I]], %c63{{(_[0-9]+)?}}]
// CHECK-NOT: memref.load
// CHECK: memref.store %{{.*}}, %[[Y]][%[[B]], %[[H]], %[[I]], %c32{{(_[0-9]+)?}}]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[B]], %[[H]], %[[I]], %c63{{(_[0-9]+)?}}]
// CHECK-NEXT: return
// CHECK: func.func private @inter_rope_k(%{{.*}}: memref<?x2x?x64xbf16>, %{{.*}}: memref<?x16xf32>, %{{.*}}: memref<?x16xf32>, %{{.*}}: memref<?x2x?x64xbf16>)

// The host: tables [S, 16] and [T, 16]; the table kernel over
// (max(S, T), 2), q's rotation over (T, B * 4), k's over (S, B * 2); the
// attention kernel reads the rotated buffers, and no table is built on the
// host (no tensor.generate).
// CHECK: func.func @inter(
// CHECK-NOT: tensor.generate
// CHECK: %[[TCK:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: %[[TSK:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: %[[TCQ:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: %[[TSQ:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: %[[MAX:.*]] = arith.maxsi
// CHECK: attn_block.launch @inter_rope_table grid(%[[MAX]], %c2{{.*}}) args(%[[TCK]], %[[TSK]], %[[TCQ]], %[[TSQ]])
// CHECK: %[[QR:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x4x?x64xbf16>
// CHECK: attn_block.launch @inter_rope_q grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %[[TCQ]], %[[TSQ]], %[[QR]])
// CHECK: %[[KR:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x2x?x64xbf16>
// CHECK: attn_block.launch @inter_rope_k grid(%{{.*}}, %{{.*}}) args(%{{.*}}, %[[TCK]], %[[TSK]], %[[KR]])
// CHECK: attn_block.launch @inter_attention_kernel grid(%{{.*}}, %{{.*}}) args(%[[QR]], %[[KR]], %{{.*}}, %{{.*}})
// CHECK-NOT: attn_block.rope

// rope_q_offset: queries at the constant 3 + r, keys at 0 + r; half pairs
// (p, p + 64) of D = 128, exponent -2 ln(5e5) / 128, f16; nothing copied.
// The half style takes the tile form (ropeTileForm), 4 warps in 2-D blocked
// layouts: the table 16 rows a program, its angles per element in 8-column
// chunks of a loop (one a thread: row and column iotas in the layout's
// slices); each rotation 32 rows a program, a chunk of 32 pairs two column
// tiles x1 = x[:, p], x2 = x[:, p + 64] with cos, sin at p (8 consecutive
// columns a thread, loaded and stored whole), the rows past the memref
// dropped by the accesses' bounds.
// CHECK: func.func private @qoff_rope_table({{.*}}) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// CHECK: attn_block.launch_dependents
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.if
// CHECK: %[[R0:.*]] = arith.muli %{{.*}}, %c16{{.*}} : index
// CHECK: arith.addi %[[C3]], %[[R0]] : index
// CHECK: attn_block.iota {{.*}} : tensor<16xi64, #[[ROWS:.*]]>
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %c64{{.*}} step %c8
// CHECK: attn_block.iota %[[C]] : tensor<8xi64
// CHECK: arith.constant -0.20503692777194263 : f64
// CHECK: math.exp %{{.*}} : tensor<8xf64
// CHECK: math.cos %{{.*}} : tensor<16x8xf64, #[[BLK:[^>]*]]>
// CHECK: attn_block.store %{{.*}}[%[[R0]], %[[C]]] dims [0, 1] : tensor<16x8xf32
// CHECK: math.sin
// CHECK: func.func private @qoff_rope_q(%[[QX:[^:]*]]: memref<1x2x?x128xf16>, %[[QC:[^:]*]]: memref<?x64xf32>, %[[QS:[^:]*]]: memref<?x64xf32>, %[[QY:[^:]*]]: memref<1x2x?x128xf16>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// CHECK-NEXT: attn_block.launch_dependents
// CHECK-NEXT: attn_block.griddep_wait
// CHECK: %[[ROW0:.*]] = arith.muli %{{.*}}, %c32 : index
// CHECK: %[[X1:.*]] = attn_block.load %[[QX]][%{{.*}}, %{{.*}}, %[[ROW0]], %c0{{.*}}] dims [2, 3] {{.*}} -> tensor<32x32xf16
// CHECK: %[[X2:.*]] = attn_block.load %[[QX]][%{{.*}}, %{{.*}}, %[[ROW0]], %c64{{.*}}] dims [2, 3] {{.*}} -> tensor<32x32xf16
// CHECK: attn_block.load %[[QC]][%[[ROW0]], %c0{{.*}}] dims [0, 1] {{.*}} -> tensor<32x32xf32
// CHECK: attn_block.load %[[QS]][%[[ROW0]], %c0{{.*}}] dims [0, 1] {{.*}} -> tensor<32x32xf32
// CHECK: arith.subf
// CHECK: arith.truncf %{{.*}} : tensor<32x32xf32, {{.*}}> to tensor<32x32xf16
// CHECK: attn_block.store %{{.*}}, %[[QY]][%{{.*}}, %{{.*}}, %[[ROW0]], %c0{{.*}}] dims [2, 3]
// CHECK: arith.addf
// CHECK: attn_block.store %{{.*}}, %[[QY]][%{{.*}}, %{{.*}}, %[[ROW0]], %c64{{.*}}] dims [2, 3]
// CHECK: attn_block.load %[[QX]][%{{.*}}, %{{.*}}, %[[ROW0]], %c32{{.*}}]
// CHECK: attn_block.load %[[QX]][%{{.*}}, %{{.*}}, %[[ROW0]], %c96{{.*}}]
// CHECK: attn_block.store %{{.*}}, %[[QY]][%{{.*}}, %{{.*}}, %[[ROW0]], %c96{{.*}}]
// CHECK-NOT: attn_block.store
// CHECK: return

// sm_90a: the same prologue before the wgmma attention kernel.
// WGMMA: attn_block.launch @inter_rope_table
// WGMMA: attn_block.launch @inter_rope_q
// WGMMA: attn_block.launch @inter_rope_k
// WGMMA: attn_block.launch @inter_attention_kernel

// RoPE + FoX: the rope kernels, then the gate prefix and the records;
// attention reads (q rotated, k rotated, v, G', records, out, the rows'
// marks).
// FOX: func.func private @main_attention_kernel(%{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?xf32>, %{{.*}}: memref<?x?x?x8xbf16>, %{{.*}}: memref<?x?x?x64xbf16>, %{{.*}}: memref<?x?x?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// FOX: func.func @main(%[[Q:[^:]*]]: tensor<?x?x?x64xbf16>, %[[K:[^:]*]]: tensor<?x?x?x64xbf16>, %[[V:[^:]*]]: tensor<?x?x?x64xbf16>, %[[G:[^:]*]]: tensor<?x?x?xf32>)
// FOX: attn_block.launch @main_rope_table
// FOX: attn_block.launch @main_rope_q grid({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[QR:[^)]*]])
// FOX: attn_block.launch @main_rope_k grid({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}, %[[KR:[^)]*]])
// FOX: attn_block.launch @main_gate_prefix grid({{.*}}) args(%{{.*}}, %[[GP:[^)]*]])
// FOX: attn_block.launch @main_fox_records grid({{.*}}) args(%[[GP]], %[[RC:[^)]*]])
// FOX: attn_block.launch @main_attention_kernel grid({{.*}}) args(%[[QR]], %[[KR]], %{{.*}}, %[[GP]], %[[RC]], %{{.*}})

// The launch plan: four tables (s5 = S rows, s2 = T rows, 16 f32 each =
// 128 bytes a row at D = 64), q and k rotated (B H T D and B Hk S D bf16),
// the table kernel over (max(S, T) / 16 rounded up, 2) (max(S, T) is
// value s9), the rotations over 32-row tiles, 128 threads each; the
// kernels after the table wait for the one before, so they are launched
// dependent; the attention kernel reads scratch 4 and 5 as its q and k,
// and so does the redo kernel after it (FlashRows: scratch 6, the rows'
// marks).
// PLAN: #map = affine_map<()[{{[^]]*}}] -> (s5, s2)>
// PLAN: values = [#map]
// PLAN-SAME: buffers = [#attn_launch.buffer<"main_rope_table.0", bytes = ()[{{[^]]*}}] -> (s5 * 128)>, #attn_launch.buffer<"main_rope_table.1", bytes = ()[{{[^]]*}}] -> (s5 * 128)>, #attn_launch.buffer<"main_rope_table.2", bytes = ()[{{[^]]*}}] -> (s2 * 128)>, #attn_launch.buffer<"main_rope_table.3", bytes = ()[{{[^]]*}}] -> (s2 * 128)>, #attn_launch.buffer<"main_rope_q.3", bytes = ()[{{[^]]*}}] -> (((s0 * s1) * s2) * 128)>, #attn_launch.buffer<"main_rope_k.3", bytes = ()[{{[^]]*}}] -> (((s3 * s4) * s5) * 128)>, #attn_launch.buffer<"main_attention_kernel.4", bytes = ()[{{[^]]*}}] -> (((s0 * s1) * s2) * 4)>]
// PLAN-SAME: kernels = [#attn_launch.kernel<name = @main_gpu::@main_rope_table, grid = ()[{{[^]]*}}] -> (s9 ceildiv 16, 2, 1), block = [128, 1, 1], smem = 0,
// PLAN-SAME: #attn_launch.kernel<name = @main_gpu::@main_rope_q, grid = ()[{{[^]]*}}] -> (s2 ceildiv 32, s0 * s1, 1), block = [128, 1, 1], smem = 0, args = [#attn_launch.arg<input 0>,
// PLAN-SAME: dependent = true>, #attn_launch.kernel<name = @main_gpu::@main_rope_k, grid = ()[{{[^]]*}}] -> (s5 ceildiv 32, s3 * s4, 1), block = [128, 1, 1], smem = 0, args = [#attn_launch.arg<input 1>,
// PLAN-SAME: #attn_launch.kernel<name = @main_gpu::@main_attention_kernel, grid = ()[{{[^]]*}}] -> (s2 ceildiv 64, s0 * s1, 1), block = [128, 1, 1], smem = 40960, args = [#attn_launch.arg<scratch 4, {{.*}}, #attn_launch.arg<scratch 5, {{.*}}, #attn_launch.arg<input 2>
// PLAN-SAME: dependent = true>]>
// PLAN: attn_block.launch @main_attention_kernel
// PLAN: attn_block.launch @main_attention_nonfinite_rows
// PLAN: gpu.module @main_gpu

// The whole block-plan route: the prologue kernels lower to NVVM, the f64
// cos / sin / exp as libdevice calls.
// NVVM: llvm.func @main_rope_table(
// NVVM-DAG: llvm.call @__nv_cos
// NVVM-DAG: llvm.call @__nv_sin
// NVVM-DAG: llvm.call @__nv_exp
// NVVM: llvm.func @main_rope_q(
// NVVM: llvm.func @main_rope_k(
// NVVM: llvm.func @main_gate_prefix(
// NVVM: llvm.func @main_fox_records(
// NVVM: llvm.func @main_attention_kernel(
