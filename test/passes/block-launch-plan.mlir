// attn-block-launch-plan on attn-to-block{target=sm_90}: the launched GPU-form
// kernels move into gpu.module @main_gpu and the host's launches become the
// function's #attn_launch.plan. Dims are the arguments' dynamic dims in
// order (s0..s2 = q's B, H, T; s3..s5 k's; s6..s8 v's; FoX: s9..s11 g's);
// each launch a kernel in order, each memref argument its buffer followed by
// its dynamic sizes (the flat-pointer ABI of attn/Codegen/BlockGpuAbi.h).
//
// RUN: attn-opt %attn_examples/plain_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" --attn-block-launch-plan="chip=sm_90" | FileCheck %s --check-prefix=PLAIN
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" --attn-block-launch-plan="chip=sm_90" | FileCheck %s --check-prefix=FOX
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90" --attn-block-launch-plan="chip=sm_90" --attn-block-to-gpu | FileCheck %s --check-prefix=FLAT
// RUN: attn-opt %s --attn-block-launch-plan="chip=sm_80" | FileCheck %s --check-prefix=ARITH
// RUN: not attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90a" --attn-block-launch-plan="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90a" --attn-block-launch-plan="chip=sm_90a" | FileCheck %s --check-prefix=SM90A
// The pipeline: shows the block program on the way; PaTH with f32
// operands has no GPU form, which attn-to-block says.
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="chip=sm_90 format=none" --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: not attn-opt %attn_examples/path.mlir --attn-to-gpu="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=PATH
// RUN: attn-opt %attn_examples/path_bf16.mlir --attn-to-gpu="chip=sm_90 format=none" | FileCheck %s --check-prefix=PATHGPU
// RUN: not attn-opt %attn_examples/plain_bf16.mlir --attn-to-gpu="warps=2" 2>&1 | FileCheck %s --check-prefix=WARPS2
// RUN: not attn-opt %attn_examples/plain_bf16.mlir --attn-to-block="target=cpu warps=8" 2>&1 | FileCheck %s --check-prefix=CPUWARPS
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-to-block="target=sm_90a warps=8 block-n=128" --attn-block-launch-plan="chip=sm_90a" | FileCheck %s --check-prefix=W8

// Plain: the attention kernel, grid (T ceildiv 64, B * H), 128 threads, Q +
// 2 K + 2 V stages of 64 x 128 bf16 in shared memory; q, k, v are inputs 0-2
// with their (B, H, T), the output with q's, and scratch 0 the rows' marks
// ([B, H, T] f32, FlashRows); then the redo kernel on the same arguments,
// launched dependent (it waits for the marks), with 16 bytes more shared
// memory (its scan's warp totals).
// PLAIN: module attributes {gpu.container_module}
// PLAIN: func.func @main({{.*}}) -> tensor<?x?x?x128xbf16> attributes {attn.gpu_module = @main_gpu, attn_launch.plan = #attn_launch.plan<device = cuda,
// PLAIN-SAME: dims = [#attn_launch.dim<"arg0.0", input = 0, dim = 0>, #attn_launch.dim<"arg0.1", input = 0, dim = 1>, #attn_launch.dim<"arg0.2", input = 0, dim = 2>, #attn_launch.dim<"arg1.0", input = 1, dim = 0>, {{.*}}, #attn_launch.dim<"arg2.2", input = 2, dim = 2>], values = [], buffers = [#attn_launch.buffer<"main_attention_kernel.4", bytes = ()[{{[^]]*}}] -> (((s0 * s1) * s2) * 4)>],
// PLAIN-SAME: kernels = [#attn_launch.kernel<name = @main_gpu::@main_attention_kernel, grid = ()[s0, s1, s2, s3, s4, s5, s6, s7, s8] -> (s2 ceildiv 64, s0 * s1, 1), block = [128, 1, 1], smem = 81920,
// PLAIN-SAME: args = [#attn_launch.arg<input 0>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s0)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s1)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s2)>,
// PLAIN-SAME: #attn_launch.arg<input 1>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s3)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s4)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s5)>,
// PLAIN-SAME: #attn_launch.arg<input 2>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s6)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s7)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s8)>,
// PLAIN-SAME: #attn_launch.arg<output>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s0)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s1)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s2)>,
// PLAIN-SAME: #attn_launch.arg<scratch 0, elements = ()[{{[^]]*}}] -> ((s0 * s1) * s2)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s0)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s1)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s2)>]>,
// PLAIN-SAME: #attn_launch.kernel<name = @main_gpu::@main_attention_nonfinite_rows, grid = ()[{{[^]]*}}] -> (s2 ceildiv 1024, s0 * s1, 1), block = [128, 1, 1], smem = 81952,
// PLAIN-SAME: #attn_launch.arg<scratch 0, elements = ()[{{[^]]*}}] -> ((s0 * s1) * s2)>, {{.*}}], dependent = true>]>}
// The launches stay in the host as the statement of the plan.
// PLAIN: attn_block.launch @main_attention_kernel
// PLAIN: attn_block.launch @main_attention_nonfinite_rows
// PLAIN: gpu.module @main_gpu [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">] {
// PLAIN-NEXT: func.func private @main_attention_kernel({{.*}}) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// PLAIN: func.func private @main_attention_nonfinite_rows({{.*}}) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// PLAIN-NOT: func.func private @main_attention_kernel

