// Round trip of the fused attn.attention with every optional piece, alone
// and together.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @attention_plain
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK: attn.attention %[[Q]], %[[K]], %[[V]] : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
// GENERIC-LABEL: sym_name = "attention_plain"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{mask = 0 : i32, norm_eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, rope_offset = 0 : i64, rope_style = 0 : i32}>
func.func @attention_plain(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.attention %q, %k, %v norm_eps 1.0e-05 mask causal
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// RoPE with every RoPE attribute.
// CHECK-LABEL: func.func @attention_rope
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} rope(5.000000e+05) rope_style interleaved rope_dim 32 rope_offset 7 : (tensor<1x8x4x64xbf16>, tensor<1x2x9x64xbf16>, tensor<1x2x9x16xbf16>) -> tensor<1x8x4x16xbf16>
// GENERIC-LABEL: sym_name = "attention_rope"
// GENERIC: rope_dim = 32 : i64, rope_offset = 7 : i64, rope_style = 1 : i32, rope_theta = 5.000000e+05 : f64
func.func @attention_rope(%q: tensor<1x8x4x64xbf16>, %k: tensor<1x2x9x64xbf16>, %v: tensor<1x2x9x16xbf16>) -> tensor<1x8x4x16xbf16> {
  %0 = attn.attention %q, %k, %v rope(5.0e+05) rope_style interleaved rope_dim 32 rope_offset 7
      : (tensor<1x8x4x64xbf16>, tensor<1x2x9x64xbf16>, tensor<1x2x9x16xbf16>) -> tensor<1x8x4x16xbf16>
  return %0 : tensor<1x8x4x16xbf16>
}

