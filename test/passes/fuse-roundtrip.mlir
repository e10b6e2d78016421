// attn-fuse, then attn-expand-attention, then attn-fuse again gives what
// attn-fuse alone gives: expansion is the exact inverse of fusion, so the
// second fusion finds the same chains (with the same static rope offsets,
// and the same explicit rope_q_offset where q's offset is not provably k's
// + S - T).
// RUN: attn-opt %s --attn-fuse | FileCheck %s
// RUN: attn-opt %s -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' | FileCheck %s
// The same, byte for byte, on this file and on every example.
// RUN: attn-opt %s --attn-fuse > %t.once.mlir
// RUN: attn-opt %s -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: attn-opt %S/../../examples/fox.mlir --attn-fuse > %t.fox.once.mlir
// RUN: attn-opt %S/../../examples/fox.mlir -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' > %t.fox.twice.mlir
// RUN: diff %t.fox.once.mlir %t.fox.twice.mlir
// RUN: attn-opt %S/../../examples/mta.mlir --attn-fuse > %t.mta.once.mlir
// RUN: attn-opt %S/../../examples/mta.mlir -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' > %t.mta.twice.mlir
// RUN: diff %t.mta.once.mlir %t.mta.twice.mlir
// RUN: attn-opt %S/../../examples/mta_pre.mlir --attn-fuse > %t.mta_pre.once.mlir
// RUN: attn-opt %S/../../examples/mta_pre.mlir -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' > %t.mta_pre.twice.mlir
// RUN: diff %t.mta_pre.once.mlir %t.mta_pre.twice.mlir
// RUN: attn-opt %S/../../examples/path.mlir --attn-fuse > %t.path.once.mlir
// RUN: attn-opt %S/../../examples/path.mlir -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' > %t.path.twice.mlir
// RUN: diff %t.path.once.mlir %t.path.twice.mlir
// RUN: attn-opt %S/../../examples/path_fox.mlir --attn-fuse > %t.path_fox.once.mlir
// RUN: attn-opt %S/../../examples/path_fox.mlir -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' > %t.path_fox.twice.mlir
// RUN: diff %t.path_fox.once.mlir %t.path_fox.twice.mlir
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse > %t.rope.once.mlir
// RUN: attn-opt %S/../../examples/rope.mlir -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention,attn-fuse)' > %t.rope.twice.mlir
// RUN: diff %t.rope.once.mlir %t.rope.twice.mlir
// The expansion in between really is the original chain: the ropes come
// back at their own offsets (an explicit rope_q_offset gives q's rope that
// static offset, no positions tensor), so the second fusion has work to do.
// RUN: attn-opt %s -pass-pipeline='builtin.module(attn-fuse,attn-expand-attention)' \
// RUN:   | FileCheck %s --check-prefix=EXPAND
// Fusing a fused module again changes nothing.
// RUN: attn-opt %s --attn-fuse --attn-fuse | FileCheck %s

