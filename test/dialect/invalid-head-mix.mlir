// attn.head_mix verifier errors.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @group_not_dividing(%s: tensor<1x6x4x4xf32>, %w: tensor<6x4xf32>) {
  // expected-error @+1 {{'attn.head_mix' op group size c_h = 4 must divide the head count H = 6}}
  %0 = attn.head_mix pre %s, %w : tensor<1x6x4x4xf32>, tensor<6x4xf32>
  return
}

// -----

// H comes from the weight when the map's head count is dynamic.
func.func @group_not_dividing_weight_heads(%s: tensor<?x?x?x?xf32>, %w: tensor<6x4xf32>) {
  // expected-error @+1 {{'attn.head_mix' op group size c_h = 4 must divide the head count H = 6}}
  %0 = attn.head_mix post %s, %w : tensor<?x?x?x?xf32>, tensor<6x4xf32>
  return
}

// -----

func.func @group_larger_than_heads(%s: tensor<1x4x4x4xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn.head_mix' op group size c_h = 8 must divide the head count H = 4}}
  %0 = attn.head_mix pre %s, %w : tensor<1x4x4x4xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @group_zero(%s: tensor<1x4x4x4xf32>, %w: tensor<4x0xf32>) {
  // expected-error @+1 {{'attn.head_mix' op group size c_h = dim 1 of 'weight' [H, c_h] must be >= 1, got 'tensor<4x0xf32>'}}
  %0 = attn.head_mix pre %s, %w : tensor<1x4x4x4xf32>, tensor<4x0xf32>
  return
}

// -----

func.func @weight_heads(%s: tensor<1x4x4x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{'attn.head_mix' op 'weight' must have shape [H, 4] = [4, 4], got 'tensor<8x4xf32>' (dim 0 'H' is 4 from 'input')}}
  %0 = attn.head_mix post %s, %w : tensor<1x4x4x4xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @weight_heads_dynamic_group(%s: tensor<?x4x?x?xf32>, %w: tensor<2x?xf32>) {
  // expected-error @+1 {{'attn.head_mix' op 'weight' must have shape [H, c_h] = [4, ?], got 'tensor<2x?xf32>' (dim 0 'H' is 4 from 'input')}}
  %0 = attn.head_mix post %s, %w : tensor<?x4x?x?xf32>, tensor<2x?xf32>
  return
}
