// REQUIRES: ptxas
// Every variant and kernel shape the GPU backend accepts compiles to cubins
// (ptxas runs) for sm_80, sm_90 and sm_90a (wgmma); one gpu.binary per
// function. The default lowering (block-plan) takes warps 4 or 8; the
// direct kernels also take warps 1 or 2, m-tiles 2 and the overlap.
// RUN: attn-opt %s --attn-to-gpu="chip=sm_80" | FileCheck %s
// RUN: not attn-opt %s --attn-to-gpu="chip=sm_90 block-n=32" 2>&1 | FileCheck %s --check-prefix=PLAN32
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90 warps=8 block-n=128" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a warps=8 block-n=128" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="lowering=direct chip=sm_80" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="lowering=direct chip=sm_90 warps=2 block-n=32" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="lowering=direct chip=sm_90 warps=1 m-tiles=2" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="lowering=direct chip=sm_90a warps=8 overlap=true" | FileCheck %s
// RUN: not attn-opt %s --attn-to-gpu="warps=3" 2>&1 | FileCheck %s --check-prefix=BADWARPS
// RUN: not attn-opt %s --attn-to-gpu="block-n=48" 2>&1 | FileCheck %s --check-prefix=BADN
// RUN: not attn-opt %s --attn-to-gpu="m-tiles=4" 2>&1 | FileCheck %s --check-prefix=BADM

// CHECK-DAG: gpu.binary @f16_window_gqa_gpu
// CHECK-DAG: gpu.binary @partial_interleaved_rope_gpu
// CHECK-DAG: gpu.binary @query_offset_scaled_gate_gpu
// CHECK-DAG: gpu.binary @value_dim_differs_gpu
// CHECK-DAG: gpu.binary @no_mask_gpu

// PLAN32: lowering=block-plan (the default) takes warps 4 or 8, block-n 64 or 128, m-tiles 1 and no overlap {{.*}}got warps 4, block-n 32, m-tiles 1 (lowering=direct builds the others)
// BADWARPS: GPU option warps must be 1, 2, 4 or 8, got 3
// BADN: GPU option block-n must be 32, 64 or 128, got 48
// BADM: GPU option m-tiles must be 1 or 2, got 4

func.func @f16_window_gqa(%q: tensor<?x8x?x128xf16>, %k: tensor<?x2x?x128xf16>, %v: tensor<?x2x?x128xf16>) -> tensor<?x8x?x128xf16> {
  %o = attn.attention %q, %k, %v mask sliding_window window 256 : (tensor<?x8x?x128xf16>, tensor<?x2x?x128xf16>, tensor<?x2x?x128xf16>) -> tensor<?x8x?x128xf16>
  return %o : tensor<?x8x?x128xf16>
}

func.func @partial_interleaved_rope(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(5.000000e+05) rope_style interleaved rope_dim 32 rope_offset 7 : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

func.func @query_offset_scaled_gate(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %v: tensor<?x4x?x64xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_q_offset 3 gate(%g) scaled scale 1.000000e-01 : (tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

func.func @value_dim_differs(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @no_mask(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v mask none : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
