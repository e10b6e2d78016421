// bf16 variant of path.mlir (the GPU backend's operand type). PaTH
// attention: logits q_i^T H_i ... H_{j+1} k_j / sqrt(64) with
// H_t = I - beta_t w_t w_t^T (spec/path_fox.md §1.2); w and beta stay f32,
// as in fla's parallel_path_attn, since the Householder products need them.
// Arguments: q, k, v [B, H, T, 64] bf16, w [B, H, T, 64] f32 (unit rows),
// beta [B, H, T] f32.
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %w: tensor<?x?x?x64xf32>, %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16> {
  %s = attn.scores %q, %k path(%w, %beta) : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
