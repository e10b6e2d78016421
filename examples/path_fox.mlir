// PaTH-FoX: PaTH logits plus the forget-gate bias, both multiplied by the
// softmax scale (fla's PaTH-FoX convention, spec/path_fox.md §1.3).
// Arguments: q, k, v, w [B, H, T, 64], beta [B, H, T], g [B, H, T].
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %w: tensor<?x?x?x64xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %s = attn.scores %q, %k path(%w, %beta) gate(%g) scaled
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
