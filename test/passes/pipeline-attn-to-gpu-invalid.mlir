// What the GPU pipeline does not compile is an error naming it, from the
// pass that finds it.
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="format=none" 2>&1 | FileCheck %s

// CHECK: error: attn-to-block{target=sm_90}: the GPU form takes bf16 or f16 q, k, v (m16n8k16 mma.sync, m64nNk16 wgmma), not f32 operands (the CPU backend runs them: --device=cpu)
func.func @f32(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// -----

// CHECK: error: attn-to-block{target=sm_90}: the GPU form needs static head dims that are multiples of 8 up to 256 (16-byte chunks), got 36
func.func @head_dim(%q: tensor<1x2x8x36xbf16>, %k: tensor<1x2x8x36xbf16>, %v: tensor<1x2x8x36xbf16>) -> tensor<1x2x8x36xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x36xbf16>, tensor<1x2x8x36xbf16>, tensor<1x2x8x36xbf16>) -> tensor<1x2x8x36xbf16>
  return %o : tensor<1x2x8x36xbf16>
}

// -----

// CHECK: error: attn-to-block{target=sm_90}: the GPU form needs static head dims that are multiples of 8 up to 256 (16-byte chunks), got 264
func.func @wide_head_dim(%q: tensor<1x2x8x264xbf16>, %k: tensor<1x2x8x264xbf16>, %v: tensor<1x2x8x264xbf16>) -> tensor<1x2x8x264xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x264xbf16>, tensor<1x2x8x264xbf16>, tensor<1x2x8x264xbf16>) -> tensor<1x2x8x264xbf16>
  return %o : tensor<1x2x8x264xbf16>
}

// -----

// CHECK: error: attn-block-launch-plan: 'attn.rope' in @unfused is not a launch, a scratch allocation or index arithmetic; a launch plan cannot run it on the host
func.func @unfused(%q: tensor<1x2x8x64xbf16>, %k: tensor<1x2x8x64xbf16>, %v: tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16> {
  %qr = attn.rope %q theta 1.000000e+04 : tensor<1x2x8x64xbf16>
  %o = attn.attention %qr, %k, %v : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16>
  return %o : tensor<1x2x8x64xbf16>
}

// -----

// PaTH with RoPE and PaTH with MTA pieces are not fused (attn-to-block
// leaves them with a remark) and the GPU backend has no reference lowering:
// an error, not a success with attn.attention left in the output.
// CHECK: remark: not fused yet (PaTH with RoPE)
// CHECK: error: attn-block-launch-plan: 'attn.attention' in @path_rope was not lowered to GPU kernels (attn-to-block did not fuse it; its remark says why) and the GPU backend has no reference lowering; run it on the CPU (--device=cpu)
func.func @path_rope(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>, %w: tensor<1x2x128x64xf32>, %beta: tensor<1x2x128xf32>) -> tensor<1x2x128x64xbf16> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) path(%w, %beta) : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xf32>, tensor<1x2x128xf32>) -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}

// -----

// CHECK: remark: not fused yet (PaTH)
// CHECK: error: attn-block-launch-plan: 'attn.attention' in @path_mta was not lowered to GPU kernels
func.func @path_mta(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>, %w: tensor<1x2x128x64xf32>, %beta: tensor<1x2x128xf32>, %m: tensor<2x2xf32>) -> tensor<1x2x128x64xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta) head_mix_post(%m) : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xf32>, tensor<1x2x128xf32>, tensor<2x2xf32>) -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
