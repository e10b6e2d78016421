// bf16 variant of fox.mlir (the GPU backend's operand type; f32 score maps).
// Forgetting attention (FoX): logits q.k/sqrt(64) + G_i - G_j with G the
// inclusive cumsum of the log forget gate g [B, H, T]; the gate term is not
// scaled (FoX convention, spec/path_fox.md §3). Arguments: q, k, v, g.
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16> {
  %s = attn.scores %q, %k gate(%g) : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
