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
#include "GradChecks.h"
#include "GradPrograms.h"
#include "Sweep.h"

#include <random>

using namespace attn::exec_test;

namespace {

using attn::test_util::toTensor;

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

// Packed sequences (cu_seqlens, random cuts of T into 3 sequences, empty
// ones possible): forward and backward of attn.attention with each piece
// that takes them, and of a scores chain; both pipelines (the fused one
// leaves them to the reference lowering).
TEST(GradPass, PackedSequences) {
  const char *types[] = {"tensor<1x2x?x8xf32>", "tensor<1x1x?x8xf32>",
                         "tensor<1x1x?x6xf32>", "tensor<1x1x?x8xf32>",
                         "tensor<1x1x?xf32>",   "tensor<1x2x?xf32>"};
  auto program = [&](const std::string &pieces, bool path, bool gate,
                     const std::string &mask = "") {
    std::string args = "%q: " + std::string(types[0]) + ", %k: " + types[1] +
                       ", %v: " + types[2];
    std::string operands = "%q, %k, %v " + pieces;
    std::string opTypes =
        std::string(types[0]) + ", " + types[1] + ", " + types[2];
    if (path) {
      args += ", %w: " + std::string(types[3]) + ", %b: " + types[4];
      operands += " path(%w, %b)";
      opTypes += std::string(", ") + types[3] + ", " + types[4];
    }
    if (gate) {
      args += ", %g: " + std::string(types[5]);
      operands += " gate(%g) scaled";
      opTypes += std::string(", ") + types[5];
    }
    return "func.func @main(" + args +
           ", %cu: tensor<?xi32>) -> tensor<1x2x?x6xf32> {\n"
           "  %o = attn.attention " +
           operands + " cu_seqlens(%cu) " + mask + " : (" + opTypes +
           ", tensor<?xi32>) -> tensor<1x2x?x6xf32>\n"
           "  return %o : tensor<1x2x?x6xf32>\n}\n";
  };
  const std::pair<std::string, std::string> cases[] = {
      {"plain", program("", false, false)},
      {"rope window", program("rope(1.0e+02) rope_offset 2", false, false,
                              "mask sliding_window window 3")},
      {"fox", program("rope(1.0e+02) rope_style interleaved", false, true)},
      {"path fox", program("", true, true)},
  };
  for (const auto &[name, source] : cases) {
    attn::ref::RandomSpec spec;
    spec.seqLen = 70; // more than one 64-row query tile
    spec.fLo = 0.5;
    for (attn::Pipeline pipeline :
         {attn::Pipeline::Reference, attn::Pipeline::Auto})
      expectTrainingPairMatches("packed " + name, source, spec, pipeline);
  }
  const std::string chain = R"(
func.func @main(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>,
                %g: tensor<1x2x?xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x8xf32> {
  %s = attn.scores %q, %k gate(%g) cu_seqlens(%cu) mask sliding_window window 4
      : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?xf32>, tensor<?xi32>) -> tensor<1x2x?x?xf32>
  %p = attn.softmax %s : tensor<1x2x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<1x2x?x?xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
)";
  attn::ref::RandomSpec spec;
  spec.seqLen = 12;
  spec.sequences = 4;
  expectTrainingPairMatches("packed scores chain", chain, spec);
}

// Packed sequences with MTA's pieces: each sequence convolved and mixed as
// if alone, forward (the fused MTA kernels under Auto) and backward (the
// reference lowering's kq_conv_grad and head_mix_grad).
TEST(GradPass, PackedSequencesMta) {
  const std::string pieces[] = {
      // Everything, GQA; the post mix over both heads (with c_h = 1 the
      // head norm's scale invariance makes its weight's gradient ~0, only
      // eps's share, and a relative bound meaningless).
      R"(func.func @main(%q: tensor<1x2x?x8xf32>, %k: tensor<1x1x?x8xf32>, %v: tensor<1x1x?x6xf32>,
    %tp: tensor<2x3x3xf32>, %wp: tensor<2x2xf32>, %tq: tensor<2x2x5xf32>, %wq: tensor<2x2xf32>,
    %gm: tensor<6xf32>, %gw: tensor<6xf32>, %gb: tensor<1xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x6xf32> {
  %o = attn.attention %q, %k, %v kq_conv_pre(%tp) head_mix_pre(%wp) kq_conv_post(%tq)
      head_mix_post(%wq) norm(%gm) norm_gate(%gw, %gb) cu_seqlens(%cu)
      : (tensor<1x2x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x6xf32>, tensor<2x3x3xf32>,
         tensor<2x2xf32>, tensor<2x2x5xf32>, tensor<2x2xf32>, tensor<6xf32>, tensor<6xf32>,
         tensor<1xf32>, tensor<?xi32>) -> tensor<1x2x?x6xf32>
  return %o : tensor<1x2x?x6xf32>
})",
      // Pre-only with RoPE and FoX (one pass; the rope kernels rotate).
      R"(func.func @main(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x6xf32>,
    %g: tensor<1x2x?xf32>, %tp: tensor<2x4x3xf32>, %cu: tensor<?xi32>) -> tensor<1x2x?x6xf32> {
  %o = attn.attention %q, %k, %v rope(1.0e+02) gate(%g) kq_conv_pre(%tp) cu_seqlens(%cu)
      : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x6xf32>, tensor<1x2x?xf32>,
         tensor<2x4x3xf32>, tensor<?xi32>) -> tensor<1x2x?x6xf32>
  return %o : tensor<1x2x?x6xf32>
})"};
  for (const std::string &source : pieces) {
    attn::ref::RandomSpec spec;
    spec.seqLen = 70; // more than one 64-row query tile
    spec.fLo = 0.5;
    for (attn::Pipeline pipeline :
         {attn::Pipeline::Reference, attn::Pipeline::Auto})
      expectTrainingPairMatches("packed mta", source, spec, pipeline);
  }
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
    if (!attn::test::sweepCase())
      continue;
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

