// BUG: attn.attention's verifier binds the kernel sizes of kq_conv_pre and
// kq_conv_post to the same symbols c_q / c_k (verifyKqKernel in
// AttnVerifiers.cpp), so a fused op whose pre- and post-softmax kernels have
// different sizes is rejected with
//   'kq_conv_post' must have shape [Hq, c_q, c_k] = [8, 6, 11], got
//   'tensor<8x3x5xf32>' (dim 1 'c_q' is 6 from 'kq_conv_pre')
// although the documented meaning of the op is the chain
// kq_conv pre -> ... -> kq_conv post, where each convolution has its own
// kernel and the unfused chain below (@chain) verifies. Expected: both
// functions verify and round-trip.
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @fused
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kq_conv_pre(%{{.*}}) kq_conv_post(%{{.*}}) : ({{.*}}tensor<8x6x11xf32>, tensor<8x3x5xf32>) -> tensor<?x8x?x64xf32>
func.func @fused(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>,
                 %pre: tensor<8x6x11xf32>, %post: tensor<8x3x5xf32>) -> tensor<?x8x?x64xf32> {
  %0 = attn.attention %q, %k, %v kq_conv_pre(%pre) kq_conv_post(%post)
      : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<8x6x11xf32>, tensor<8x3x5xf32>) -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

// CHECK-LABEL: func.func @chain
// CHECK: attn.kq_conv pre
// CHECK: attn.kq_conv post
func.func @chain(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>,
                 %pre: tensor<8x6x11xf32>, %post: tensor<8x3x5xf32>) -> tensor<?x8x?x64xf32> {
  %s = attn.scores %q, %k : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32>
  %c = attn.kq_conv pre %s, %pre : tensor<?x8x?x?xf32>, tensor<8x6x11xf32>
  %p = attn.softmax %c : tensor<?x8x?x?xf32>
  %c2 = attn.kq_conv post %p, %post : tensor<?x8x?x?xf32>, tensor<8x3x5xf32>
  %o = attn.weighted_sum %c2, %v : (tensor<?x8x?x?xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}
