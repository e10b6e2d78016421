//===- GradPassTest.cpp - attn-grad's training pairs vs the fp64 oracle ---===//
//
// Runs attn-grad on every example and on a chain of every op, compiles
// @main_fwd and @main_grad on the CPU engine, feeds the forward's saved
// state to the backward and compares the forward's result and every
// gradient with ref::evaluate and ref::evaluateGrad. Fresh random inputs;
// failures print the seed (ATTN_SEED replays it).
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"
#include "attn/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace attn::exec_test;

namespace {

/// The module of `source` after attn-grad, as text.
std::string withTrainingPair(const std::string &source) {
  Program p(source);
  EXPECT_TRUE(p.module);
  mlir::PassManager pm(&p.ctx);
  pm.addPass(mlir::attn::createAttnGrad());
  p.ctx.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler quiet(&p.ctx, [](mlir::Diagnostic &d) {
    return mlir::success(d.getSeverity() == mlir::DiagnosticSeverity::Remark);
  });
  EXPECT_TRUE(mlir::succeeded(pm.run(*p.module)));
  std::string text;
  llvm::raw_string_ostream os(text);
  p.module->print(os);
  return text;
}

std::vector<HostArray> runEntry(const std::string &text,
                                const std::string &entry,
                                const std::vector<HostArray> &inputs) {
  attn::CompileOptions options;
  options.entry = entry;
  options.pipeline = attn::Pipeline::Reference;
  auto kernel = engine().compile(text, options);
  if (!kernel) {
    ADD_FAILURE() << entry << ": " << llvm::toString(kernel.takeError());
    return {};
  }
  auto outs = (*kernel)->runAll(inputs);
  if (!outs) {
    ADD_FAILURE() << entry << ": " << llvm::toString(outs.takeError());
    return {};
  }
  return std::move(*outs);
}

Tensor toTensor(const HostArray &a) {
  auto t = attn::ref::fromHost(a);
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : Tensor();
}

/// The training pair of `source`'s @main against the oracle, f32, relative
/// error <= 1e-5 for the output and every gradient but the MTA parameters'
/// (kernels, mixing weights, the norm's gamma and gate): those are single
/// sums over every score-map cell or row whose terms cancel, so the chain's
/// f32 rounding in their cotangent grows by sum|terms| / |sum|; each VJP op
/// alone holds 1e-5 (GradOpsScoresTest, GradOpsTest), and a wrong formula is
/// off by O(1): bound 1e-3.
void expectTrainingPairMatches(const std::string &what,
                               const std::string &source,
                               attn::ref::RandomSpec spec) {
  const double tol = 1e-5;
  Program p(source);
  ASSERT_TRUE(p.module) << what;
  std::set<size_t> mapSums;
  p.main().walk([&](mlir::Operation *op) {
    llvm::SmallVector<mlir::Value> params;
    if (auto c = mlir::dyn_cast<mlir::attn::KqConvOp>(op))
      params = {c.getKernel()};
    else if (auto m = mlir::dyn_cast<mlir::attn::HeadMixOp>(op))
      params = {m.getWeight()};
    else if (auto n = mlir::dyn_cast<mlir::attn::HeadNormOp>(op))
      params = {n.getGamma(), n.getGateW(), n.getGateB()};
    else if (auto a = mlir::dyn_cast<mlir::attn::AttentionOp>(op))
      params = {a.getKqConvPre(),   a.getHeadMixPre(), a.getKqConvPost(),
                a.getHeadMixPost(), a.getNorm(),       a.getNormGateW(),
                a.getNormGateB()};
    for (mlir::Value v : params)
      if (auto arg = mlir::dyn_cast_or_null<mlir::BlockArgument>(v))
        mapSums.insert(arg.getArgNumber());
  });
  spec.seed = attn::ref::freshSeed();
  SCOPED_TRACE(what + ", seed " + std::to_string(spec.seed));
  auto inputs = attn::ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(inputs)) << llvm::toString(inputs.takeError());
  auto ref = attn::ref::evaluate(p.main(), *inputs);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  const Tensor dO = attn::ref::randn(ref->shape, spec.seed + 99);
  auto refGrads = attn::ref::evaluateGrad(p.main(), *inputs, dO);
  ASSERT_TRUE(static_cast<bool>(refGrads))
      << llvm::toString(refGrads.takeError());

