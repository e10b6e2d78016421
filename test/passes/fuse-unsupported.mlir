// attn-fuse leaves a chain alone when an op the fused form cannot express
// sits in it (another op between the pieces, a piece of the wrong stage or
// order, a repeated piece), or when attn.attention could not hold it (MTA
// without a causal mask, v's element type not q's, pieces in several
// blocks, MTA pieces packed otherwise than the scores). Every op is kept as
// written.
// RUN: attn-opt %s -split-input-file --attn-fuse | FileCheck %s \
// RUN:   --implicit-check-not=attn.attention

// attn.l2norm on the score map between scores and softmax.
// CHECK-LABEL: func.func @l2norm_on_scores
// CHECK-NEXT: %[[S:.*]] = attn.scores
// CHECK-NEXT: %[[N:.*]] = attn.l2norm %[[S]]
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[N]]
// CHECK-NEXT: attn.weighted_sum %[[P]]
func.func @l2norm_on_scores(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %n = attn.l2norm %s : tensor<1x2x8x8xf32>
  %p = attn.softmax %n : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// An arith op on the score map tensor (a temperature) before the softmax.
// CHECK-LABEL: func.func @arith_on_scores
// CHECK-NEXT: %[[S:.*]] = attn.scores
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[S]]
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[T]]
// CHECK-NEXT: attn.weighted_sum %[[P]]
func.func @arith_on_scores(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %temp: tensor<1x2x8x8xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %t = arith.mulf %s, %temp : tensor<1x2x8x8xf32>
  %p = attn.softmax %t : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// A tensor op (a cast to a dynamic type) between softmax and weighted_sum.
// CHECK-LABEL: func.func @cast_on_probs
// CHECK-NEXT: attn.scores
// CHECK-NEXT: %[[P:.*]] = attn.softmax
// CHECK-NEXT: %[[C:.*]] = tensor.cast %[[P]]
// CHECK-NEXT: attn.weighted_sum %[[C]]
func.func @cast_on_probs(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %c = tensor.cast %p : tensor<1x2x8x8xf32> to tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %c, %v : (tensor<?x?x?x?xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Probabilities from a function argument: no chain at all.
// CHECK-LABEL: func.func @probs_from_argument
// CHECK-NEXT: attn.weighted_sum
func.func @probs_from_argument(%p: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Wrong stages: a kq_conv pre after the softmax, a head_mix post before it.
// CHECK-LABEL: func.func @pre_after_softmax
// CHECK: attn.kq_conv pre
// CHECK: attn.weighted_sum
func.func @pre_after_softmax(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %c = attn.kq_conv pre %p, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %o = attn.weighted_sum %c, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @post_before_softmax
// CHECK: attn.head_mix post
// CHECK: attn.weighted_sum
func.func @post_before_softmax(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %w: tensor<2x2xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %m = attn.head_mix post %s, %w : tensor<1x2x8x8xf32>, tensor<2x2xf32>
  %p = attn.softmax %m : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Wrong order: head_mix pre before kq_conv pre (the fused op convolves
// first), and head_mix post before kq_conv post.
// CHECK-LABEL: func.func @mix_then_conv_pre
// CHECK: attn.head_mix pre
// CHECK: attn.kq_conv pre
func.func @mix_then_conv_pre(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>, %w: tensor<2x2xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %m = attn.head_mix pre %s, %w : tensor<1x2x8x8xf32>, tensor<2x2xf32>
  %c = attn.kq_conv pre %m, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %p = attn.softmax %c : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// CHECK-LABEL: func.func @mix_then_conv_post
// CHECK: attn.head_mix post
// CHECK: attn.kq_conv post
func.func @mix_then_conv_post(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>, %w: tensor<2x2xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %m = attn.head_mix post %p, %w : tensor<1x2x8x8xf32>, tensor<2x2xf32>
  %c = attn.kq_conv post %m, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %o = attn.weighted_sum %c, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Two convolutions in one stage: the fused op has one slot per stage.
// CHECK-LABEL: func.func @two_convs_pre
// CHECK-COUNT-2: attn.kq_conv pre
func.func @two_convs_pre(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %c1 = attn.kq_conv pre %s, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %c2 = attn.kq_conv pre %c1, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %p = attn.softmax %c2 : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// MTA after a sliding-window mask: attn.attention needs a causal mask with
// MTA pieces.
// CHECK-LABEL: func.func @mta_sliding_window
// CHECK: attn.scores {{.*}} mask sliding_window window 4
// CHECK: attn.kq_conv pre
func.func @mta_sliding_window(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x3x3xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k mask sliding_window window 4 : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %c = attn.kq_conv pre %s, %th : tensor<1x2x8x8xf32>, tensor<2x3x3xf32>
  %p = attn.softmax %c : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// bf16 q and k with f32 v: attn.attention takes one activation type.
// CHECK-LABEL: func.func @mixed_element_types
// CHECK-NEXT: attn.scores
// CHECK-NEXT: attn.softmax
// CHECK-NEXT: attn.weighted_sum
func.func @mixed_element_types(%q: tensor<1x2x8x16xbf16>, %k: tensor<1x2x8x16xbf16>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Pieces consistent op by op (each sees a dynamic size where the other has
// a static one) that contradict each other in one op: B = 2 on q, B = 3
// on v. The fused op would not verify, so the chain stays.
// CHECK-LABEL: func.func @inconsistent_batch
// CHECK-NEXT: attn.scores
// CHECK-NEXT: attn.softmax
// CHECK-NEXT: attn.weighted_sum
func.func @inconsistent_batch(%q: tensor<2x2x8x16xf32>, %k: tensor<?x2x8x16xf32>, %v: tensor<3x2x8x16xf32>) -> tensor<?x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<2x2x8x16xf32>, tensor<?x2x8x16xf32>) -> tensor<?x2x8x8xf32>
  %p = attn.softmax %s : tensor<?x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x2x8x8xf32>, tensor<3x2x8x16xf32>) -> tensor<?x2x8x16xf32>
  return %o : tensor<?x2x8x16xf32>
}

// -----

// The weighted sum in a nested region, the rest outside: fusing would move
// the whole chain into the region.
// CHECK-LABEL: func.func @several_blocks
// CHECK: attn.scores
// CHECK: attn.softmax
// CHECK: scf.execute_region
// CHECK: attn.weighted_sum
func.func @several_blocks(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %r = scf.execute_region -> tensor<1x2x8x16xf32> {
    %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
    scf.yield %o : tensor<1x2x8x16xf32>
  }
  return %r : tensor<1x2x8x16xf32>
}

// -----

// Packed scores and a kq_conv without the offsets: attn.attention packs
// its MTA pieces with the scores' sequences, so the chain stays.
// CHECK-LABEL: func.func @packed_scores_unpacked_conv
// CHECK-NEXT: %[[S:.*]] = attn.scores {{.*}} cu_seqlens
// CHECK-NEXT: %[[C:.*]] = attn.kq_conv pre %[[S]], %{{[^ ]*}} :
// CHECK-NEXT: %[[P:.*]] = attn.softmax %[[C]]
// CHECK-NEXT: attn.weighted_sum %[[P]]
func.func @packed_scores_unpacked_conv(%q: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %th: tensor<2x2x3xf32>, %cu: tensor<?xi32>) -> tensor<1x2x8x16xf32> {
  %s = attn.scores %q, %q cu_seqlens(%cu) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<?xi32>) -> tensor<1x2x8x8xf32>
  %c = attn.kq_conv pre %s, %th : tensor<1x2x8x8xf32>, tensor<2x2x3xf32>
  %p = attn.softmax %c : tensor<1x2x8x8xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
