// attn.short_conv verifier errors.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_kernel_size(%x: tensor<1x2x3x8xf32>, %k: tensor<2x8x?xf32>) {
  // expected-error @+1 {{'attn.short_conv' op kernel size K = dim 2 of 'kernel' [H, D, K] must be static and >= 1, got 'tensor<2x8x?xf32>'}}
  %0 = attn.short_conv %x, %k : tensor<1x2x3x8xf32>, tensor<2x8x?xf32>
  return
}

// -----

func.func @zero_kernel_size(%x: tensor<1x2x3x8xf32>, %k: tensor<2x8x0xf32>) {
  // expected-error @+1 {{'attn.short_conv' op kernel size K = dim 2 of 'kernel' [H, D, K] must be static and >= 1, got 'tensor<2x8x0xf32>'}}
  %0 = attn.short_conv %x, %k silu : tensor<1x2x3x8xf32>, tensor<2x8x0xf32>
  return
}

// -----

func.func @kernel_heads(%x: tensor<1x2x3x8xbf16>, %k: tensor<4x8x3xf32>) {
  // expected-error @+1 {{'attn.short_conv' op 'kernel' must have shape [H, D, K] = [2, 8, ?], got 'tensor<4x8x3xf32>' (dim 0 'H' is 2 from 'input')}}
  %0 = attn.short_conv %x, %k : tensor<1x2x3x8xbf16>, tensor<4x8x3xf32>
  return
}

// -----

func.func @kernel_channels(%x: tensor<?x?x?x8xf32>, %k: tensor<?x16x3xf32>) {
  // expected-error @+1 {{'attn.short_conv' op 'kernel' must have shape [H, D, K] = [?, 8, ?], got 'tensor<?x16x3xf32>' (dim 1 'D' is 8 from 'input')}}
  %0 = attn.short_conv %x, %k silu : tensor<?x?x?x8xf32>, tensor<?x16x3xf32>
  return
}
