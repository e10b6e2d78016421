// attn-fuse and RoPE: the two attn.rope join the fused op (rope(theta),
// rope_offset = k's offset) whenever both ropes agree on theta, style and
// rotary dim, have no positions operand and one use each. When q's offset is
// provably k's offset + S - T (queries are the last T of S positions: static
// T and S, or q and k rotated from one tensor) the fused op needs nothing
// more; otherwise (dynamic T or S, or another offset) it also carries
// rope_q_offset = q's offset (query i at rope_q_offset + i), which is exact
// for any T and S. Mismatched ropes stay outside and the fused op reads
// their results.
// RUN: attn-opt %s -split-input-file --attn-fuse \
// RUN:   | FileCheck %s --implicit-check-not=attn.scores \
// RUN:       --implicit-check-not=attn.softmax --implicit-check-not=attn.weighted_sum
// rope_q_offset appears exactly in the six unprovable cases below.
// RUN: attn-opt %s -split-input-file --attn-fuse | grep rope_q_offset | count 6

// Static T = 3 < S = 10: q's offset 9 = k's offset 2 + 10 - 3.
// CHECK-LABEL: func.func @static_t_lt_s
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_offset 2 : (tensor<1x4x3x64xf32>, tensor<1x4x10x64xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: rope_q_offset
func.func @static_t_lt_s(%q: tensor<1x4x3x64xf32>, %k: tensor<1x4x10x64xf32>, %v: tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32> {
  %qr = attn.rope %q offset 9 : tensor<1x4x3x64xf32>
  %kr = attn.rope %k offset 2 : tensor<1x4x10x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x3x64xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x10xf32>
  %p = attn.softmax %s : tensor<1x4x3x10xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x4x3x10xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32>
  return %o : tensor<1x4x3x64xf32>
}

// -----

// Static T = S, GQA, f16: equal offsets; theta, style and rotary_dim move to
// the fused op.
// CHECK-LABEL: func.func @static_square
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(5.000000e+05) rope_style interleaved rope_dim 16 : (tensor<2x8x16x32xf16>, tensor<2x2x16x32xf16>, tensor<2x2x16x32xf16>) -> tensor<2x8x16x32xf16>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: rope_q_offset
func.func @static_square(%q: tensor<2x8x16x32xf16>, %k: tensor<2x2x16x32xf16>, %v: tensor<2x2x16x32xf16>) -> tensor<2x8x16x32xf16> {
  %qr = attn.rope %q style interleaved theta 5.0e+05 rotary_dim 16 : tensor<2x8x16x32xf16>
  %kr = attn.rope %k style interleaved theta 5.0e+05 rotary_dim 16 : tensor<2x2x16x32xf16>
  %s = attn.scores %qr, %kr : (tensor<2x8x16x32xf16>, tensor<2x2x16x32xf16>) -> tensor<2x8x16x16xf32>
  %p = attn.softmax %s : tensor<2x8x16x16xf32>
  %o = attn.weighted_sum %p, %v : (tensor<2x8x16x16xf32>, tensor<2x2x16x32xf16>) -> tensor<2x8x16x32xf16>
  return %o : tensor<2x8x16x32xf16>
}

// -----

// Dynamic B and H do not matter, only T and S (static here: 4 and 6).
// CHECK-LABEL: func.func @static_seq_dynamic_heads
// CHECK-NEXT: attn.attention %{{.*}}, %{{.*}}, %{{.*}} rope(1.000000e+04) rope_offset 5 : (tensor<?x?x4x64xf32>, tensor<?x?x6x64xf32>, tensor<?x?x6x64xf32>) -> tensor<?x?x4x64xf32>
// CHECK-NOT: rope_q_offset
func.func @static_seq_dynamic_heads(%q: tensor<?x?x4x64xf32>, %k: tensor<?x?x6x64xf32>, %v: tensor<?x?x6x64xf32>) -> tensor<?x?x4x64xf32> {
  %qr = attn.rope %q offset 7 : tensor<?x?x4x64xf32>
  %kr = attn.rope %k offset 5 : tensor<?x?x6x64xf32>
  %s = attn.scores %qr, %kr : (tensor<?x?x4x64xf32>, tensor<?x?x6x64xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x6x64xf32>) -> tensor<?x?x4x64xf32>
  return %o : tensor<?x?x4x64xf32>
}

// -----

// q and k rotated from one tensor: T == S even though both are dynamic.
// CHECK-LABEL: func.func @same_tensor
// CHECK-SAME: (%[[X:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: attn.attention %[[X]], %[[X]], %[[V]] rope(1.000000e+04) rope_offset 3 :
// CHECK-NOT: rope_q_offset
func.func @same_tensor(%x: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %qr = attn.rope %x offset 3 : tensor<?x?x?x64xf32>
  %kr = attn.rope %x offset 3 : tensor<?x?x?x64xf32>
  %s = attn.scores %qr, %kr : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// rotary_dim given on one rope only, equal to D: the same rotation.
// CHECK-LABEL: func.func @rotary_dim_explicit_full
// CHECK-NEXT: attn.attention %{{.*}}, %{{.*}}, %{{.*}} rope(1.000000e+04) rope_dim 64 :
// CHECK-NOT: rope_q_offset
func.func @rotary_dim_explicit_full(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %qr = attn.rope %q rotary_dim 64 : tensor<1x2x8x64xf32>
  %kr = attn.rope %k : tensor<1x2x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// -----

// Dynamic T and S with equal offsets (the examples' form): q's offset is
// k's + S - T only when T == S, which nothing proves, so the fused op states
// q's offset explicitly.
// CHECK-LABEL: func.func @dynamic_equal_offsets
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_offset 4 rope_q_offset 4 : (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @dynamic_equal_offsets(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %qr = attn.rope %q offset 4 : tensor<1x4x?x64xf32>
  %kr = attn.rope %k offset 4 : tensor<1x4x?x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x?x?xf32>
  %p = attn.softmax %s : tensor<1x4x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x4x?x?xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}

// -----

// Only S static: still unprovable; offsets 0 (rope_offset 0 is the default
// and not printed, rope_q_offset 0 is).
// CHECK-LABEL: func.func @dynamic_t
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_q_offset 0 : (tensor<1x4x?x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) -> tensor<1x4x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @dynamic_t(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>) -> tensor<1x4x?x64xf32> {
  %qr = attn.rope %q : tensor<1x4x?x64xf32>
  %kr = attn.rope %k : tensor<1x4x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x?x64xf32>, tensor<1x4x8x64xf32>) -> tensor<1x4x?x8xf32>
  %p = attn.softmax %s : tensor<1x4x?x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x4x?x8xf32>, tensor<1x4x8x64xf32>) -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}

// -----

// Only T static, with style and rotary_dim: the same, those move along.
// CHECK-LABEL: func.func @dynamic_s
// CHECK-NEXT: %[[O:.*]] = attn.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} rope(1.000000e+04) rope_style interleaved rope_dim 32 rope_offset 8 rope_q_offset 12 : (tensor<1x4x4x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x4x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @dynamic_s(%q: tensor<1x4x4x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x4x?x64xf32>) -> tensor<1x4x4x64xf32> {
  %qr = attn.rope %q style interleaved rotary_dim 32 offset 12 : tensor<1x4x4x64xf32>
  %kr = attn.rope %k style interleaved rotary_dim 32 offset 8 : tensor<1x4x?x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x4x64xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x4x?xf32>
  %p = attn.softmax %s : tensor<1x4x4x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x4x4x?xf32>, tensor<1x4x?x64xf32>) -> tensor<1x4x4x64xf32>
  return %o : tensor<1x4x4x64xf32>
}

// -----

// Static T = 3 < S = 10 but equal offsets: q is not at the last T positions
// (k's offset 0 + 10 - 3 = 7), so q's offset 0 is stated explicitly.
// CHECK-LABEL: func.func @static_wrong_offset
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] rope(1.000000e+04) rope_q_offset 0 : (tensor<1x4x3x64xf32>, tensor<1x4x10x64xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @static_wrong_offset(%q: tensor<1x4x3x64xf32>, %k: tensor<1x4x10x64xf32>, %v: tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32> {
  %qr = attn.rope %q : tensor<1x4x3x64xf32>
  %kr = attn.rope %k : tensor<1x4x10x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x4x3x64xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x10xf32>
  %p = attn.softmax %s : tensor<1x4x3x10xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x4x3x10xf32>, tensor<1x4x10x64xf32>) -> tensor<1x4x3x64xf32>
  return %o : tensor<1x4x3x64xf32>
}

// -----

// Static T = S with different offsets: 5 is not 2 + 0.
// CHECK-LABEL: func.func @static_square_other_offset
// CHECK-NEXT: %[[O:.*]] = attn.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} rope(1.000000e+04) rope_offset 2 rope_q_offset 5 : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @static_square_other_offset(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %qr = attn.rope %q offset 5 : tensor<1x2x8x64xf32>
  %kr = attn.rope %k offset 2 : tensor<1x2x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// -----

// q and k rotated from one tensor (T == S) at different offsets.
// CHECK-LABEL: func.func @same_tensor_other_offset
// CHECK-SAME: (%[[X:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: attn.attention %[[X]], %[[X]], %[[V]] rope(1.000000e+04) rope_offset 3 rope_q_offset 1 :
func.func @same_tensor_other_offset(%x: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %qr = attn.rope %x offset 1 : tensor<?x?x?x64xf32>
  %kr = attn.rope %x offset 3 : tensor<?x?x?x64xf32>
  %s = attn.scores %qr, %kr : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

// Different theta, style or rotary_dim, a positions operand, a rope on one
// side only, a rotated k used twice: the ropes stay outside, and the fused
// op has no rope attribute at all.
// CHECK-LABEL: func.func @theta_differs
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} :
func.func @theta_differs(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %qr = attn.rope %q theta 5.0e+05 : tensor<1x2x8x64xf32>
  %kr = attn.rope %k : tensor<1x2x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// CHECK-LABEL: func.func @style_differs
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} :
func.func @style_differs(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %qr = attn.rope %q style interleaved : tensor<1x2x8x64xf32>
  %kr = attn.rope %k : tensor<1x2x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// CHECK-LABEL: func.func @rotary_dim_differs
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} :
func.func @rotary_dim_differs(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %qr = attn.rope %q rotary_dim 32 : tensor<1x2x8x64xf32>
  %kr = attn.rope %k : tensor<1x2x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// CHECK-LABEL: func.func @positions
// CHECK-NEXT: attn.rope %{{.*}} positions(
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} :
func.func @positions(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>, %pos: tensor<8xi64>) -> tensor<1x2x8x64xf32> {
  %qr = attn.rope %q positions(%pos) : tensor<1x2x8x64xf32>, tensor<8xi64>
  %kr = attn.rope %k : tensor<1x2x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// CHECK-LABEL: func.func @k_only
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[KR:.*]] = attn.rope %[[K]]
// CHECK-NEXT: attn.attention %[[Q]], %[[KR]], %[[V]] :
func.func @k_only(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %kr = attn.rope %k : tensor<1x2x8x64xf32>
  %s = attn.scores %q, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// CHECK-LABEL: func.func @rotated_k_used_twice
// CHECK-NEXT: attn.rope
// CHECK-NEXT: %[[KR:.*]] = attn.rope
// CHECK-NEXT: %[[O:.*]] = attn.attention %{{[^ ]*}}, %[[KR]], %{{[^ ]*}} :
// CHECK-NEXT: return %[[O]], %[[KR]]
func.func @rotated_k_used_twice(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) {
  %qr = attn.rope %q : tensor<1x2x8x64xf32>
  %kr = attn.rope %k : tensor<1x2x8x64xf32>
  %s = attn.scores %qr, %kr : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o, %kr : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>
}