// RoPE with static T < S, MTA both stages, gated norm.
// CHECK-LABEL: func.func @rope_mta_norm
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[KP:[^:]*]]: {{[^,]*}}, %[[HP:[^:]*]]: {{[^,]*}}, %[[KPO:[^:]*]]: {{[^,]*}}, %[[HPO:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^,]*}}, %[[GW:[^:]*]]: {{[^,]*}}, %[[GB:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_offset 3 kq_conv_pre(%[[KP]]) head_mix_pre(%[[HP]]) kq_conv_post(%[[KPO]]) head_mix_post(%[[HPO]]) norm(%[[GAM]]) norm_gate(%[[GW]], %[[GB]]) : (tensor<1x4x6x32xf32>, tensor<1x4x10x32xf32>, tensor<1x4x10x32xf32>, tensor<4x3x5xf32>, tensor<4x4xf32>, tensor<4x2x3xf32>, tensor<4x2xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<1x4x6x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @rope_mta_norm(%q: tensor<1x4x6x32xf32>, %k: tensor<1x4x10x32xf32>, %v: tensor<1x4x10x32xf32>,
    %kp: tensor<4x3x5xf32>, %hp: tensor<4x4xf32>, %kpo: tensor<4x2x3xf32>, %hpo: tensor<4x2xf32>,
    %gamma: tensor<32xf32>, %gw: tensor<32xf32>, %gb: tensor<1xf32>) -> tensor<1x4x6x32xf32> {
  %qr = attn.rope %q offset 7 : tensor<1x4x6x32xf32>
  %kr = attn.rope %k offset 3 : tensor<1x4x10x32xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x6x32xf32>, tensor<1x4x10x32xf32>) -> tensor<1x4x6x10xf32>
  %c1 = attn.kq_conv pre %s, %kp : tensor<1x4x6x10xf32>, tensor<4x3x5xf32>
  %m1 = attn.head_mix pre %c1, %hp : tensor<1x4x6x10xf32>, tensor<4x4xf32>
  %p = attn.softmax %m1 : tensor<1x4x6x10xf32>
  %c2 = attn.kq_conv post %p, %kpo : tensor<1x4x6x10xf32>, tensor<4x2x3xf32>
  %m2 = attn.head_mix post %c2, %hpo : tensor<1x4x6x10xf32>, tensor<4x2xf32>
  %o = attn.weighted_sum %m2, %v : (tensor<1x4x6x10xf32>, tensor<1x4x10x32xf32>) -> tensor<1x4x6x32xf32>
  %n = attn.head_norm %o, %gamma gate(%gw, %gb) : (tensor<1x4x6x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1xf32>) -> tensor<1x4x6x32xf32>
  return %n : tensor<1x4x6x32xf32>
}

// Packed sequences with MTA: the pieces take the scores' offsets.
// CHECK-LABEL: func.func @packed_mta
// CHECK-NEXT: %[[O:.*]] = attn.attention %{{.*}}, %{{.*}}, %{{.*}} kq_conv_pre(%{{.*}}) head_mix_post(%{{.*}}) cu_seqlens(%{{.*}}) :
// CHECK-NEXT: return %[[O]]
func.func @packed_mta(%q: tensor<1x4x?x32xf32>, %v: tensor<1x4x?x32xf32>, %kp: tensor<4x3x5xf32>,
    %hpo: tensor<4x2xf32>, %cu: tensor<?xi32>) -> tensor<1x4x?x32xf32> {
  %s = attn.scores %q, %q cu_seqlens(%cu) : (tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>, tensor<?xi32>) -> tensor<1x4x?x?xf32>
  %c1 = attn.kq_conv pre %s, %kp cu_seqlens(%cu) : tensor<1x4x?x?xf32>, tensor<4x3x5xf32>, tensor<?xi32>
  %p = attn.softmax %c1 : tensor<1x4x?x?xf32>
  %m2 = attn.head_mix post %p, %hpo cu_seqlens(%cu) : tensor<1x4x?x?xf32>, tensor<4x2xf32>, tensor<?xi32>
  %o = attn.weighted_sum %m2, %v : (tensor<1x4x?x?xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}

// Dynamic T and S: q's offset is stated explicitly (rope_q_offset 0), both
// times.
// CHECK-LABEL: func.func @rope_dynamic
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[G:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(5.000000e+05) rope_q_offset 0 gate(%[[G]]) mask sliding_window window 128 : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16>
// CHECK-NEXT: return %[[O]]
func.func @rope_dynamic(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16> {
  %qr = attn.rope %q theta 5.0e+05 : tensor<?x?x?x64xbf16>
  %kr = attn.rope %k theta 5.0e+05 : tensor<?x?x?x64xbf16>
  %s = attn.scores %qr, %kr gate(%g) mask sliding_window window 128 : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// Static T < S with q's offset not k's + S - T (6 != 1 + 8 - 4), interleaved
// half-dim rotation: rope_offset 1 rope_q_offset 6, both times.
// CHECK-LABEL: func.func @rope_static_other_offsets
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_style interleaved rope_dim 16 rope_offset 1 rope_q_offset 6 mask none : (tensor<1x2x4x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>) -> tensor<1x2x4x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @rope_static_other_offsets(%q: tensor<1x2x4x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x2x4x32xf32> {
  %qr = attn.rope %q style interleaved rotary_dim 16 offset 6 : tensor<1x2x4x32xf32>
  %kr = attn.rope %k style interleaved rotary_dim 16 offset 1 : tensor<1x2x8x32xf32>
  %s = attn.scores %qr, %kr mask none : (tensor<1x2x4x32xf32>, tensor<1x2x8x32xf32>) -> tensor<1x2x4x8xf32>
  %p = attn.softmax %s : tensor<1x2x4x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x4x8xf32>, tensor<1x2x8x32xf32>) -> tensor<1x2x4x32xf32>
  return %o : tensor<1x2x4x32xf32>
}

// EXPAND-LABEL: func.func @rope_mta_norm
// EXPAND-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}
// EXPAND-NEXT: %[[QR:.*]] = attn.rope %[[Q]] offset 7 : tensor<1x4x6x32xf32>
// EXPAND-NEXT: %[[KR:.*]] = attn.rope %[[K]] offset 3 : tensor<1x4x10x32xf32>
// EXPAND-NEXT: attn.scores %[[QR]], %[[KR]] :
// EXPAND: attn.head_norm
// EXPAND-LABEL: func.func @rope_dynamic
// EXPAND-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}
// EXPAND-NOT: tensor.generate
// EXPAND-NOT: positions
// EXPAND: %[[QR:.*]] = attn.rope %[[Q]] theta 5.000000e+05 : tensor<?x?x?x64xbf16>
// EXPAND-NEXT: %[[KR:.*]] = attn.rope %[[K]] theta 5.000000e+05 : tensor<?x?x?x64xbf16>
// EXPAND-NEXT: attn.scores %[[QR]], %[[KR]] gate(
// EXPAND-NEXT: attn.softmax
// EXPAND-NEXT: attn.weighted_sum
// EXPAND-LABEL: func.func @rope_static_other_offsets
// EXPAND-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}
// EXPAND-NEXT: %[[QR:.*]] = attn.rope %[[Q]] style interleaved rotary_dim 16 offset 6 : tensor<1x2x4x32xf32>
// EXPAND-NEXT: %[[KR:.*]] = attn.rope %[[K]] style interleaved rotary_dim 16 offset 1 : tensor<1x2x8x32xf32>
// EXPAND-NEXT: attn.scores %[[QR]], %[[KR]] mask none :
