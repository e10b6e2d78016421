// bf16 variant of path_fox.mlir. PaTH-FoX: PaTH logits plus the forget-gate
// bias, both multiplied by the softmax scale (fla's PaTH-FoX convention,
// spec/path_fox.md §1.3); w, beta and g stay f32, as in fla.
// Arguments: q, k, v [B, H, T, 64] bf16, w [B, H, T, 64] f32 (unit rows),
// beta [B, H, T] f32, g [B, H, T] f32.
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %w: tensor<?x?x?x64xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16> {
  %s = attn.scores %q, %k path(%w, %beta) gate(%g) scaled
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
