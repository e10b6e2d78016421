// REQUIRES: ptxas
// RoPE and RoPE+FoX through (the rope table and
// rotation kernels of RopeToBlockGpu.cpp, the gate prefix, the flash
// kernel) down to PTX that ptxas compiles for sm_90 (mma.sync) and sm_90a
// (wgmma).
//
// RUN: attn-opt %attn_examples/rope_fox_bf16.mlir --attn-to-gpu="chip=sm_90 format=isa" --attn-dump-ptx=%t.ropefox90.ptx | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t.ropefox90.ptx
// RUN: %ptxas -arch=sm_90 %t.ropefox90.ptx -o %t.ropefox90.cubin
// RUN: attn-opt %attn_examples/rope_bf16.mlir --attn-to-gpu="chip=sm_90a format=isa" --attn-dump-ptx=%t.rope90a.ptx | FileCheck %s
// RUN: FileCheck %s --check-prefix=WGMMA < %t.rope90a.ptx
// RUN: %ptxas -arch=sm_90a %t.rope90a.ptx -o %t.rope90a.cubin

// CHECK: attn_launch.plan = #attn_launch.plan<device = cuda
// CHECK: gpu.binary @main_gpu

// PTX: .target sm_90
// PTX-DAG: .entry main_rope_table(
// PTX-DAG: .entry main_rope_q(
// PTX-DAG: .entry main_rope_k(
// PTX-DAG: .entry main_gate_prefix(
// PTX-DAG: .entry main_attention_kernel(
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// WGMMA: .target sm_90a
// WGMMA-DAG: .entry main_rope_table(
// WGMMA-DAG: .entry main_rope_q(
// WGMMA-DAG: .entry main_rope_k(
// WGMMA-DAG: wgmma.mma_async
