//===- NonFiniteTest.cpp - non-finite inputs stay where causality puts them
//-===//
//
// docs/input-limits.md, "Non-finite values": a NaN or inf in a token's
// input reaches only the rows that see that token. Every f32 example and
// plain attention, with one element of one T-indexed argument poisoned at a
// random token t, through the oracle and both CPU pipelines.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"
#include "GradChecks.h"
#include "GradPrograms.h"
#include "NonFiniteChecks.h"
#include "Sweep.h"

#include <chrono>
#include <cstdio>
#include <limits>
#include <random>

using namespace attn::exec_test;

namespace {

constexpr int64_t kB = 1, kH = 2, kT = 130; // crosses 64- and 128-key tiles

const char *kPlain = R"mlir(
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  %s = attn.scores %q, %k : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
)mlir";

bool finiteRow(const Tensor &o, int64_t h, int64_t i) {
  const int64_t d = o.shape[3];
  for (int64_t e = 0; e < d; ++e)
    if (!std::isfinite(o.at(0, h, i, e)))
      return false;
  return true;
}

bool sameRow(const Tensor &a, const Tensor &b, int64_t h, int64_t i) {
  const int64_t d = a.shape[3];
  for (int64_t e = 0; e < d; ++e) {
    double x = a.at(0, h, i, e), y = b.at(0, h, i, e);
    if (!(x == y || (std::isnan(x) && std::isnan(y))))
      return false;
  }
  return true;
}

/// `poisoned` against `clean` (same evaluator, argument `arg` poisoned at
/// token t): rows before t are unchanged in every head; with NaN, head 0's
/// row t is non-finite, and every later row is either unchanged (a query
/// reaches only its own row, or those its MTA stencil covers) or
/// non-finite, never finite and different.
void expectCausal(const Tensor &clean, const Tensor &poisoned, int64_t t,
                  bool nan, const std::string &what) {
  ASSERT_EQ(clean.shape, poisoned.shape) << what;
  for (int64_t h = 0; h < kH; ++h)
    for (int64_t i = 0; i < t; ++i)
      ASSERT_TRUE(sameRow(clean, poisoned, h, i))
          << what << ": row " << i << " of head " << h
          << " changed by a value at token " << t;
  if (!nan)
    return;
  EXPECT_FALSE(finiteRow(poisoned, 0, t)) << what << ": row " << t;
  for (int64_t h = 0; h < kH; ++h)
    for (int64_t i = t + 1; i < kT; ++i)
      EXPECT_TRUE(sameRow(clean, poisoned, h, i) || !finiteRow(poisoned, h, i))
          << what << ": row " << i << " of head " << h
          << " is finite but changed";
}

/// Every float argument indexed by token ([B, H, T, D] or [B, H, T]),
/// poisoned at (0, 0, t, 1) or (0, 0, t) with each value, through the
/// oracle and both pipelines.
void checkProgram(const std::string &name, const std::string &source,
                  uint64_t seed) {
  Program p(source);
  ASSERT_TRUE(p.module) << name;
  std::vector<Tensor> ins = randomFor(source, kB, kH, kT, seed);
  ASSERT_FALSE(ins.empty()) << name;
  auto oracleClean = attn::ref::evaluate(p.main(), ins);
  ASSERT_TRUE(bool(oracleClean)) << llvm::toString(oracleClean.takeError());
  const std::vector<attn::Pipeline> all = {attn::Pipeline::Reference,
                                           attn::Pipeline::Fused};
  std::vector<Tensor> clean;
  for (attn::Pipeline pl : all)
    clean.push_back(run(source, ins, pl));
  std::mt19937_64 rng(seed);
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  mlir::FunctionType fn = p.main().getFunctionType();
  for (size_t a = 0; a < ins.size(); ++a) {
    auto type = mlir::cast<mlir::ShapedType>(fn.getInput(a));
    const int64_t rank = type.getRank();
    if (!type.getElementType().isF32() || rank < 3 || ins[a].shape[2] != kT)
      continue;
    for (double value : {nan, inf, -inf}) {
      // The forget gate refuses +-inf (docs/input-limits.md, "Values").
      if (rank == 3 && std::isinf(value))
        continue;
      const int64_t t = static_cast<int64_t>(rng() % kT);
      std::vector<Tensor> bad = ins;
      if (rank == 4)
        bad[a].at(0, 0, t, 1) = value;
      else
        bad[a].at(0, 0, t) = value;
      std::string what = name + " argument " + std::to_string(a) + " = " +
                         std::to_string(value) + " at token " +
                         std::to_string(t);
      auto oracle = attn::ref::evaluate(p.main(), bad);
      ASSERT_TRUE(bool(oracle)) << llvm::toString(oracle.takeError());
      expectCausal(*oracleClean, *oracle, t, std::isnan(value),
                   what + " (oracle)");
      expectCausal(clean[0], run(source, bad, all[0]), t, std::isnan(value),
                   what + " (reference pipeline)");
      expectCausal(clean[1], run(source, bad, all[1]), t, std::isnan(value),
                   what + " (fused pipeline)");
    }
  }
}