namespace {

/// f32 [shape] drawn uniformly from [-1, 1).
HostArray randomArray(std::vector<int64_t> shape, std::mt19937_64 &rng) {
  HostArray a;
  a.shape = std::move(shape);
  a.bytes.resize(a.numel() * sizeof(float));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t i = 0; i < a.numel(); ++i)
    a.set(i, u(rng));
  return a;
}

/// The training pair of `c` run on `args` and cotangent `dO`: its
/// gradients.
std::vector<HostArray> gradsOf(const FlashCase &c, std::vector<HostArray> args,
                               const HostArray &dO) {
  auto pair = engine().compileTraining(c.source());
  EXPECT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());
  if (!pair)
    return {};
  auto fwd = pair->forward->runAll(args);
  EXPECT_TRUE(static_cast<bool>(fwd)) << llvm::toString(fwd.takeError());
  if (!fwd)
    return {};
  args.insert(args.end(), fwd->begin(), fwd->end());
  args.push_back(dO);
  auto grads = pair->backward->runAll(args);
  EXPECT_TRUE(static_cast<bool>(grads)) << llvm::toString(grads.takeError());
  return grads ? std::move(*grads) : std::vector<HostArray>();
}

/// max |got - want| / max |want| over [B, H, n, d] arrays, `want`'s head h
/// being the sum of `got`'s heads h * group ... h * group + group - 1
/// (group 1: the same heads).
double headSumError(const HostArray &got, const HostArray &want,
                    int64_t group) {
  int64_t hw = want.shape[1], rest = want.shape[2] * want.shape[3];
  double diff = 0, mag = 0;
  for (int64_t h = 0; h < hw; ++h)
    for (int64_t e = 0; e < rest; ++e) {
      double sum = 0;
      for (int64_t r = 0; r < group; ++r)
        sum += got.get((h * group + r) * rest + e);
      double w = want.get(h * rest + e);
      diff = std::max(diff, std::abs(sum - w));
      mag = std::max(mag, std::abs(w));
    }
  return diff / std::max(mag, 1e-30);
}

} // namespace

// GQA is its KV heads repeated over their query heads: the same dq, and dk,
// dv of a KV head the sums of its repeats' (the fused backward sums a group
// in f32 inside one program).
TEST(GradPass, FusedBackwardGqaIsRepeatedKvHeads) {
  uint64_t seed = attn::ref::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t t = 70, d = 32;
  HostArray q = randomArray({1, 4, t, d}, rng),
            k = randomArray({1, 2, t, d}, rng),
            v = randomArray({1, 2, t, d}, rng),
            dO = randomArray({1, 4, t, d}, rng);
  auto repeat = [&](const HostArray &x) {
    HostArray r = x;
    r.shape[1] = 4;
    r.bytes.resize(r.numel() * sizeof(float));
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t e = 0; e < t * d; ++e)
        r.set(h * t * d + e, x.get((h / 2) * t * d + e));
    return r;
  };
  auto gqa = gradsOf({4, 2, t, t, d, d, false, ""}, {q, k, v}, dO);
  auto rep =
      gradsOf({4, 4, t, t, d, d, false, ""}, {q, repeat(k), repeat(v)}, dO);
  ASSERT_EQ(gqa.size(), 3u);
  ASSERT_EQ(rep.size(), 3u);
  EXPECT_LE(headSumError(rep[0], gqa[0], 1), 1e-6) << "dq";
  EXPECT_LE(headSumError(rep[1], gqa[1], 2), 1e-6) << "dk";
  EXPECT_LE(headSumError(rep[2], gqa[2], 2), 1e-6) << "dv";
}

