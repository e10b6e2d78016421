//===- MultiResultTest.cpp - entry functions with several results ---------===//
//
// Two- and three-result programs on the CPU engine through the reference
// and fused pipelines against the fp64 oracle (ProgramOracle evaluateAll):
// runAll(), launch() on poisoned caller-owned outputs (one strided), results
// that alias an argument or each other, and the refusals: wrong output
// count, dtype or shape of a later output, outputs sharing memory, and the
// one-result conveniences on a kernel with several results.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"

#include <limits>

using namespace attn;
using namespace attn::exec_test;

namespace {

/// RoPE'd q and k both returned: two results of one shape.
const char *kRopeQK = R"(
func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) {
  %qr = attn.rope %q theta 1.000000e+04 : tensor<?x?x?x16xf32>
  %kr = attn.rope %k theta 1.000000e+04 : tensor<?x?x?x16xf32>
  return %qr, %kr : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>
})";

/// The attention output with its probabilities and scores: three results
/// of two shapes ([B, H, T, Dv] and [B, H, T, S]).
const char *kWithMaps = R"(
func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x8xf32>) -> (tensor<?x?x?x8xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %s = attn.scores %q, %k : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  return %o, %p, %s : tensor<?x?x?x8xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
})";

/// A fused attention output, the same value again and an argument: the
/// second and third results alias others (copied into their outputs).
const char *kAliased = R"(
func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) {
  %s = attn.scores %q, %k : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %o, %o, %q : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>
})";

const Pipeline kPipelines[] = {Pipeline::Reference, Pipeline::Fused};

std::shared_ptr<Kernel> compile(const std::string &src, Pipeline pipeline) {
  CompileOptions options;
  options.pipeline = pipeline;
  auto kernel = engine().compile(src, options);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return *kernel;
}

/// Each of `got` against the oracle's result of the same index.
void expectResults(const std::vector<Tensor> &got,
                   const std::vector<Tensor> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape, want[i].shape) << what << ", result " << i;
    EXPECT_LE(ref::relError(got[i], want[i]), 1e-5) << what << ", result " << i;
  }
}

/// Runs `src` on random inputs (B=2, H=2, T=9) through both pipelines:
/// runAll() and launch() on NaN-poisoned outputs, the last one a strided
/// view inside a larger poisoned buffer whose other elements must stay NaN.
void checkAgainstOracle(const std::string &src, size_t numResults) {
  uint64_t seed = ref::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (ATTN_SEED)");
  Program p(src);
  ASSERT_TRUE(p.module);
  std::vector<Tensor> ins = randomFor(src, 2, 2, 9, seed);
  auto want = ref::evaluateAll(p.main(), ins);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  ASSERT_EQ(want->size(), numResults);
  for (Pipeline pipeline : kPipelines) {
    std::string name = pipeline == Pipeline::Fused ? "fused" : "reference";
    auto kernel = compile(src, pipeline);
    ASSERT_TRUE(kernel);
    ASSERT_EQ(kernel->results().size(), numResults);
    std::vector<HostArray> hostIns = toHost(ins);
    auto all = kernel->runAll(hostIns);
    ASSERT_TRUE(static_cast<bool>(all)) << llvm::toString(all.takeError());
    std::vector<Tensor> got;
    for (const HostArray &a : *all)
      got.push_back(*ref::fromHost(a));
    expectResults(got, *want, name + " runAll");

    std::vector<TensorView> inViews;
    for (HostArray &a : hostIns)
      inViews.push_back(TensorView::of(a));
    auto shapes = kernel->resultShapes(inViews);
    ASSERT_TRUE(static_cast<bool>(shapes))
        << llvm::toString(shapes.takeError());
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<std::vector<float>> bufs;
    std::vector<TensorView> outViews;
    for (size_t i = 0; i < numResults; ++i) {
      const std::vector<int64_t> &s = (*shapes)[i];
      ASSERT_EQ(s, (*want)[i].shape);
      int64_t n = 1;
      for (int64_t d : s)
        n *= d;
      bool strided = i + 1 == numResults;
      // The last output: every row padded by 3 elements.
      int64_t inner = s.back(), pad = strided ? 3 : 0;
      bufs.emplace_back(n / inner * (inner + pad), nan);
      std::vector<int64_t> strides(s.size());
      int64_t st = inner + pad;
      strides.back() = 1;
      for (size_t d = s.size() - 1; d-- > 0;) {
        strides[d] = st;
        st *= s[d];
      }
      outViews.emplace_back(bufs.back().data(), DType::F32, s, strides);
    }
    ASSERT_FALSE(static_cast<bool>(kernel->launch(inViews, outViews)));
    got.clear();
    for (size_t i = 0; i < numResults; ++i) {
      Tensor t = Tensor::zeros((*shapes)[i]);
      int64_t inner = (*shapes)[i].back(), pad = i + 1 == numResults ? 3 : 0;
      for (size_t e = 0; e < t.data.size(); ++e) {
        size_t row = e / inner, col = e % inner;
        t.data[e] = bufs[i][row * (inner + pad) + col];
      }
      got.push_back(std::move(t));
    }
    expectResults(got, *want, name + " launch");
    std::vector<float> &last = bufs.back();
    int64_t inner = (*shapes).back().back();
    for (size_t e = 0; e < last.size(); ++e) {
      if (int64_t(e % (inner + 3)) >= inner) {
        ASSERT_TRUE(std::isnan(last[e]))
            << name << ": wrote outside the strided output at " << e;
      }
    }
  }
}

