//===- GradPrograms.h - programs both gradient suites run ------*- C++ -*-===//
//
// The programs the oracle's gradients (ProgramOracleGradTest) and attn-grad's
// training pairs (GradPassTest) are both checked on: every example, a chain
// of every op, the fused op with every piece, an argument the result
// ignores.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_GRADPROGRAMS_H
#define ATTN_TEST_UNIT_GRADPROGRAMS_H

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace attn::grad_test {

/// (file name, text) of every examples/*.mlir.
inline std::vector<std::pair<std::string, std::string>> examplePrograms() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto &entry : std::filesystem::directory_iterator(
           std::filesystem::path(ATTN_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() != ".mlir")
      continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    out.emplace_back(entry.path().filename().string(), ss.str());
  }
  return out;
}

// short_conv, l2norm, rope with positions, PaTH-FoX scores, kq_conv,
// head_mix (c_h = 1), softmax, weighted_sum, head_norm with its gate; %x
// feeds short_conv and weighted_sum, so its gradient sums two paths.
inline const char *kChainOfEveryOp = R"mlir(
func.func @main(%x: tensor<?x?x?x8xf32>, %kern: tensor<?x8x3xf32>,
                %pos: tensor<?xi64>, %k: tensor<?x?x?x8xf32>,
                %w: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>,
                %g: tensor<?x?x?xf32>, %th: tensor<?x2x3xf32>,
                %wm: tensor<?x1xf32>, %gamma: tensor<8xf32>,
                %gw: tensor<8xf32>, %gb: tensor<1xf32>) -> tensor<?x?x?x8xf32> {
  %c = attn.short_conv %x, %kern silu : tensor<?x?x?x8xf32>, tensor<?x8x3xf32>
  %n = attn.l2norm %c eps 1.0e-06 : tensor<?x?x?x8xf32>
  %q = attn.rope %n positions(%pos) theta 1.0e+02 rotary_dim 6
      : tensor<?x?x?x8xf32>, tensor<?xi64>
  %s = attn.scores %q, %k path(%w, %beta) gate(%g)
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %m = attn.kq_conv pre %s, %th : tensor<?x?x?x?xf32>, tensor<?x2x3xf32>
  %h = attn.head_mix pre %m, %wm : tensor<?x?x?x?xf32>, tensor<?x1xf32>
  %p = attn.softmax %h : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %x : (tensor<?x?x?x?xf32>, tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  %y = attn.head_norm %o, %gamma gate(%gw, %gb) eps 1.0e-05
      : (tensor<?x?x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<?x?x?x8xf32>
  return %y : tensor<?x?x?x8xf32>
}
)mlir";

// The fused op with every piece, GQA 2:1, queries at explicit RoPE
// positions (rope_q_offset).
inline const char *kFusedAttentionWithEverything = R"mlir(
func.func @main(%q: tensor<?x2x?x8xf32>, %k: tensor<?x1x?x8xf32>,
                %v: tensor<?x1x?x6xf32>, %w: tensor<?x1x?x8xf32>,
                %beta: tensor<?x1x?xf32>, %g: tensor<?x2x?xf32>,
                %kp: tensor<2x2x3xf32>, %hp: tensor<2x2xf32>,
                %kpo: tensor<2x3x5xf32>, %hpo: tensor<2x1xf32>,
                %gamma: tensor<6xf32>, %gw: tensor<6xf32>,
                %gb: tensor<1xf32>) -> tensor<?x2x?x6xf32> {
  %o = attn.attention %q, %k, %v rope(1.0e+02) rope_style interleaved
      rope_dim 6 rope_offset 1 rope_q_offset 3 path(%w, %beta) gate(%g) scaled
      kq_conv_pre(%kp) head_mix_pre(%hp) kq_conv_post(%kpo)
      head_mix_post(%hpo) norm(%gamma) norm_gate(%gw, %gb) norm_eps 1.0e-3
      mask causal scale 0.3
      : (tensor<?x2x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x6xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?xf32>, tensor<?x2x?xf32>, tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x3x5xf32>, tensor<2x1xf32>, tensor<6xf32>, tensor<6xf32>, tensor<1xf32>) -> tensor<?x2x?x6xf32>
  return %o : tensor<?x2x?x6xf32>
}
)mlir";

// %unused does not reach the result.
inline const char *kUnusedArgument = R"mlir(
func.func @main(%q: tensor<1x2x5x4xf32>, %unused: tensor<1x2x5x4xf32>)
    -> tensor<1x2x5x4xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x5xf32>
  %p = attn.softmax %s : tensor<1x2x5x5xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x5x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}
)mlir";

} // namespace attn::grad_test

#endif // ATTN_TEST_UNIT_GRADPROGRAMS_H
