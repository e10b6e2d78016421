// The released MTA configuration (spec/mta.md §8) on bf16 activations for
// the GPU: RoPE (theta 10000) on q and k; pre-softmax key-query conv (6x11)
// and head mix over all heads; softmax; post-softmax key-query conv and head
// mix over all heads; then the per-head RMS norm (eps 1e-5, weight gamma)
// with the scalar gate sigmoid(gate_w . o + gate_b). Kernels, mixing
// weights and the norm's parameters stay f32. Head dim 128 as in the
// benchmark (H = 16 there). Arguments: q, k, v [B, H, T, 128] bf16,
// theta_pre [H, 6, 11], w_pre [H, H], theta_post [H, 6, 11], w_post [H, H],
// gamma [128], gate_w [128], gate_b [1].
func.func @main(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                %theta_pre: tensor<?x6x11xf32>, %w_pre: tensor<?x?xf32>,
                %theta_post: tensor<?x6x11xf32>, %w_post: tensor<?x?xf32>,
                %gamma: tensor<128xf32>, %gate_w: tensor<128xf32>,
                %gate_b: tensor<1xf32>) -> tensor<?x?x?x128xbf16> {
  %qr = attn.rope %q theta 1.000000e+04 : tensor<?x?x?x128xbf16>
  %kr = attn.rope %k theta 1.000000e+04 : tensor<?x?x?x128xbf16>
  %s = attn.scores %qr, %kr : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x?xf32>
  %c = attn.kq_conv pre %s, %theta_pre : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
  %m = attn.head_mix pre %c, %w_pre : tensor<?x?x?x?xf32>, tensor<?x?xf32>
  %p = attn.softmax %m : tensor<?x?x?x?xf32>
  %c2 = attn.kq_conv post %p, %theta_post : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
  %m2 = attn.head_mix post %c2, %w_post : tensor<?x?x?x?xf32>, tensor<?x?xf32>
  %o = attn.weighted_sum %m2, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  %n = attn.head_norm %o, %gamma gate(%gate_w, %gate_b) eps 1.000000e-05
      : (tensor<?x?x?x128xbf16>, tensor<128xf32>, tensor<128xf32>, tensor<1xf32>) -> tensor<?x?x?x128xbf16>
  return %n : tensor<?x?x?x128xbf16>
}