TEST(MultiResult, TwoResultsRopeQK) { checkAgainstOracle(kRopeQK, 2); }

TEST(MultiResult, ThreeResultsOutputProbsScores) {
  checkAgainstOracle(kWithMaps, 3);
}

TEST(MultiResult, ResultsAliasingArgumentsAndEachOther) {
  checkAgainstOracle(kAliased, 3);
}

/// The message of `e`, "" on success.
std::string message(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : "";
}

TEST(MultiResult, BadOutputsAreRefused) {
  auto kernel = compile(kWithMaps, Pipeline::Fused);
  ASSERT_TRUE(kernel);
  Kernel &k = *kernel;
  // B=1, H=2, T=S=5: o [1,2,5,8], p and s [1,2,5,5].
  std::vector<float> q(1 * 2 * 5 * 16, 0.5f), kk(q.size(), 0.25f),
      v(1 * 2 * 5 * 8, 1.0f), o(1 * 2 * 5 * 8, -1.0f), pr(1 * 2 * 5 * 5, -1.0f),
      sc(pr.size(), -1.0f);
  std::vector<int64_t> qs{1, 2, 5, 16}, vs{1, 2, 5, 8}, ps{1, 2, 5, 5};
  std::vector<TensorView> in{TensorView(q.data(), DType::F32, qs),
                             TensorView(kk.data(), DType::F32, qs),
                             TensorView(v.data(), DType::F32, vs)};
  TensorView vo(o.data(), DType::F32, vs), vp(pr.data(), DType::F32, ps),
      vsc(sc.data(), DType::F32, ps);
  ASSERT_EQ(message(k.launch(in, {vo, vp, vsc})), "");
  EXPECT_FLOAT_EQ(o[0], 1.0f);
  EXPECT_FLOAT_EQ(pr[0], 1.0f); // the first query sees one key

  auto expectError = [](std::string got, const std::string &want) {
    EXPECT_NE(got.find(want), std::string::npos)
        << "expected '" << want << "' in: " << got;
  };
  expectError(message(k.launch(in, {vo, vp})),
              "@main returns 3 results, got 2 outputs (one per result)");
  expectError(message(k.launch(in, {vo, vp, vsc, vsc})),
              "@main returns 3 results, got 4 outputs");
  std::vector<uint16_t> half(pr.size());
  expectError(
      message(k.launch(in, {vo, TensorView(half.data(), DType::F16, ps), vsc})),
      "output 1 (tensor<?x?x?x?xf32>): element type f16, expected f32");
  expectError(
      message(k.launch(
          in, {vo, vp, TensorView(sc.data(), DType::F32, {1, 2, 5, 4})})),
      "output 2 must be tensor<1x2x5x5xf32> for these inputs, got "
      "tensor<1x2x5x4xf32>");
  expectError(message(k.launch(in, {vo, vp, vp})),
              "outputs 1 and 2 overlap in memory");
  // A view of part of another output's bytes overlaps it too.
  std::vector<float> shared(pr.size() * 2, -1.0f);
  TensorView first(shared.data(), DType::F32, ps),
      second(shared.data() + pr.size() - 1, DType::F32, ps);
  expectError(message(k.launch(in, {vo, first, second})),
              "outputs 1 and 2 overlap in memory");
  // The one-result conveniences name their several-result counterparts.
  expectError(message(k.launch(in, vo)),
              "launch(inputs, output) serves one-result kernels; @main "
              "returns 3 results: use launch(inputs, outputs)");
  expectError(message(k.resultShape(in).takeError()),
              "resultShape() serves one-result kernels; @main returns 3 "
              "results: use resultShapes()");
  std::vector<HostArray> hostIns =
      toHost({ref::randn(qs, 1), ref::randn(qs, 2), ref::randn(vs, 3)});
  expectError(message(k.run(hostIns).takeError()),
              "run() serves one-result kernels; @main returns 3 results: use "
              "runAll()");
  Program p(kWithMaps);
  std::vector<Tensor> ins{ref::randn(qs, 1), ref::randn(qs, 2),
                          ref::randn(vs, 3)};
  expectError(message(ref::evaluate(p.main(), ins).takeError()),
              "use evaluateAll");
}

/// An output overlapping an input is computed into a temporary: the
/// second result written over q, which the kernel still reads.
TEST(MultiResult, OutputOverInputGoesThroughATemporary) {
  uint64_t seed = ref::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (ATTN_SEED)");
  Program p(kRopeQK);
  std::vector<Tensor> ins = randomFor(kRopeQK, 1, 2, 7, seed);
  auto want = ref::evaluateAll(p.main(), ins);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  for (Pipeline pipeline : kPipelines) {
    auto kernel = compile(kRopeQK, pipeline);
    ASSERT_TRUE(kernel);
    std::vector<HostArray> host = toHost(ins);
    HostArray o0 = host[0];
    std::fill(o0.bytes.begin(), o0.bytes.end(), 0xFF);
    std::vector<TensorView> in{TensorView::of(host[0]),
                               TensorView::of(host[1])};
    // Result 1 (rope k) written into k itself.
    ASSERT_EQ(message(kernel->launch(in, {TensorView::of(o0), in[1]})), "");
    expectResults({*ref::fromHost(o0), *ref::fromHost(host[1])}, *want,
                  "output over input");
  }
}

} // namespace