// FoX with g = 0 is plain attention: the same dq, dk, dv.
TEST(GradPass, FusedBackwardFoxWithZeroGateIsPlain) {
  uint64_t seed = attn::ref::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t t = 90, d = 32;
  std::vector<HostArray> args = {randomArray({1, 2, t, d}, rng),
                                 randomArray({1, 2, t, d}, rng),
                                 randomArray({1, 2, t, d}, rng)};
  HostArray g = randomArray({1, 2, t}, rng),
            dO = randomArray({1, 2, t, d}, rng);
  for (size_t i = 0; i < g.numel(); ++i)
    g.set(i, 0.0);
  auto plain = gradsOf({2, 2, t, t, d, d, false, ""}, args, dO);
  args.push_back(g);
  auto fox = gradsOf({2, 2, t, t, d, d, true, ""}, args, dO);
  ASSERT_EQ(plain.size(), 3u);
  ASSERT_EQ(fox.size(), 4u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_LE(headSumError(fox[i], plain[i], 1), 1e-6) << "gradient " << i;
}

// Causality backwards: dk and dv of key j read no dO of a query before j, so
// changing dO of the queries before t0 leaves them unchanged, exactly (a
// masked cell's probability is an exact zero).
TEST(GradPass, FusedBackwardIsCausalBackwards) {
  uint64_t seed = attn::ref::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t t = 130, d = 32, t0 = 65;
  FlashCase c{2, 2, t, t, d, d, true, ""};
  std::vector<HostArray> args = {
      randomArray({1, 2, t, d}, rng), randomArray({1, 2, t, d}, rng),
      randomArray({1, 2, t, d}, rng), randomArray({1, 2, t}, rng)};
  for (size_t i = 0; i < args[3].numel(); ++i) // log forget gates <= 0
    args[3].set(i, -std::abs(args[3].get(i)));
  HostArray dO = randomArray({1, 2, t, d}, rng), dO2 = dO;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t e = 0; e < t0 * d; ++e)
      dO2.set(h * t * d + e, 10.0 * dO.get(h * t * d + e) + 1.0);
  auto a = gradsOf(c, args, dO), b = gradsOf(c, args, dO2);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  for (size_t g : {1, 2}) // dk, dv
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t e = t0 * d; e < t * d; ++e)
        ASSERT_EQ(a[g].get(h * t * d + e), b[g].get(h * t * d + e))
            << (g == 1 ? "dk" : "dv") << ", head " << h << ", key " << e / d;
}

// The fused backward's gradients are those of the compiled f32 forward
// itself: for each argument x and a random direction u, the central
// difference of L = sum(o * dO) along u, (L(x + eps u) - L(x - eps u)) /
// (2 eps), matches <dL/dx, u> from the backward within 2e-5 sum|dL/dx u|
// (a gradient 1% off misses by about 5e-4 of it). The step is 5e-3: the
// central difference's own O(eps^2) error must stay well inside the bound.
TEST(GradPass, FusedBackwardMatchesFiniteDifferencesOfTheForward) {
  uint64_t seed = attn::ref::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t t = 70, d = 16;
  const std::vector<FlashCase> cases = {
      {4, 2, t, t, d, d, false, ""},
      {2, 2, t, t, d, d, true, "mask sliding_window window 20"},
      {2, 1, t, t, d, d, true, "", "rope(1.0e+04)"},
  };
  for (const FlashCase &c : cases) {
    if (!attn::test::sweepCase())
      continue;
    std::string source = c.source();
    SCOPED_TRACE(source);
    auto pair = engine().compileTraining(source);
    ASSERT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());
    std::vector<HostArray> args = {randomArray({1, c.hq, t, d}, rng),
                                   randomArray({1, c.hk, t, d}, rng),
                                   randomArray({1, c.hk, t, d}, rng)};
    if (c.fox) {
      args.push_back(randomArray({1, c.hq, t}, rng));
      for (size_t i = 0; i < args[3].numel(); ++i) // log forget gates <= 0
        args[3].set(i, -0.2 * std::abs(args[3].get(i)));
    }
    HostArray dO = randomArray({1, c.hq, t, d}, rng);
    auto loss = [&](const std::vector<HostArray> &in) -> double {
      auto o = pair->forward->runAll(in);
      EXPECT_TRUE(static_cast<bool>(o)) << llvm::toString(o.takeError());
      double sum = 0;
      if (o)
        for (size_t i = 0; i < dO.numel(); ++i)
          sum += (*o)[0].get(i) * dO.get(i);
      return sum;
    };
    auto grads = gradsOf(c, args, dO);
    ASSERT_EQ(grads.size(), args.size());
    // FoX's gate enters through a prefix sum over the sequence: at a step
    // of 1e-2 the difference's own error reached the bound (seed
    // 72049942287232).
    const double eps = 5e-3;
    for (size_t a = 0; a < args.size(); ++a) {
      HostArray u = randomArray(args[a].shape, rng);
      std::vector<HostArray> plus = args, minus = args;
      double analytic = 0, scale = 0;
      for (size_t i = 0; i < u.numel(); ++i) {
        plus[a].set(i, args[a].get(i) + eps * u.get(i));
        minus[a].set(i, args[a].get(i) - eps * u.get(i));
        analytic += grads[a].get(i) * u.get(i);
        scale += std::abs(grads[a].get(i) * u.get(i));
      }
      double numeric = (loss(plus) - loss(minus)) / (2 * eps);
      EXPECT_LE(std::abs(numeric - analytic), 2e-5 * scale)
          << "argument " << a << ": finite difference " << numeric
          << ", backward " << analytic;
    }
  }
}

