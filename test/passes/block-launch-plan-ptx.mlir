// REQUIRES: ptxas
// The block program's kernels and launch plan (plain and
// FoX with its gate-prefix kernel) down to PTX that ptxas compiles for sm_90
// (mma.sync) and sm_90a (wgmma).
//
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="chip=sm_90 format=isa" --attn-dump-ptx=%t.fox90.ptx | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t.fox90.ptx
// RUN: %ptxas -arch=sm_90 %t.fox90.ptx -o %t.fox90.cubin
// RUN: attn-opt %attn_examples/plain_bf16.mlir --attn-to-gpu="chip=sm_90a format=isa" --attn-dump-ptx=%t.plain90a.ptx | FileCheck %s --check-prefix=PLAIN
// RUN: FileCheck %s --check-prefix=WGMMA < %t.plain90a.ptx
// RUN: %ptxas -arch=sm_90a %t.plain90a.ptx -o %t.plain90a.cubin

// CHECK: module attributes {gpu.container_module}
// CHECK: attn_launch.plan = #attn_launch.plan<device = cuda
// CHECK: gpu.binary @main_gpu

// PTX: .target sm_90
// PTX-DAG: .entry main_gate_prefix(
// PTX-DAG: .entry main_attention_kernel(
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: cp.async.cg.shared.global

// PLAIN: gpu.binary @main_gpu
// WGMMA: .target sm_90a
// WGMMA: .entry main_attention_kernel(
// WGMMA: wgmma.mma_async
