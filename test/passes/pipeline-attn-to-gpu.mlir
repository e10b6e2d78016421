// REQUIRES: ptxas
// RUN: attn-opt %S/../../examples/rope_bf16.mlir --attn-to-gpu="chip=sm_90" --attn-dump-ptx=%t.ptx | FileCheck %s
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: attn-opt %S/../../examples/fox_bf16.mlir --attn-to-gpu="chip=sm_80 format=isa" | FileCheck %s --check-prefix=ISA
// RUN: not attn-opt %S/../../examples/rope.mlir --attn-to-gpu 2>&1 | FileCheck %s --check-prefix=F32
// Every kernel comes from the block program, PaTH's and MTA's too.
// RUN: attn-opt %S/../../examples/path_bf16.mlir --attn-to-gpu="chip=sm_90 format=none" | FileCheck %s --check-prefix=PATH
// RUN: attn-opt %S/../../examples/mta_pre_bf16.mlir --attn-to-gpu="chip=sm_90a format=none" | FileCheck %s --check-prefix=MTA

// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @main({{.*}}attn.gpu_module = @main_gpu, attn_launch.plan = #attn_launch.plan<
// CHECK: attn_block.launch @main_rope_table
// CHECK: attn_block.launch @main_attention_kernel
// CHECK: gpu.binary @main_gpu [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}bin =

// PTX: // gpu.module @main_gpu
// PTX: .target sm_90
// PTX: .entry main_rope_table(
// PTX: .entry main_rope_q(
// PTX: .entry main_rope_k(
// PTX: .entry main_attention_kernel(
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16

// ISA: gpu.binary @main_gpu [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}assembly = "

// F32: error: attn-to-block{target=sm_90}: the GPU form takes bf16 or f16 q, k, v (m16n8k16 mma.sync, m64nNk16 wgmma), not f32 operands

// PATH: attn_launch.plan
// PATH: gpu.module @main_gpu
// PATH: llvm.func @main_path_chunk_kernel(
// PATH: llvm.func @main_path_attention_kernel(

// MTA: attn_launch.plan
// MTA: gpu.module @main_gpu
// MTA: llvm.func @main_mta_kernel(