// PaTH's fused forward also writes the row LSE (the training forward's
// saved state): the same o and LSE as the reference lowering's chain
// (attn.logsumexp of the logits), f32, across chunk edges, GQA, FoX.
TEST(GradPass, FusedPathForwardWritesTheLse) {
  uint64_t seed = attn::ref::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t t = 150, d = 16;
  for (bool fox : {false, true}) {
    auto type = [&](int64_t h, int64_t dim) {
      return "tensor<1x" + std::to_string(h) + "x" + std::to_string(t) +
             (dim ? "x" + std::to_string(dim) : "") + "xf32>";
    };
    std::string q = type(2, d), kv = type(1, d), w = type(1, d),
                beta = type(1, 0), g = type(2, 0), lse = type(2, 0);
    std::string types = q + ", " + kv + ", " + kv + ", " + w + ", " + beta +
                        (fox ? ", " + g : "");
    std::string source = "func.func @main(%q: " + q + ", %k: " + kv +
                         ", %v: " + kv + ", %w: " + w + ", %beta: " + beta +
                         (fox ? ", %g: " + g : "") + ") -> (" + q + ", " + lse +
                         ") {\n  %o, %l = attn.attention %q, %k, "
                         "%v path(%w, %beta)" +
                         (fox ? " gate(%g)" : "") + " : (" + types + ") -> (" +
                         q + ", " + lse + ")\n  return %o, %l : " + q + ", " +
                         lse + "\n}\n";
    SCOPED_TRACE(source);
    std::vector<HostArray> args = {
        randomArray({1, 2, t, d}, rng), randomArray({1, 1, t, d}, rng),
        randomArray({1, 1, t, d}, rng), randomArray({1, 1, t, d}, rng),
        randomArray({1, 1, t}, rng)};
    for (int64_t r = 0; r < t; ++r) { // unit w rows, beta in [0, 2]
      double n = 0;
      for (int64_t e = 0; e < d; ++e)
        n += args[3].get(r * d + e) * args[3].get(r * d + e);
      for (int64_t e = 0; e < d; ++e)
        args[3].set(r * d + e, args[3].get(r * d + e) / std::sqrt(n));
      args[4].set(r, 1.0 + args[4].get(r));
    }
    if (fox) {
      args.push_back(randomArray({1, 2, t}, rng));
      for (size_t i = 0; i < args.back().numel(); ++i)
        args.back().set(i, -0.2 * std::abs(args.back().get(i)));
    }
    std::vector<std::vector<HostArray>> outs;
    for (attn::Pipeline pipeline :
         {attn::Pipeline::Auto, attn::Pipeline::Reference}) {
      attn::CompileOptions options;
      options.pipeline = pipeline;
      auto kernel = engine().compile(source, options);
      ASSERT_TRUE(static_cast<bool>(kernel))
          << llvm::toString(kernel.takeError());
      if (pipeline == attn::Pipeline::Auto)
        for (const std::string &r : (*kernel)->remarks())
          EXPECT_EQ(r.find("not fused"), std::string::npos) << r;
      auto o = (*kernel)->runAll(args);
      ASSERT_TRUE(static_cast<bool>(o)) << llvm::toString(o.takeError());
      outs.push_back(std::move(*o));
    }
    for (size_t r = 0; r < 2; ++r)
      EXPECT_LE(attn::ref::relError(toTensor(outs[0][r]), toTensor(outs[1][r])),
                1e-5)
          << (r ? "lse" : "o");
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
