// What the GPU pipeline does not compile is an error naming it, from the
// pass that finds it.
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="format=none" 2>&1 | FileCheck %s

// CHECK: error: attn-to-block{target=sm_90}: the GPU form takes bf16 or f16 q, k, v (m16n8k16 mma.sync, m64nNk16 wgmma), not f32 operands (the CPU backend runs them: --device=cpu)
func.func @f32(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// -----

// CHECK: error: attn-to-block{target=sm_90}: the GPU form needs static head dims that are multiples of 64 up to 256 (the 8 x 16-byte chunks of a swizzled row), got 32
func.func @head_dim(%q: tensor<1x2x8x32xbf16>, %k: tensor<1x2x8x32xbf16>, %v: tensor<1x2x8x32xbf16>) -> tensor<1x2x8x32xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>) -> tensor<1x2x8x32xbf16>
  return %o : tensor<1x2x8x32xbf16>
}

// -----

// CHECK: error: attn-block-launch-plan: 'attn.rope' in @unfused is not a launch, a scratch allocation or index arithmetic; a launch plan cannot run it on the host
func.func @unfused(%q: tensor<1x2x8x64xbf16>, %k: tensor<1x2x8x64xbf16>, %v: tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16> {
  %qr = attn.rope %q theta 1.000000e+04 : tensor<1x2x8x64xbf16>
  %o = attn.attention %qr, %k, %v : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16>
  return %o : tensor<1x2x8x64xbf16>
}
