// MTA, pre-softmax key-query convolution only (c_q = 6, c_k = 11), no RoPE,
// on bf16 activations for the GPU (the kernel stays f32):
// softmax(Mask_-inf(conv(Mask_0(QK^T / sqrt(128))))) V (spec/mta.md §1.2).
// Arguments: q, k, v [B, H, T, 128] bf16, theta_pre [H, 6, 11].
func.func @main(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %theta_pre: tensor<?x6x11xf32>) -> tensor<?x?x?x128xbf16> {
  %s = attn.scores %q, %k : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x?xf32>
  %c = attn.kq_conv pre %s, %theta_pre : tensor<?x?x?x?xf32>, tensor<?x6x11xf32>
  %p = attn.softmax %c : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
