//===- GradPassTest.cpp - attn-grad's training pairs vs the fp64 oracle ---===//
//
// Compiles the training pair (attn-grad's @main_fwd and @main_grad, through
// Engine::compileTraining) of every example and of a chain of every op on
// the CPU engine, feeds the forward's saved state to the backward and
// compares the forward's result and every gradient with ref::evaluate and
// ref::evaluateGrad. Fresh random inputs;
// failures print the seed (ATTN_SEED replays it).
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"
#include "GradPrograms.h"

using namespace attn::exec_test;

namespace {

Tensor toTensor(const HostArray &a) {
  auto t = attn::ref::fromHost(a);
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : Tensor();
}

/// The training pair of `source`'s @main (Engine::compileTraining, through
/// `pipeline`) against the oracle, f32: the forward's saved state fed to the
/// backward, the output and each gradient within ref::trainingBounds, and
/// one gradient per float argument.
void expectTrainingPairMatches(
    const std::string &what, const std::string &source,
    attn::ref::RandomSpec spec,
    attn::Pipeline pipeline = attn::Pipeline::Reference) {
  Program p(source);
  ASSERT_TRUE(p.module) << what;
  const attn::ref::TrainingBounds bounds = attn::ref::trainingBounds(p.main());
  spec.seed = attn::ref::freshSeed();
  SCOPED_TRACE(what + ", seed " + std::to_string(spec.seed));
  auto inputs = attn::ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(inputs)) << llvm::toString(inputs.takeError());
  auto ref = attn::ref::evaluate(p.main(), *inputs);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  const Tensor dO = attn::ref::randomCotangent(ref->shape, spec.seed);
  auto refGrads = attn::ref::evaluateGrad(p.main(), *inputs, dO);
  ASSERT_TRUE(static_cast<bool>(refGrads))
      << llvm::toString(refGrads.takeError());

  attn::CompileOptions options;
  options.pipeline = pipeline;
  auto pair = engine().compileTraining(source, options);
  ASSERT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());
  std::vector<HostArray> args;
  std::vector<size_t> floatArgs;
  for (size_t n = 0; n < inputs->size(); ++n) {
    bool isFloat = mlir::isa<mlir::FloatType>(
        mlir::getElementTypeOrSelf(p.main().getArgument(n).getType()));
    if (isFloat)
      floatArgs.push_back(n);
    args.push_back(attn::ref::toHost((*inputs)[n], isFloat ? attn::DType::F32
                                                           : attn::DType::I64));
  }
  EXPECT_EQ(pair->gradArgs, floatArgs) << "one gradient per float argument";
  auto fwd = pair->forward->runAll(args);
  ASSERT_TRUE(static_cast<bool>(fwd)) << llvm::toString(fwd.takeError());
  ASSERT_EQ(fwd->size(), 1 + pair->numSaved());
  EXPECT_LE(attn::ref::relError(toTensor((*fwd)[0]), *ref), bounds.output.bound)
      << "output";

  std::vector<HostArray> bwdArgs = args;
  bwdArgs.insert(bwdArgs.end(), fwd->begin(), fwd->end());
  bwdArgs.push_back(attn::ref::toHost(dO, attn::DType::F32));
  auto grads = pair->backward->runAll(bwdArgs);
  ASSERT_TRUE(static_cast<bool>(grads)) << llvm::toString(grads.takeError());
  ASSERT_EQ(grads->size(), pair->gradArgs.size());
  for (auto [i, n] : llvm::enumerate(pair->gradArgs)) {
    ASSERT_TRUE((*refGrads)[n].has_value()) << "argument " << n;
    Tensor got = toTensor((*grads)[i]);
    ASSERT_EQ(got.shape, (*refGrads)[n]->shape) << "argument " << n;
    ASSERT_FALSE(bounds.args[n].rms) << "an f32 program";
    EXPECT_LE(attn::ref::relError(got, *(*refGrads)[n]), bounds.args[n].bound)
        << "gradient of argument " << n;
  }
}

} // namespace

TEST(GradPass, EveryExample) {
  int checked = 0;
  for (const auto &[name, source] : attn::grad_test::examplePrograms()) {
    // The f32 examples: bf16 ones round the recomputed forward.
    if (name.find("bf16") != std::string::npos)
      continue;
    attn::ref::RandomSpec spec;
    spec.batch = 1;
    spec.heads = 2;
    spec.seqLen = 7;
    spec.fLo = 0.5; // gates that fall fast enough to matter
    expectTrainingPairMatches(name, source, spec);
    ++checked;
  }
  EXPECT_GE(checked, 6) << "examples/ not found";
}

// RoPE positions are not differentiable: no gradient.
TEST(GradPass, ChainOfEveryOp) {
  const std::string source = attn::grad_test::kChainOfEveryOp;
  attn::ref::RandomSpec spec;
  spec.batch = 2;
  spec.heads = 2;
  spec.seqLen = 7;
  spec.fLo = 0.5;
  expectTrainingPairMatches("chain", source, spec);
}

// Expanded by attn-grad.
TEST(GradPass, FusedAttentionWithEverything) {
  const std::string source = attn::grad_test::kFusedAttentionWithEverything;
  attn::ref::RandomSpec spec;
  spec.batch = 2;
  spec.seqLen = 6;
  spec.fLo = 0.5;
  expectTrainingPairMatches("fused attention", source, spec);
}

// An argument the result does not depend on gets zeros.
TEST(GradPass, UnusedArgumentGetsZeros) {
  const std::string source = attn::grad_test::kUnusedArgument;
  expectTrainingPairMatches("unused argument", source, {});
}

