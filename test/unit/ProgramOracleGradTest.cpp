//===- ProgramOracleGradTest.cpp - program gradients vs finite differences ===//
//
// ref::evaluateGrad (reference/ProgramOracle.h) on whole attn programs: every
// example, a chain of every op with a value used twice and RoPE positions,
// and the fused attn.attention with everything (rope_q_offset included),
// each float argument against central differences of ref::evaluate
// (GradCheck.h). Fresh random inputs each run; failures print the seed.
//
//===----------------------------------------------------------------------===//

#include "GradCheck.h"
#include "ProgramOracle.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using attn::grad_test::expectGradMatches;
using attn::ref::Tensor;

namespace {

struct Program {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit Program(const std::string &source) {
    ctx.loadDialect<mlir::attn::AttnDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &ctx);
  }
  mlir::func::FuncOp main() {
    return module->lookupSymbol<mlir::func::FuncOp>("main");
  }
};

/// Checks evaluateGrad of `source`'s @main against central differences of
/// evaluate, for every argument, on random inputs of `spec`'s sizes.
void expectProgramGradMatches(const std::string &what,
                              const std::string &source,
                              attn::ref::RandomSpec spec) {
  Program p(source);
  ASSERT_TRUE(p.module) << what;
  spec.seed = attn::ref::freshSeed();
  auto inputs = attn::ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(inputs)) << llvm::toString(inputs.takeError());
  auto out = attn::ref::evaluate(p.main(), *inputs);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  const Tensor dO = attn::ref::randn(out->shape, spec.seed + 99);
  auto grads = attn::ref::evaluateGrad(p.main(), *inputs, dO);
  ASSERT_TRUE(static_cast<bool>(grads)) << llvm::toString(grads.takeError());
  ASSERT_EQ(grads->size(), inputs->size());
  auto lossFn = [&] {
    auto y = attn::ref::evaluate(p.main(), *inputs);
    return y ? attn::grad_test::loss(*y, dO) : std::nan("");
  };
  for (size_t n = 0; n < inputs->size(); ++n) {
    mlir::BlockArgument arg = p.main().getArgument(n);
    const std::string name = what + ", argument " + std::to_string(n);
    if (!mlir::isa<mlir::FloatType>(
            mlir::getElementTypeOrSelf(arg.getType()))) {
      EXPECT_FALSE((*grads)[n].has_value()) << name << " is not differentiable";
      continue;
    }
    ASSERT_TRUE((*grads)[n].has_value()) << name;
    expectGradMatches(name, (*inputs)[n], *(*grads)[n], lossFn, spec.seed);
  }
}

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST(ProgramOracleGrad, EveryExample) {
  int checked = 0;
  for (const auto &entry : std::filesystem::directory_iterator(
           std::filesystem::path(ATTN_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() != ".mlir")
      continue;
    attn::ref::RandomSpec spec;
    spec.batch = 1;
    spec.heads = 2;
    spec.seqLen = 6;
    spec.fLo = 0.5; // gates that fall fast enough to matter
    expectProgramGradMatches(entry.path().filename().string(),
                             readFile(entry.path()), spec);
    ++checked;
  }
  EXPECT_GE(checked, 10) << "examples/ not found";
}

// short_conv, l2norm, rope with positions, PaTH-FoX scores, kq_conv,
// head_mix (c_h = 1), softmax, weighted_sum, head_norm with its gate; %x
// feeds short_conv and weighted_sum, so its gradient sums two paths.
TEST(ProgramOracleGrad, ChainOfEveryOp) {
  const std::string source = R"mlir(
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
  attn::ref::RandomSpec spec;
  spec.batch = 2;
  spec.heads = 2;
  spec.seqLen = 7;
  spec.fLo = 0.5;
  expectProgramGradMatches("chain", source, spec);
}

// The fused op with every piece, GQA 2:1, queries at explicit RoPE
// positions (rope_q_offset: rotated by ProgramOracle, not by attention()).
TEST(ProgramOracleGrad, FusedAttentionWithEverything) {
  const std::string source = R"mlir(
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
  attn::ref::RandomSpec spec;
  spec.batch = 2;
  spec.seqLen = 6;
  spec.fLo = 0.5;
  expectProgramGradMatches("fused attention", source, spec);
}

// An argument that does not reach the result gets zeros, not nothing.
TEST(ProgramOracleGrad, UnusedArgumentGetsZeros) {
  Program p(R"mlir(
func.func @main(%q: tensor<1x2x5x4xf32>, %unused: tensor<1x2x5x4xf32>)
    -> tensor<1x2x5x4xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x5xf32>
  %p = attn.softmax %s : tensor<1x2x5x5xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x5x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}
)mlir");
  ASSERT_TRUE(p.module);
  const std::vector<Tensor> in = {attn::ref::randn({1, 2, 5, 4}, 1),
                                  attn::ref::randn({1, 2, 5, 4}, 2)};
  auto grads =
      attn::ref::evaluateGrad(p.main(), in, attn::ref::randn({1, 2, 5, 4}, 3));
  ASSERT_TRUE(static_cast<bool>(grads)) << llvm::toString(grads.takeError());
  ASSERT_TRUE((*grads)[1].has_value());
  EXPECT_EQ((*grads)[1]->data, std::vector<double>(40, 0.0));
  auto bad = attn::ref::evaluateGrad(p.main(), in, Tensor::zeros({1, 2, 5, 5}));
  EXPECT_FALSE(static_cast<bool>(bad));
  llvm::consumeError(bad.takeError());
}
