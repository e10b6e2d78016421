// attn-fuse leaves a chain alone when one of its intermediate values (score
// map, MTA outputs, probabilities) has another use: that value has to stay
// materialised, so nothing is fused and every op is kept as written.
// RUN: attn-opt %s -split-input-file --attn-fuse | FileCheck %s \
// RUN:   --implicit-check-not=attn.attention

// A score map used twice (here also returned).
// CHECK-LABEL: func.func @score_map_used_twice
// CHECK-NEXT: %[[S:.*]] = attn.scores
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[S]]
// CHECK-NEXT: %[[O:.*]] = attn.weighted_sum %[[P]]
// CHECK-NEXT: return %[[O]], %[[S]]
func.func @score_map_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %s : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}

// -----

// One score map feeding two softmaxes: neither chain is fused.
// CHECK-LABEL: func.func @score_map_two_chains
// CHECK-NEXT: %[[S:.*]] = attn.scores
// CHECK-NEXT: %[[P1:.*]] = attn.softmax %[[S]]
// CHECK-NEXT: attn.weighted_sum %[[P1]]
// CHECK-NEXT: %[[P2:.*]] = attn.softmax %[[S]]
// CHECK-NEXT: attn.weighted_sum %[[P2]]
func.func @score_map_two_chains(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p1 = attn.softmax %s : tensor<1x2x8x8xf32>
  %o1 = attn.weighted_sum %p1, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %p2 = attn.softmax %s : tensor<1x2x8x8xf32>
  %o2 = attn.weighted_sum %p2, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o1, %o2 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// The softmax output used twice: by two weighted sums (two value tensors).
// CHECK-LABEL: func.func @softmax_used_twice
// CHECK-NEXT: %[[S:.*]] = attn.scores
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[S]]
// CHECK-NEXT: attn.weighted_sum %[[P]]
// CHECK-NEXT: attn.weighted_sum %[[P]]
func.func @softmax_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v1: tensor<1x2x8x16xf32>, %v2: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o1 = attn.weighted_sum %p, %v1 : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %o2 = attn.weighted_sum %p, %v2 : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o1, %o2 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// The probabilities returned beside the output.
// CHECK-LABEL: func.func @probs_returned
// CHECK: %[[P:.*]] = attn.softmax
// CHECK-NEXT: %[[O:.*]] = attn.weighted_sum %[[P]]
// CHECK-NEXT: return %[[O]], %[[P]]
func.func @probs_returned(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %p : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}

// -----

// Each MTA output used twice in turn: kq_conv pre, head_mix pre, kq_conv
// post, head_mix post.
// CHECK-LABEL: func.func @conv_pre_used_twice
// CHECK: %[[C:.*]] = attn.kq_conv pre
// CHECK: return %{{.*}}, %[[C]]
func.func @conv_pre_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %c = attn.kq_conv pre %s, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %p = attn.softmax %c : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %c : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @mix_pre_used_twice
// CHECK: %[[M:.*]] = attn.head_mix pre
// CHECK: return %{{.*}}, %[[M]]
func.func @mix_pre_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<2x2xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %m = attn.head_mix pre %s, %w : tensor<1x2x8x8xf32>, tensor<2x2xf32>
  %p = attn.softmax %m : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %m : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @conv_post_used_twice
// CHECK: %[[C:.*]] = attn.kq_conv post
// CHECK: return %{{.*}}, %[[C]]
func.func @conv_post_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %c = attn.kq_conv post %p, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %o = attn.weighted_sum %c, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %c : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @mix_post_used_twice
// CHECK: %[[M:.*]] = attn.head_mix post
// CHECK: return %{{.*}}, %[[M]]
func.func @mix_post_used_twice(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<2x2xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %m = attn.head_mix post %p, %w : tensor<1x2x8x8xf32>, tensor<2x2xf32>
  %o = attn.weighted_sum %m, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o, %m : tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>
}
