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
#include "GradPrograms.h"
#include "ProgramOracle.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

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

} // namespace

TEST(ProgramOracleGrad, EveryExample) {
  int checked = 0;
  for (const auto &[name, source] : attn::grad_test::examplePrograms()) {
    attn::ref::RandomSpec spec;
    spec.batch = 1;
    spec.heads = 2;
    spec.seqLen = 6;
    spec.fLo = 0.5; // gates that fall fast enough to matter
    expectProgramGradMatches(name, source, spec);
    ++checked;
  }
  EXPECT_GE(checked, 10) << "examples/ not found";
}

TEST(ProgramOracleGrad, ChainOfEveryOp) {
  const std::string source = attn::grad_test::kChainOfEveryOp;
  attn::ref::RandomSpec spec;
  spec.batch = 2;
  spec.heads = 2;
  spec.seqLen = 7;
  spec.fLo = 0.5;
  expectProgramGradMatches("chain", source, spec);
}

// rope_q_offset: rotated by ProgramOracle, not by attention().
TEST(ProgramOracleGrad, FusedAttentionWithEverything) {
  const std::string source = attn::grad_test::kFusedAttentionWithEverything;
  attn::ref::RandomSpec spec;
  spec.batch = 2;
  spec.seqLen = 6;
  spec.fLo = 0.5;
  expectProgramGradMatches("fused attention", source, spec);
}

// An argument that does not reach the result gets zeros, not nothing.
TEST(ProgramOracleGrad, UnusedArgumentGetsZeros) {
  Program p(attn::grad_test::kUnusedArgument);
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
