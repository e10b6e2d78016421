// REQUIRES: ptxas
// Every variant and kernel shape the GPU backend accepts compiles to cubins
// (ptxas runs) for sm_80, sm_90 and sm_90a (wgmma); one gpu.binary per
// function. The flash kernel takes warps 4 or 8 and block-n 64 or 128.
// RUN: attn-opt %s --attn-to-gpu="chip=sm_80" | FileCheck %s
// RUN: not attn-opt %s --attn-to-gpu="chip=sm_90 block-n=32" 2>&1 | FileCheck %s --check-prefix=PLAN32
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90 warps=8 block-n=128" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a warps=8 block-n=128" | FileCheck %s
// RUN: not attn-opt %s --attn-to-gpu="warps=3" 2>&1 | FileCheck %s --check-prefix=BADWARPS
// RUN: not attn-opt %s --attn-to-gpu="block-n=48" 2>&1 | FileCheck %s --check-prefix=BADN
// RUN: not attn-opt %s --attn-to-gpu="path-transport=f32" 2>&1 | FileCheck %s --check-prefix=BADTRANSPORT
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90 path-transport=split" | FileCheck %s

// CHECK-DAG: gpu.binary @f16_window_gqa_gpu
// CHECK-DAG: gpu.binary @partial_interleaved_rope_gpu
// CHECK-DAG: gpu.binary @query_offset_scaled_gate_gpu
// CHECK-DAG: gpu.binary @value_dim_differs_gpu
// CHECK-DAG: gpu.binary @no_mask_gpu
// CHECK-DAG: gpu.binary @padded_head_dims_gpu
// CHECK-DAG: gpu.binary @padded_path_gpu

// PLAN32: GPU option block-n must be 64 or 128, got 32
// BADTRANSPORT: attn-to-gpu: GPU option path-transport must be f16 or split, got 'f32'
// BADWARPS: GPU option warps must be 4 or 8, got 3
// BADN: GPU option block-n must be 64 or 128, got 48

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

// Head dims that are not multiples of 64: the tiles pad them
// (gpuTileHeadDim), the output's store is guarded by column.
func.func @padded_head_dims(%q: tensor<?x4x?x96xbf16>, %k: tensor<?x2x?x96xbf16>, %v: tensor<?x2x?x40xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x40xbf16> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) gate(%g) : (tensor<?x4x?x96xbf16>, tensor<?x2x?x96xbf16>, tensor<?x2x?x40xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x40xbf16>
  return %o : tensor<?x4x?x40xbf16>
}

func.func @padded_path(%q: tensor<?x2x?x32xbf16>, %k: tensor<?x2x?x32xbf16>, %v: tensor<?x2x?x32xbf16>, %w: tensor<?x2x?x32xf32>, %beta: tensor<?x2x?xf32>) -> tensor<?x2x?x32xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta) : (tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x32xbf16>, tensor<?x2x?x32xf32>, tensor<?x2x?xf32>) -> tensor<?x2x?x32xbf16>
  return %o : tensor<?x2x?x32xbf16>
}

func.func @value_dim_differs(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @no_mask(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v mask none : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
