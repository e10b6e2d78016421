// RUN: attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=direct" -verify-diagnostics

// What the GPU backend does not run yet is an error naming it.

func.func @f32(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  // expected-error @+1 {{the GPU backend does not support f32 operands (the tensor-core kernels take bf16 or f16 q, k, v) yet}}
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return %o : tensor<1x2x8x64xf32>
}

// -----

func.func @head_dim(%q: tensor<1x2x8x32xbf16>, %k: tensor<1x2x8x32xbf16>, %v: tensor<1x2x8x32xbf16>) -> tensor<1x2x8x32xbf16> {
  // expected-error @+1 {{the GPU backend does not support head dim 32 of q, k (64 or 128 are supported) yet}}
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>, tensor<1x2x8x32xbf16>) -> tensor<1x2x8x32xbf16>
  return %o : tensor<1x2x8x32xbf16>
}

// -----

// expected-error @+1 {{the GPU backend runs a function whose body is one attn.attention (after attn-fuse); 'attn.rope'}}
func.func @unfused(%q: tensor<1x2x8x64xbf16>, %k: tensor<1x2x8x64xbf16>, %v: tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16> {
  %qr = attn.rope %q theta 1.000000e+04 : tensor<1x2x8x64xbf16>
  %o = attn.attention %qr, %k, %v : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16>
  return %o : tensor<1x2x8x64xbf16>
}

// -----

func.func @options(%q: tensor<1x2x8x64xbf16>, %k: tensor<1x2x8x64xbf16>, %v: tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>) -> tensor<1x2x8x64xbf16>
  return %o : tensor<1x2x8x64xbf16>
}

// -----

// expected-error @+1 {{the GPU backend runs a function whose body is one attn.attention (after attn-fuse); 'attn.softmax'}}
func.func @no_attention(%s: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %p = attn.softmax %s : tensor<1x2x8x8xf32>
  %q = attn.softmax %p : tensor<1x2x8x8xf32>
  return %q : tensor<1x2x8x8xf32>
}

// -----

// Functions without attn ops are left alone.
func.func @plain_arith(%a: f32) -> f32 {
  %b = arith.addf %a, %a : f32
  return %b : f32
}