uint64_t freshSeed() {
  uint64_t s = std::chrono::steady_clock::now().time_since_epoch().count();
  std::printf("seed %llu\n", static_cast<unsigned long long>(s));
  return s;
}

/// The gradients of `source`'s training pair through `pipeline` on `ins`
/// (forward, then backward with the cotangent `dO`), or empty after a
/// test failure.
std::vector<Tensor> gradients(const std::string &source,
                              const std::vector<Tensor> &ins, const Tensor &dO,
                              attn::Pipeline pipeline) {
  attn::CompileOptions options;
  options.pipeline = pipeline;
  auto pair = engine().compileTraining(source, options);
  if (!pair) {
    ADD_FAILURE() << llvm::toString(pair.takeError());
    return {};
  }
  std::vector<attn::HostArray> args = toHost(ins);
  auto fwd = pair->forward->runAll(args);
  if (!fwd) {
    ADD_FAILURE() << llvm::toString(fwd.takeError());
    return {};
  }
  args.insert(args.end(), fwd->begin(), fwd->end());
  args.push_back(attn::ref::toHost(dO, attn::DType::F32));
  auto grads = pair->backward->runAll(args);
  if (!grads) {
    ADD_FAILURE() << llvm::toString(grads.takeError());
    return {};
  }
  std::vector<Tensor> out;
  for (const attn::HostArray &g : *grads)
    out.push_back(attn::test_util::toTensor(g));
  return out;
}

} // namespace

// A NaN, +inf and -inf in three columns of q, k or v at token t reach the
// gradients of the rows and keys that see t only (the oracle's masked
// probabilities are exact zeros even in a NaN row, and every product by a
// probability or score gradient skips them): f32 attention, causal and
// windowed, through both CPU pipelines, cell by cell against the oracle.
TEST(NonFinite, GradientsOnTheCpu) {
  uint64_t seed = freshSeed();
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  const std::string t4 = "tensor<1x2x?x64xf32>";
  for (const char *mask : {"", " mask sliding_window window 40"}) {
    std::string source = "func.func @main(%q: " + t4 + ", %k: " + t4 +
                         ", %v: " + t4 + ") -> " + t4 +
                         " {\n  %o = attn.attention %q, %k, %v" + mask +
                         " : (" + t4 + ", " + t4 + ", " + t4 + ") -> " + t4 +
                         "\n  return %o : " + t4 + "\n}\n";
    Program p(source);
    ASSERT_TRUE(p.module) << source;
    for (int arg : {0, 1, 2})
      for (int64_t t : {5, 70}) {
        ++seed;
        if (!attn::test::sweepCase())
          continue;
        std::vector<Tensor> ins = randomFor(source, kB, kH, kT, seed);
        ASSERT_FALSE(ins.empty());
        for (auto [col, x] : {std::pair{1, nan}, {5, inf}, {9, -inf}})
          ins[arg].at(0, 0, t, col) = x;
        Tensor dO = attn::ref::randomCotangent({kB, kH, kT, 64}, seed);
        auto want = attn::ref::evaluateGrad(p.main(), ins, dO);
        ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
        for (attn::Pipeline pl :
             {attn::Pipeline::Reference, attn::Pipeline::Fused}) {
          std::string what =
              std::string(mask) + " " + "qkv"[arg] + " non-finite at " +
              std::to_string(t) +
              (pl == attn::Pipeline::Fused ? ", fused" : ", reference") +
              ", seed " + std::to_string(seed);
          std::vector<Tensor> got = gradients(source, ins, dO, pl);
          ASSERT_EQ(got.size(), 3u) << what;
          int64_t nonFinite = 0;
          for (int n = 0; n < 3; ++n)
            nonFinite += attn::test_util::expectSameNonFiniteCells(
                got[n], *(*want)[n], what + " d" + "qkv" [n],
                attn::ref::ErrorBound {});
          EXPECT_GT(nonFinite, 0) << what;
        }
      }
  }
}

TEST(NonFinite, EveryExampleOnTheCpu) {
  uint64_t seed = freshSeed();
  checkProgram("plain", kPlain, seed);
  int checked = 0;
  for (const auto &[name, source] : attn::grad_test::examplePrograms()) {
    if (name.find("bf16") != std::string::npos)
      continue;
    checkProgram(name, source, seed);
    ++checked;
  }
  EXPECT_GE(checked, 6) << "examples/ not found";
}