// FoX: the gate prefix (8 warps per (b, h) row: grid B * H; 64 bytes of
// shared memory, its scan's 8 f64 warp totals) writes G' into
// scratch 0 ([B, H, S] f32, named after its first use); the records kernel
// (4 warps per 64 keys) reads it and writes the key tile records, scratch 1
// ([B, H, S, 16] bf16); the attention kernel reads both after q, k, v (its
// smem: Q, K, V and two record stages of 2 KB), then the redo kernel with
// the rows' marks, scratch 2 (FlashRows). The kernels after the first
// wait for the one before (griddep_wait in their bodies), so they are
// launched dependent; launch order as in the host.
// FOX: buffers = [#attn_launch.buffer<"main_gate_prefix.1", bytes = ()[s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11] -> (((s9 * s10) * s11) * 4)>, #attn_launch.buffer<"main_fox_records.1", bytes = ()[{{[^]]*}}] -> (((s9 * s10) * s11) * 16)>, #attn_launch.buffer<"main_attention_kernel.6", bytes = ()[{{[^]]*}}] -> (((s0 * s1) * s2) * 4)>]
// FOX-SAME: kernels = [#attn_launch.kernel<name = @main_gpu::@main_gate_prefix, grid = ()[{{[^]]*}}] -> (s9 * s10, 1, 1), block = [256, 1, 1], smem = 64,
// FOX-SAME: args = [#attn_launch.arg<input 3>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s9)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s10)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s11)>,
// FOX-SAME: #attn_launch.arg<scratch 0, elements = ()[{{[^]]*}}] -> ((s9 * s10) * s11)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s9)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s10)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s11)>]>,
// FOX-SAME: #attn_launch.kernel<name = @main_gpu::@main_fox_records, grid = ()[{{[^]]*}}] -> (s11 ceildiv 64, s9 * s10, 1), block = [128, 1, 1], smem = 0,
// FOX-SAME: args = [#attn_launch.arg<scratch 0, elements = ()[{{[^]]*}}] -> ((s9 * s10) * s11)>, {{.*}}, #attn_launch.arg<scratch 1, elements = ()[{{[^]]*}}] -> (((s9 * s10) * s11) * 8)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s9)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s10)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s11)>], dependent = true>,
// FOX-SAME: #attn_launch.kernel<name = @main_gpu::@main_attention_kernel, grid = ()[{{[^]]*}}] -> (s2 ceildiv 64, s0 * s1, 1), block = [128, 1, 1], smem = 43008,
// FOX-SAME: args = [#attn_launch.arg<input 0>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s0)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s1)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s2)>, #attn_launch.arg<input 1>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s3)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s4)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s5)>, #attn_launch.arg<input 2>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s6)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s7)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s8)>,
// FOX-SAME: #attn_launch.arg<scratch 0, elements = ()[{{[^]]*}}] -> ((s9 * s10) * s11)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s9)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s10)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s11)>,
// FOX-SAME: #attn_launch.arg<scratch 1, elements = ()[{{[^]]*}}] -> (((s9 * s10) * s11) * 8)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s9)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s10)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s11)>,
// FOX-SAME: #attn_launch.arg<output>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s0)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s1)>, #attn_launch.arg<scalar ()[{{[^]]*}}] -> (s2)>,
// FOX-SAME: #attn_launch.arg<scratch 2, elements = ()[{{[^]]*}}] -> ((s0 * s1) * s2)>, {{.*}}], dependent = true>,
// FOX-SAME: #attn_launch.kernel<name = @main_gpu::@main_attention_nonfinite_rows, grid = ()[{{[^]]*}}] -> (s2 ceildiv 1024, s0 * s1, 1), block = [128, 1, 1], smem = 43040, {{.*}}, dependent = true>]>
// FOX: gpu.module @main_gpu
// FOX-DAG: func.func private @main_gate_prefix({{.*}}attn_block.num_warps = 8
// FOX-DAG: func.func private @main_fox_records({{.*}}attn_block.num_warps = 4
// FOX-DAG: func.func private @main_attention_kernel({{.*}}attn_block.num_warps = 4

