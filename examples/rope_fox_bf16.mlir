// RoPE + FoX, bf16: rotary embedding (theta 10000, half style) on q and k,
// then forgetting attention's bias G_i - G_j (G the inclusive cumsum of the
// log forget gate g [B, H, T], not scaled: FoX convention, spec/path_fox.md
// §3), causal, scale 1/sqrt(64). Arguments: q, k, v [B, H, T, 64], g.
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16> {
  %qr = attn.rope %q theta 1.000000e+04 : tensor<?x?x?x64xbf16>
  %kr = attn.rope %k theta 1.000000e+04 : tensor<?x?x?x64xbf16>
  %s = attn.scores %qr, %kr gate(%g) : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