  const std::string text = withTrainingPair(source);
  std::vector<HostArray> args;
  for (size_t n = 0; n < inputs->size(); ++n)
    args.push_back(attn::ref::toHost(
        (*inputs)[n], mlir::isa<mlir::FloatType>(mlir::getElementTypeOrSelf(
                          p.main().getArgument(n).getType()))
                          ? attn::DType::F32
                          : attn::DType::I64));
  std::vector<HostArray> fwd = runEntry(text, "main_fwd", args);
  ASSERT_GE(fwd.size(), 1u);
  EXPECT_LE(attn::ref::relError(toTensor(fwd[0]), *ref), tol) << "output";

  std::vector<HostArray> bwdArgs = args;
  bwdArgs.insert(bwdArgs.end(), fwd.begin() + 1, fwd.end());
  bwdArgs.push_back(attn::ref::toHost(dO, attn::DType::F32));
  std::vector<HostArray> grads = runEntry(text, "main_grad", bwdArgs);
  size_t next = 0;
  for (size_t n = 0; n < inputs->size(); ++n) {
    if (!(*refGrads)[n])
      continue;
    ASSERT_LT(next, grads.size()) << "too few gradients";
    Tensor got = toTensor(grads[next++]);
    ASSERT_EQ(got.shape, (*refGrads)[n]->shape) << "argument " << n;
    EXPECT_LE(attn::ref::relError(got, *(*refGrads)[n]),
              mapSums.count(n) ? 1e-3 : tol)
        << "gradient of argument " << n;
  }
  EXPECT_EQ(next, grads.size()) << "one gradient per float argument";
}

} // namespace

namespace {

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST(GradPass, EveryExample) {
  int checked = 0;
  for (const auto &entry : std::filesystem::directory_iterator(
           std::filesystem::path(ATTN_SOURCE_DIR) / "examples")) {
    // The f32 examples: bf16 ones round the recomputed forward.
    if (entry.path().extension() != ".mlir" ||
        entry.path().stem().string().find("bf16") != std::string::npos)
      continue;
    attn::ref::RandomSpec spec;
    spec.batch = 1;
    spec.heads = 2;
    spec.seqLen = 7;
    spec.fLo = 0.5; // gates that fall fast enough to matter
    expectTrainingPairMatches(entry.path().filename().string(),
                              readFile(entry.path()), spec);
    ++checked;
  }
  EXPECT_GE(checked, 6) << "examples/ not found";
}

// Every op in one chain, with RoPE positions (not differentiable: no
// gradient), GQA-free PaTH-FoX scores and %x used twice (its gradient sums
// two paths).
TEST(GradPass, ChainOfEveryOp) {
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
  expectTrainingPairMatches("chain", source, spec);
}

// The fused op with every piece, GQA 2:1: expanded by attn-grad.
TEST(GradPass, FusedAttentionWithEverything) {
  const std::string source = R"mlir(
func.func @main(%q: tensor<?x2x?x8xf32>, %k: tensor<?x1x?x8xf32>,
                %v: tensor<?x1x?x6xf32>, %w: tensor<?x1x?x8xf32>,
                %beta: tensor<?x1x?xf32>, %g: tensor<?x2x?xf32>,
                %kp: tensor<2x2x3xf32>, %hp: tensor<2x2xf32>,
                %kpo: tensor<2x3x5xf32>, %hpo: tensor<2x1xf32>,
                %gamma: tensor<6xf32>, %gw: tensor<6xf32>,
                %gb: tensor<1xf32>) -> tensor<?x2x?x6xf32> {
  %o = attn.attention %q, %k, %v rope(1.0e+02) rope_style interleaved
      rope_dim 6 rope_offset 1 path(%w, %beta) gate(%g) scaled
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
  expectTrainingPairMatches("fused attention", source, spec);
}

// An argument the result does not depend on gets zeros.
TEST(GradPass, UnusedArgumentGetsZeros) {
  const std::string source = R"mlir(
func.func @main(%q: tensor<1x2x5x4xf32>, %unused: tensor<1x2x5x4xf32>)
    -> tensor<1x2x5x4xf32> {
  %s = attn.scores %q, %q : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x5xf32>
  %p = attn.softmax %s : tensor<1x2x5x5xf32>
  %o = attn.weighted_sum %p, %q : (tensor<1x2x5x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  return %o : tensor<1x2x5x4xf32>
}
)mlir";
  expectTrainingPairMatches("unused argument", source, {});
}