// The flat-pointer ABI: each memref a flat buffer and its dynamic sizes,
// viewed with the identity layout (row-major strides from the sizes).
// FLAT: gpu.func @main_gate_prefix(%[[G:.*]]: memref<?xf32>, %[[B:.*]]: index, %[[H:.*]]: index, %[[S:.*]]: index, %[[P:.*]]: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel attributes {attn_block.shared_bytes = 64 : i64, known_block_size = array<i32: 256, 1, 1>}
// FLAT: memref.reinterpret_cast %[[G]] to offset: [0], sizes: [%[[B]], %[[H]], %[[S]]], strides: [%{{.*}}, %{{.*}}, 1] : memref<?xf32> to memref<?x?x?xf32>
// FLAT: gpu.func @main_fox_records(%{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel attributes {attn_block.shared_bytes = 0 : i64, known_block_size = array<i32: 128, 1, 1>}
// FLAT: gpu.func @main_attention_kernel(%[[Q:.*]]: memref<?xbf16>, %[[QB:.*]]: index, %[[QH:.*]]: index, %[[QT:.*]]: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel attributes {attn_block.shared_bytes = 43008 : i64, known_block_size = array<i32: 128, 1, 1>}
// FLAT: memref.reinterpret_cast %[[Q]] to offset: [0], sizes: [%[[QB]], %[[QH]], %[[QT]], 64], strides: [%{{.*}}, %{{.*}}, 64, 1] : memref<?xbf16> to memref<?x?x?x64xbf16>
// FLAT-NOT: attn_block.
// FLAT: gpu.func @main_attention_nonfinite_rows({{.*}}) kernel attributes {attn_block.shared_bytes = 43040 : i64, known_block_size = array<i32: 128, 1, 1>}
// FLAT-NOT: attn_block.

// Index arithmetic: max(m - n, 0) is value 0 (s2), min(m, n) = -max(-m, -n)
// with value 1 (s3); divsi / remui / muli / addi as affine expressions;
// the scratch's dynamic size is a scalar after it; the alloc returned is
// the output.
// ARITH-DAG: #map = affine_map<()[s0, s1] -> (s0 - s1, 0)>
// ARITH-DAG: #map1 = affine_map<()[s0, s1, s2] -> (-s0, -s1)>
// ARITH: values = [#map, #map1]
// ARITH-SAME: buffers = [#attn_launch.buffer<"k.1", bytes = ()[s0, s1, s2, s3] -> ((s2 + (-s3) floordiv 3) * 32)>]
// ARITH-SAME: kernels = [#attn_launch.kernel<name = @main_gpu::@k, grid = ()[s0, s1, s2, s3] -> (s2 + (-s3) floordiv 3, (s0 mod 16) * 3, 1), block = [64, 1, 1], smem = 0, args = [#attn_launch.arg<input 0>, #attn_launch.arg<scalar ()[s0, s1, s2, s3] -> (s0)>, #attn_launch.arg<scalar ()[s0, s1, s2, s3] -> (s1)>, #attn_launch.arg<scratch 0, elements = ()[s0, s1, s2, s3] -> ((s2 + (-s3) floordiv 3) * 8)>, #attn_launch.arg<scalar ()[s0, s1, s2, s3] -> (s2 + (-s3) floordiv 3)>]>,
// ARITH-SAME: #attn_launch.kernel<name = @main_gpu::@k, grid = ()[s0, s1, s2, s3] -> (1, s0, 1), block = [64, 1, 1], smem = 0, args = [#attn_launch.arg<input 0>, {{.*}}, #attn_launch.arg<output>, #attn_launch.arg<scalar ()[s0, s1, s2, s3] -> (s0)>]>]>