// The fused pipeline (the runtime's default) compiles the same pair.
TEST(GradPass, FusedPipeline) {
  for (const auto &[name, source] : attn::grad_test::examplePrograms()) {
    if (name != "fox.mlir" && name != "mta.mlir")
      continue;
    attn::ref::RandomSpec spec;
    spec.heads = 2;
    spec.seqLen = 9;
    spec.fLo = 0.5;
    expectTrainingPairMatches(name, source, spec, attn::Pipeline::Auto);
  }
}

namespace {

/// One attn.attention over q [B, Hq, T, D], k [B, Hk, S, D], v [B, Hk, S,
/// Dv] (and FoX's g [B, Hq, S]), f32: `rope` its RoPE syntax, `pieces` the
/// rest after the gate.
struct FlashCase {
  int64_t hq, hk, t, s, d, dv;
  bool fox;
  std::string pieces, rope = "";

  std::string source() const {
    auto type = [](int64_t h, int64_t n, int64_t d) {
      return "tensor<1x" + std::to_string(h) + "x" + std::to_string(n) +
             (d ? "x" + std::to_string(d) : "") + "xf32>";
    };
    std::string q = type(hq, t, d), k = type(hk, s, d), v = type(hk, s, dv),
                g = type(hq, s, 0), o = type(hq, t, dv);
    std::string args = "%q: " + q + ", %k: " + k + ", %v: " + v;
    std::string types = q + ", " + k + ", " + v;
    if (fox) {
      args += ", %g: " + g;
      types += ", " + g;
    }
    return "func.func @main(" + args + ") -> " + o + " {\n" +
           "  %o = attn.attention %q, %k, %v " + rope + " " +
           (fox ? "gate(%g) " : "") + pieces + " : (" + types + ") -> " + o +
           "\n  return %o : " + o + "\n}\n";
  }
};

} // namespace

// The fused flash backward (attn.attention_grad through attn-to-block, on
// the CPU): every gradient within 1e-5 of the oracle's, across tile edges
// (T = 63, 64, 65), GQA, the masks, T != S (T = 1: one decoding query),
// Dv != D, FoX and RoPE (both styles, a partial rotation, an offset). (T = S =
// 1 has dq = dk = 0 exactly, a softmax over one key being constant: no relative
// error is defined there.)
TEST(GradPass, FusedFlashBackward) {
  const std::vector<FlashCase> cases = {
      {2, 2, 1, 70, 32, 32, false, ""},
      {2, 2, 63, 63, 32, 32, false, ""},
      {2, 2, 64, 64, 32, 32, false, ""},
      {2, 2, 65, 65, 32, 32, false, ""},
      {4, 2, 130, 130, 64, 64, false, ""},
      {2, 1, 40, 100, 32, 32, false, ""},
      {2, 2, 50, 90, 32, 16, false, "mask none"},
      {2, 2, 150, 150, 32, 32, false, "mask sliding_window window 16"},
      {4, 2, 130, 130, 32, 32, true, ""},
      {2, 2, 70, 100, 32, 32, true, "scaled mask sliding_window window 20"},
      {2, 2, 90, 90, 16, 48, true, "scaled scale 0.3"},
      {2, 1, 100, 100, 32, 32, false, "", "rope(1.0e+04)"},
      {2, 2, 70, 90, 32, 32, true, "",
       "rope(5.0e+05) rope_style interleaved rope_dim 16 rope_offset 3"},
  };
  for (const FlashCase &c : cases) {
    std::string source = c.source();
    auto pair = engine().compileTraining(source);
    ASSERT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());
    for (const std::string &remark : pair->backward->remarks())
      EXPECT_EQ(remark.find("no fused backward"), std::string::npos)
          << source << remark;
    attn::ref::RandomSpec spec;
    spec.fLo = 0.5;
    expectTrainingPairMatches(source, source, spec, attn::Pipeline::Auto);
  }
}

// The names the arguments have in the source, and the argument of each
// gradient: RoPE positions (%pos) have none.
TEST(GradPass, ArgumentNamesAndGradients) {
  auto pair = engine().compileTraining(attn::grad_test::kChainOfEveryOp);
  ASSERT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());
  EXPECT_EQ(pair->argNames,
            (std::vector<std::string>{"x", "kern", "pos", "k", "w", "beta", "g",
                                      "th", "wm", "gamma", "gw", "gb"}));
  EXPECT_EQ(pair->gradArgs,
            (std::vector<size_t>{0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(pair->numSaved(), 1u);
  EXPECT_EQ(pair->backward->arguments().size(), 12u + 1 + 1 + 1);
}

TEST(GradPass, CompileTrainingErrors) {
  auto expectError = [](const std::string &source, const std::string &entry,
                        const std::string &want) {
    attn::CompileOptions options;
    options.entry = entry;
    auto pair = engine().compileTraining(source, options, "prog.mlir");
    ASSERT_FALSE(static_cast<bool>(pair)) << entry;
    std::string got = llvm::toString(pair.takeError());
    EXPECT_NE(got.find(want), std::string::npos) << got;
  };
  const std::string two = R"mlir(
func.func @two(%q: tensor<1x2x5x4xf32>) -> (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) {
  %o = attn.attention %q, %q, %q : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  return %o, %q : tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
}
)mlir";
  expectError(two, "two", "@two must return one float tensor (it returns 2");
  expectError(two, "nope", "no function @nope in prog.mlir");
  expectError("func.func @main(", "main", "cannot parse prog.mlir");
}
