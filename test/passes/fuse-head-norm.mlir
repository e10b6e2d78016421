// attn-fuse and the MTA output norm: a head_norm whose input is the
// weighted_sum result with no other use joins the fused op as norm(gamma)
// [norm_gate(w, b)] [norm_eps e]; the fused op then has the head_norm's
// result type. A weighted_sum with another use is fused without the norm,
// and the head_norm stays, reading the fused op.
// RUN: attn-opt %s -split-input-file --attn-fuse | FileCheck %s \
// RUN:   --implicit-check-not=attn.scores --implicit-check-not=attn.softmax \
// RUN:   --implicit-check-not=attn.weighted_sum

// CHECK-LABEL: func.func @norm
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] norm(%[[GAM]]) : (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x16xf32>, tensor<16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @norm(%q: tensor<2x4x8x32xf32>, %k: tensor<2x4x8x32xf32>, %v: tensor<2x4x8x16xf32>, %gamma: tensor<16xf32>) -> tensor<2x4x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x8xf32>
  %p = attn.softmax %s : tensor<2x4x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %n = attn.head_norm %o, %gamma : (tensor<2x4x8x16xf32>, tensor<16xf32>) -> tensor<2x4x8x16xf32>
  return %n : tensor<2x4x8x16xf32>
}

// -----

// The gated norm with a non-default eps, in bf16: eps becomes norm_eps.
// CHECK-LABEL: func.func @gated_norm_eps
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^,]*}}, %[[GW:[^:]*]]: {{[^,]*}}, %[[GB:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] norm(%[[GAM]]) norm_gate(%[[GW]], %[[GB]]) norm_eps 1.000000e-03 : (tensor<?x4x?x32xbf16>, tensor<?x4x?x32xbf16>, tensor<?x4x?x16xbf16>, tensor<16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x4x?x16xbf16>
// CHECK-NEXT: return %[[O]]
func.func @gated_norm_eps(%q: tensor<?x4x?x32xbf16>, %k: tensor<?x4x?x32xbf16>, %v: tensor<?x4x?x16xbf16>, %gamma: tensor<16xf32>, %gw: tensor<16xf32>, %gb: tensor<1xf32>) -> tensor<?x4x?x16xbf16> {
  %s = attn.scores %q, %k : (tensor<?x4x?x32xbf16>, tensor<?x4x?x32xbf16>) -> tensor<?x4x?x?xf32>
  %p = attn.softmax %s : tensor<?x4x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xbf16>) -> tensor<?x4x?x16xbf16>
  %n = attn.head_norm %o, %gamma gate(%gw, %gb) eps 1.0e-3 : (tensor<?x4x?x16xbf16>, tensor<16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x4x?x16xbf16>
  return %n : tensor<?x4x?x16xbf16>
}

// -----

// The weighted_sum result is also returned: the chain up to it is fused,
// the head_norm reads the fused op.
// CHECK-LABEL: func.func @sum_used_twice
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[GAM:[^:]*]]: {{[^)]*}})
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] : (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: %[[N:.*]] = attn.head_norm %[[O]], %[[GAM]]
// CHECK-NEXT: return %[[N]], %[[O]]
func.func @sum_used_twice(%q: tensor<2x4x8x32xf32>, %k: tensor<2x4x8x32xf32>, %v: tensor<2x4x8x16xf32>, %gamma: tensor<16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %s = attn.scores %q, %k : (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x8xf32>
  %p = attn.softmax %s : tensor<2x4x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %n = attn.head_norm %o, %gamma : (tensor<2x4x8x16xf32>, tensor<16xf32>) -> tensor<2x4x8x16xf32>
  return %n, %o : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// A head_norm on a chain that cannot be fused (score map used twice): the
// whole chain, head_norm included, stays.
// CHECK-LABEL: func.func @norm_unfusable_chain
// CHECK-NEXT: %[[S:.*]] = attn.scores
// CHECK-NEXT: attn.softmax %[[S]]
// CHECK-NEXT: attn.weighted_sum
// CHECK-NEXT: attn.head_norm
// CHECK-NOT: attn.attention
func.func @norm_unfusable_chain(%q: tensor<2x4x8x32xf32>, %k: tensor<2x4x8x32xf32>, %v: tensor<2x4x8x16xf32>, %gamma: tensor<16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x8xf32>
  %p = attn.softmax %s : tensor<2x4x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %n = attn.head_norm %o, %gamma : (tensor<2x4x8x16xf32>, tensor<16xf32>) -> tensor<2x4x8x16xf32>
  return %n, %s : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>
}

// -----

// A head_norm on a user-written attn.attention is left as is.
// CHECK-LABEL: func.func @norm_after_attention
// CHECK-NEXT: %[[O:.*]] = attn.attention
// CHECK-NOT: norm(
// CHECK-NEXT: attn.head_norm %[[O]]
func.func @norm_after_attention(%q: tensor<2x4x8x32xf32>, %k: tensor<2x4x8x32xf32>, %v: tensor<2x4x8x16xf32>, %gamma: tensor<16xf32>) -> tensor<2x4x8x16xf32> {
  %o = attn.attention %q, %k, %v : (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %n = attn.head_norm %o, %gamma : (tensor<2x4x8x16xf32>, tensor<16xf32>) -> tensor<2x4x8x16xf32>
  return %n : tensor<2x4x8x16xf32>
}
