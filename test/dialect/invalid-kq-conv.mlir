// attn.kq_conv verifier errors.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @even_ck(%s: tensor<1x2x4x4xf32>, %t: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op 'kernel' must have c_q >= 1 and an odd c_k (keys are padded (c_k-1)/2 each side), got 'tensor<2x3x4xf32>'}}
  %0 = attn.kq_conv pre %s, %t : tensor<1x2x4x4xf32>, tensor<2x3x4xf32>
  return
}

// -----

func.func @zero_cq(%s: tensor<1x2x4x4xf32>, %t: tensor<2x0x3xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op 'kernel' must have c_q >= 1 and an odd c_k (keys are padded (c_k-1)/2 each side), got 'tensor<2x0x3xf32>'}}
  %0 = attn.kq_conv post %s, %t : tensor<1x2x4x4xf32>, tensor<2x0x3xf32>
  return
}

// -----

func.func @zero_ck(%s: tensor<1x2x4x4xf32>, %t: tensor<2x1x0xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op 'kernel' must have c_q >= 1 and an odd c_k (keys are padded (c_k-1)/2 each side), got 'tensor<2x1x0xf32>'}}
  %0 = attn.kq_conv pre %s, %t : tensor<1x2x4x4xf32>, tensor<2x1x0xf32>
  return
}

// -----

func.func @dynamic_cq(%s: tensor<?x?x?x?xf32>, %t: tensor<?x?x11xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op kernel sizes of 'kernel' [H, c_q, c_k] must be static, got 'tensor<?x?x11xf32>'}}
  %0 = attn.kq_conv pre %s, %t : tensor<?x?x?x?xf32>, tensor<?x?x11xf32>
  return
}

// -----

func.func @dynamic_ck(%s: tensor<?x?x?x?xf32>, %t: tensor<4x6x?xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op kernel sizes of 'kernel' [H, c_q, c_k] must be static, got 'tensor<4x6x?xf32>'}}
  %0 = attn.kq_conv post %s, %t : tensor<?x?x?x?xf32>, tensor<4x6x?xf32>
  return
}

// -----

func.func @kernel_heads(%s: tensor<1x4x8x8xf32>, %t: tensor<2x6x11xf32>) {
  // expected-error @+1 {{'attn.kq_conv' op 'kernel' must have shape [H, c_q, c_k] = [4, ?, ?], got 'tensor<2x6x11xf32>' (dim 0 'H' is 4 from 'input')}}
  %0 = attn.kq_conv pre %s, %t : tensor<1x4x8x8xf32>, tensor<2x6x11xf32>
  return
}