// RoPE with the default theta spelled out: rope(...) is kept (it enables
// RoPE); rope_style half is elided.
// CHECK-LABEL: func.func @attention_rope_default
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} rope(1.000000e+04) : (
func.func @attention_rope_default(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %0 = attn.attention %q, %k, %v rope(1.0e+04) rope_style half
      : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16>
  return %0 : tensor<?x?x?x64xf16>
}

// PaTH-FoX with a sliding window and an explicit scale.
// CHECK-LABEL: func.func @attention_path_fox_window
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^)]*}})
// CHECK: attn.attention %[[Q]], %[[K]], %[[V]] path(%[[W]], %[[B]]) gate(%[[G]]) scaled mask sliding_window window 64 scale 1.250000e-01 : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32>
// GENERIC-LABEL: sym_name = "attention_path_fox_window"
// GENERIC: <{gate_scaled, mask = 2 : i32, norm_eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>, rope_offset = 0 : i64, rope_style = 0 : i32, scale = 1.250000e-01 : f64, window = 64 : i64}>
func.func @attention_path_fox_window(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>,
    %w: tensor<?x?x?x64xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %0 = attn.attention %q, %k, %v path(%w, %beta) gate(%g) scaled mask sliding_window window 64 scale 0.125
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// mask none (encoder-style), no PaTH or gate.
// CHECK-LABEL: func.func @attention_mask_none
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask none : (tensor<2x4x10x32xf32>, tensor<2x4x6x32xf32>, tensor<2x4x6x32xf32>) -> tensor<2x4x10x32xf32>
func.func @attention_mask_none(%q: tensor<2x4x10x32xf32>, %k: tensor<2x4x6x32xf32>, %v: tensor<2x4x6x32xf32>) -> tensor<2x4x10x32xf32> {
  %0 = attn.attention %q, %k, %v mask none
      : (tensor<2x4x10x32xf32>, tensor<2x4x6x32xf32>, tensor<2x4x6x32xf32>) -> tensor<2x4x10x32xf32>
  return %0 : tensor<2x4x10x32xf32>
}

// MTA only: pre conv + mixing only.
// CHECK-LABEL: func.func @attention_mta_pre
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kq_conv_pre(%{{.*}}) head_mix_pre(%{{.*}}) : (
// CHECK-NOT: kq_conv_post
// GENERIC-LABEL: sym_name = "attention_mta_pre"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0>
func.func @attention_mta_pre(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>,
    %th: tensor<16x6x11xf32>, %wm: tensor<16x16xf32>) -> tensor<?x16x?x64xf32> {
  %0 = attn.attention %q, %k, %v kq_conv_pre(%th) head_mix_pre(%wm)
      : (tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<16x6x11xf32>, tensor<16x16xf32>) -> tensor<?x16x?x64xf32>
  return %0 : tensor<?x16x?x64xf32>
}

// MTA post pieces + the output norm without its gate.
// CHECK-LABEL: func.func @attention_mta_post_norm
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kq_conv_post(%{{.*}}) head_mix_post(%{{.*}}) norm(%{{.*}}) norm_eps 1.000000e-03 : (
// CHECK-NOT: norm_gate
// GENERIC-LABEL: sym_name = "attention_mta_post_norm"
// GENERIC: norm_eps = 1.000000e-03 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0>
func.func @attention_mta_post_norm(%q: tensor<?x16x?x64xf32>, %k: tensor<?x16x?x64xf32>, %v: tensor<?x16x?x64xf32>,
    %th: tensor<16x6x11xf32>, %wm: tensor<16x4xf32>, %gamma: tensor<64xf32>) -> tensor<?x16x?x64xf32> {
  %0 = attn.attention %q, %k, %v kq_conv_post(%th) head_mix_post(%wm) norm(%gamma) norm_eps 1.0e-03
      : (tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<16x6x11xf32>, tensor<16x4xf32>, tensor<64xf32>) -> tensor<?x16x?x64xf32>
  return %0 : tensor<?x16x?x64xf32>
}

// Everything at once, static shapes, GQA 8:4, bf16.
// CHECK-LABEL: func.func @attention_everything
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[W:[^:]*]]: {{[^,]*}}, %[[B:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^,]*}}, %[[KP:[^:]*]]: {{[^,]*}}, %[[HP:[^:]*]]: {{[^,]*}}, %[[KPO:[^:]*]]: {{[^,]*}}, %[[HPO:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^,]*}}, %[[GW:[^:]*]]: {{[^,]*}}, %[[GB:[^:]*]]: {{[^)]*}})
// CHECK: attn.attention %[[Q]], %[[K]], %[[V]] rope(5.000000e+05) rope_style interleaved rope_dim 32 rope_offset 7 path(%[[W]], %[[B]]) gate(%[[G]]) scaled kq_conv_pre(%[[KP]]) head_mix_pre(%[[HP]]) kq_conv_post(%[[KPO]]) head_mix_post(%[[HPO]]) norm(%[[GAM]]) norm_gate(%[[GW]], %[[GB]]) norm_eps 9.9999999999999995E-7 scale 1.250000e-01 : (tensor<2x8x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>, tensor<8x6x11xf32>, tensor<8x8xf32>, tensor<8x6x11xf32>, tensor<8x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x8x16x32xbf16>
// GENERIC-LABEL: sym_name = "attention_everything"
// GENERIC: "attn.attention"({{.*}}) <{gate_scaled, mask = 0 : i32, norm_eps = 9.9999999999999995E-7 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0>, rope_dim = 32 : i64, rope_offset = 7 : i64, rope_style = 1 : i32, rope_theta = 5.000000e+05 : f64, scale = 1.250000e-01 : f64}>
func.func @attention_everything(%q: tensor<2x8x16x64xbf16>, %k: tensor<2x4x16x64xbf16>, %v: tensor<2x4x16x32xbf16>,
    %w: tensor<2x4x16x64xf32>, %beta: tensor<2x4x16xf32>, %g: tensor<2x8x16xf32>,
    %kp: tensor<8x6x11xf32>, %hp: tensor<8x8xf32>, %kpo: tensor<8x6x11xf32>, %hpo: tensor<8x4xf32>,
    %gamma: tensor<32xf32>, %gw: tensor<32xf32>, %gb: tensor<1xf32>) -> tensor<2x8x16x32xbf16> {
  %o = attn.attention %q, %k, %v rope(5.0e+05) rope_style interleaved rope_dim 32 rope_offset 7
      path(%w, %beta) gate(%g) scaled kq_conv_pre(%kp) head_mix_pre(%hp) kq_conv_post(%kpo) head_mix_post(%hpo)
      norm(%gamma) norm_gate(%gw, %gb) norm_eps 1.0e-6 mask causal scale 0.125
      : (tensor<2x8x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x64xf32>, tensor<2x4x16xf32>, tensor<2x8x16xf32>, tensor<8x6x11xf32>, tensor<8x8xf32>, tensor<8x6x11xf32>, tensor<8x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<2x8x16x32xbf16>
  return %o : tensor<2x8x16x32xbf16>
}
