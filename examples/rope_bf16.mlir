// bf16 variant of rope.mlir (the GPU backend's operand type; f32 score maps).
// RoPE attention: rotary embedding (theta 10000, half style) on q and k,
// causal, scale 1/sqrt(64) (the default). Arguments: q, k, v [B, H, T, 64].
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %qr = attn.rope %q theta 1.000000e+04 : tensor<?x?x?x64xbf16>
  %kr = attn.rope %k theta 1.000000e+04 : tensor<?x?x?x64xbf16>
  %s = attn.scores %qr, %kr : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