// WGMMA: attn-block-launch-plan: kernel @main_attention_kernel uses wgmma (mma version 3 layouts), which sm_90 lacks
// sm_90a: the wgmma kernel's shared memory includes the 1024-byte alignment
// slack (40960 + 2048 bytes of records, two stages of [64, 8], in the
// interleaved layout + 1024).
// SM90A: #attn_launch.kernel<name = @main_gpu::@main_attention_kernel, {{.*}}, block = [128, 1, 1], smem = 44032,

// PIPE: IR Dump After AttnToBlock (attn-to-block)
// PIPE: attn_block.launch @main_gate_prefix
// PIPE: IR Dump After AttnBlockLaunchPlan (attn-block-launch-plan)
// PIPE: attn_launch.plan = #attn_launch.plan<device = cuda
// PIPE: IR Dump After AttnBlockToGPU (attn-block-to-gpu)
// PIPE: gpu.func @main_gate_prefix

// f32 PaTH has no GPU form; bf16 PaTH takes the route to its two kernels.
// PATH: error: attn-to-block{target=sm_90}: the PaTH GPU form takes bf16 or f16 q, k, v
// PATHGPU: llvm.func @main_path_chunk_kernel
// PATHGPU: llvm.func @main_path_attention_kernel
// WARPS2: GPU option warps must be 4 or 8, got 2
// CPUWARPS: attn-to-block: warps must be 4 (the CPU form has none) for target cpu, got 8

// Two warpgroups and 128-key tiles (warps=8 block-n=128): 128 query rows
// per program, the S accumulator m64n128k16, records still per 64 keys
// with the reference at each 128-key tile's start; 2 blocks per SM.
// W8: #attn_block.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 128, 16]>
// W8: #attn_launch.kernel<name = @main_gpu::@main_fox_records, grid = ()[{{[^]]*}}] -> (s11 ceildiv 64, s9 * s10, 1), block = [128, 1, 1]
// W8-SAME: #attn_launch.kernel<name = @main_gpu::@main_attention_kernel, grid = ()[{{[^]]*}}] -> (s2 ceildiv 128, s0 * s1, 1), block = [256, 1, 1]
// W8-DAG: func.func private @main_fox_records({{.*}}attn_block.num_warps = 4
// W8-DAG: func.func private @main_attention_kernel({{.*}}attn_block.num_warps = 8

func.func private @k(%a: memref<?x?xf32>, %o: memref<?x8xf32>) attributes {attn_block.kernel, attn_block.num_warps = 2 : i64} {
  return
}
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %d = arith.subi %m, %n : index
  %hi = arith.maxsi %d, %c0 : index
  %lo = arith.minsi %m, %n : index
  %q = arith.divsi %lo, %c3 : index
  %r = arith.remui %m, %c16 : index
  %gx = arith.addi %hi, %q : index
  %gy = arith.muli %r, %c3 : index
  %b = bufferization.to_buffer %x read_only : tensor<?x?xf32> to memref<?x?xf32>
  %t = memref.alloc(%gx) : memref<?x8xf32>
  attn_block.launch @k grid(%gx, %gy) args(%b, %t) : memref<?x?xf32>, memref<?x8xf32>
  %o = memref.alloc(%m) : memref<?x8xf32>
  attn_block.launch @k grid(%c1, %m) args(%b, %o) : memref<?x?xf32>, memref<?x8xf32>
  %res = bufferization.to_tensor %o restrict writable : memref<?x8xf32> to tensor<?x8xf32>
  return %res : tensor<?x8xf32>
}
