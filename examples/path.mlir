// PaTH attention: logits q_i^T H_i ... H_{j+1} k_j / sqrt(64) with
// H_t = I - beta_t w_t w_t^T (spec/path_fox.md §1.2). w rows are unit-norm
// as given (no short conv or L2 norm here); no RoPE.
// Arguments: q, k, v, w [B, H, T, 64], beta [B, H, T].
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %w: tensor<?x?x?x64xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %s = attn.scores %q, %k path(%w, %beta) : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
