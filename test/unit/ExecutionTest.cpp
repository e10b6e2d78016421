//===- ExecutionTest.cpp - attn programs on the CPU vs the fp64 oracle ----===//
//
// Every op and every example is compiled by the Engine (reference lowering,
// ORC JIT), run on fresh random inputs and compared with the independent
// fp64 oracle (reference/). Property tests (causality, beta = 0,
// g = 0, identity MTA kernels, GQA) compare compiled programs with each
// other. Bad inputs must come back as error values naming the problem.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"
#include "ProgramOracle.h"
#include "Sweep.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

using attn::HostArray;
using attn::ref::Tensor;
using namespace attn::exec_test;

namespace {

//===----------------------------------------------------------------------===//
// Single ops
//===----------------------------------------------------------------------===//

TEST(Execution, Rope) {
  const char *tmpl = R"(
func.func @main(%x: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %r = attn.rope %x $ATTRS : tensor<?x?x?x16xf32>
  return %r : tensor<?x?x?x16xf32>
})";
  for (std::string attrs :
       {"", "style interleaved", "rotary_dim 8", "theta 5.000000e+05 offset 7",
        "style interleaved rotary_dim 6 offset 1000"}) {
    std::string src = subst(tmpl, {{"$ATTRS", attrs}});
    for (int64_t t : {1, 9})
      expectMatchesOracle(src, {attn::ref::randn({2, 3, t, 16}, 11 + t)});
  }
}

TEST(Execution, RopeExplicitPositions) {
  const char *src = R"(
func.func @main(%x: tensor<?x?x?x8xf32>, %pos: tensor<?xi64>) -> tensor<?x?x?x8xf32> {
  %r = attn.rope %x positions(%pos) : tensor<?x?x?x8xf32>, tensor<?xi64>
  return %r : tensor<?x?x?x8xf32>
})";
  Tensor pos({5}, {3, 0, 17, 4096, 16383});
  Program p(src);
  auto ref =
      attn::ref::evaluate(p.main(), {attn::ref::randn({1, 2, 5, 8}, 3), pos});
  ASSERT_TRUE(static_cast<bool>(ref));
  auto kernel = engine().compile(src);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  std::vector<HostArray> ins = {
      attn::ref::toHost(attn::ref::randn({1, 2, 5, 8}, 3), attn::DType::F32),
      attn::ref::toHost(pos, attn::DType::I64)};
  auto out = (*kernel)->run(ins);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  EXPECT_LE(attn::ref::relError(*attn::ref::fromHost(*out), *ref), 1e-5);
}

TEST(Execution, PlainScoresShapes) {
  std::string src = scoresProgram("");
  for (int64_t t : {1, 2, 7, 33})
    expectMatchesOracle(src, qkv(2, 3, 3, t, t, 16, 16, 100 + t));
  // T < S: the queries are the last T positions.
  expectMatchesOracle(src, qkv(1, 2, 2, 5, 12, 16, 16, 7));
  expectMatchesOracle(src, qkv(1, 2, 2, 1, 9, 16, 16, 8));
}

TEST(Execution, MasksAndScale) {
  expectMatchesOracle(scoresProgram("mask none"),
                      qkv(1, 2, 2, 9, 9, 16, 16, 1));
  expectMatchesOracle(scoresProgram("mask none"),
                      qkv(1, 2, 2, 4, 9, 16, 16, 2));
  expectMatchesOracle(scoresProgram("mask sliding_window window 3"),
                      qkv(1, 2, 2, 11, 11, 16, 16, 3));
  expectMatchesOracle(scoresProgram("mask sliding_window window 4"),
                      qkv(1, 2, 2, 6, 13, 16, 16, 4));
  expectMatchesOracle(scoresProgram("scale 5.000000e-01"),
                      qkv(1, 2, 2, 9, 9, 16, 16, 5));
}

TEST(Execution, GQAAndValueDim) {
  std::string src = scoresProgram("", 16, 24);
  expectMatchesOracle(src, qkv(2, 4, 2, 9, 9, 16, 24, 9));
  expectMatchesOracle(src, qkv(1, 6, 1, 5, 8, 16, 24, 10));
}

const char *kPath = R"(
func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>,
                %w: tensor<?x?x?x16xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x16xf32> {
  %s = attn.scores %q, %k path(%w, %beta) gate(%g) $ATTRS
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
})";

std::vector<Tensor> pathInputs(int64_t b, int64_t hq, int64_t hk, int64_t t,
                               int64_t s, uint64_t seed) {
  std::vector<Tensor> ins = qkv(b, hq, hk, t, s, 16, 16, seed);
  ins.push_back(unitRows({b, hk, s, 16}, seed + 3));
  ins.push_back(attn::ref::randUniform({b, hk, s}, seed + 4, 1.5, 2.0));
  Tensor g = attn::ref::randUniform({b, hq, s}, seed + 5, 0.9, 1.0);
  for (double &x : g.data)
    x = std::log(x);
  ins.push_back(g);
  return ins;
}

TEST(Execution, PathAndGate) {
  for (std::string attrs : {"", "scaled"}) {
    std::string src = subst(kPath, {{"$ATTRS", attrs}});
    for (int64_t t : {1, 13, 40})
      expectMatchesOracle(src, pathInputs(1, 2, 2, t, t, 20 + t));
    expectMatchesOracle(src, pathInputs(1, 2, 2, 6, 17, 31));
    expectMatchesOracle(src, pathInputs(2, 4, 2, 9, 9, 32));
  }
  std::string window =
      subst(kPath, {{"$ATTRS", "mask sliding_window window 4"}});
  expectMatchesOracle(window, pathInputs(1, 2, 1, 12, 12, 33));
}

const char *kMta = R"(
func.func @main(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>, %v: tensor<?x?x?x8xf32>,
                %tp: tensor<?x$CQx$CKxf32>, %wp: tensor<?x$CHxf32>,
                %tq: tensor<?x$CQx$CKxf32>, %wq: tensor<?x$CHxf32>) -> tensor<?x?x?x8xf32> {
  %s = attn.scores %q, %k : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>) -> tensor<?x?x?x?xf32>
  %c = attn.kq_conv pre %s, %tp : tensor<?x?x?x?xf32>, tensor<?x$CQx$CKxf32>
  %m = attn.head_mix pre %c, %wp : tensor<?x?x?x?xf32>, tensor<?x$CHxf32>
  %p = attn.softmax %m : tensor<?x?x?x?xf32>
  %c2 = attn.kq_conv post %p, %tq : tensor<?x?x?x?xf32>, tensor<?x$CQx$CKxf32>
  %m2 = attn.head_mix post %c2, %wq : tensor<?x?x?x?xf32>, tensor<?x$CHxf32>
  %o = attn.weighted_sum %m2, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  return %o : tensor<?x?x?x8xf32>
})";

TEST(Execution, MultiTokenAttention) {
  struct Case {
    int cq, ck, ch;
  };
  for (Case c : {Case{1, 1, 1}, Case{2, 3, 2}, Case{6, 11, 4}, Case{3, 5, 1}}) {
    std::string src = subst(kMta, {{"$CQ", std::to_string(c.cq)},
                                   {"$CK", std::to_string(c.ck)},
                                   {"$CH", std::to_string(c.ch)}});
    for (int64_t t : {1, 5, 14}) {
      // Kernels far from identity so every tap matters.
      std::vector<Tensor> ins = randomFor(src, 1, 4, t, 40 + t);
      ins[3] = attn::ref::randn(ins[3].shape, 50 + t, 0.5);
      ins[5] = attn::ref::randn(ins[5].shape, 60 + t, 0.5);
      expectMatchesOracle(src, ins);
    }
  }
}

TEST(Execution, MtaWithFewerQueriesThanKeys) {
  std::string src = subst(kMta, {{"$CQ", "3"}, {"$CK", "5"}, {"$CH", "2"}});
  std::vector<Tensor> ins = qkv(1, 2, 2, 4, 10, 8, 8, 77);
  ins.push_back(attn::ref::randn({2, 3, 5}, 78, 0.5));
  ins.push_back(attn::ref::randn({2, 2}, 79, 0.5));
  ins.push_back(attn::ref::randn({2, 3, 5}, 80, 0.5));
  ins.push_back(attn::ref::randn({2, 2}, 81, 0.5));
  expectMatchesOracle(src, ins);
}

TEST(Execution, SoftmaxOfFullyMaskedRowIsZero) {
  const char *src = R"(
func.func @main(%s: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  return %p : tensor<?x?x?x?xf32>
})";
  Tensor s = attn::ref::randn({1, 1, 3, 5}, 5);
  const double inf = std::numeric_limits<double>::infinity();
  for (int j = 0; j < 5; ++j)
    s.at(0, 0, 1, j) = -inf; // a fully masked row
  s.at(0, 0, 2, 4) = -inf;
  Tensor got = run(src, {s});
  for (int j = 0; j < 5; ++j)
    EXPECT_EQ(got.at(0, 0, 1, j), 0.0);
  expectMatchesOracle(src, {s});
}

TEST(Execution, HeadNormShortConvL2Norm) {
  const char *src = R"(
func.func @main(%x: tensor<?x?x?x12xf32>, %ker: tensor<?x12x3xf32>, %gamma: tensor<12xf32>,
                %gw: tensor<12xf32>, %gb: tensor<1xf32>) -> tensor<?x?x?x12xf32> {
  %c = attn.short_conv %x, %ker silu : tensor<?x?x?x12xf32>, tensor<?x12x3xf32>
  %n = attn.l2norm %c : tensor<?x?x?x12xf32>
  %o = attn.head_norm %n, %gamma gate(%gw, %gb) eps 1.000000e-05
      : (tensor<?x?x?x12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<1xf32>) -> tensor<?x?x?x12xf32>
  return %o : tensor<?x?x?x12xf32>
})";
  for (int64_t t : {1, 2, 9})
    expectMatchesOracle(src, randomFor(src, 2, 3, t, 90 + t));
}

TEST(Execution, FusedAttentionOpWithEverything) {
  const char *src = R"(
func.func @main(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>, %v: tensor<?x?x?x8xf32>,
                %w: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>,
                %tp: tensor<?x2x3xf32>, %wp: tensor<?x2xf32>, %tq: tensor<?x2x3xf32>, %wq: tensor<?x?xf32>,
                %gamma: tensor<8xf32>, %gw: tensor<8xf32>, %gb: tensor<1xf32>) -> tensor<?x?x?x8xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_style interleaved
      path(%w, %beta) gate(%g) scaled kq_conv_pre(%tp) head_mix_pre(%wp)
      kq_conv_post(%tq) head_mix_post(%wq) norm(%gamma) norm_gate(%gw, %gb)
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x2x3xf32>, tensor<?x2xf32>,
         tensor<?x2x3xf32>, tensor<?x?xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xf32>)
      -> tensor<?x?x?x8xf32>
  return %o : tensor<?x?x?x8xf32>
})";
  for (int64_t t : {1, 7, 16})
    expectMatchesOracle(src, randomFor(src, 1, 4, t, 200 + t, 1.5, 2.0));
}

//===----------------------------------------------------------------------===//
// Examples
//===----------------------------------------------------------------------===//

class ExampleTest : public ::testing::TestWithParam<const char *> {};

TEST_P(ExampleTest, MatchesOracle) {
  std::string src = readExample(GetParam());
  ASSERT_FALSE(src.empty());
  for (int64_t t : {1, 23})
    expectMatchesOracle(src, randomFor(src, 1, 2, t, 300 + t, 1.5, 2.0));
  expectMatchesOracle(src, randomFor(src, 2, 3, 8, 400));
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest,
                         ::testing::Values("rope.mlir", "fox.mlir", "path.mlir",
                                           "path_fox.mlir", "mta_pre.mlir",
                                           "mta.mlir"));

//===----------------------------------------------------------------------===//
// Properties (DESIGN §6)
//===----------------------------------------------------------------------===//

TEST(Properties, CausalityOfEveryExample) {
  for (const char *name : {"rope.mlir", "fox.mlir", "path.mlir",
                           "path_fox.mlir", "mta_pre.mlir", "mta.mlir"}) {
    std::string src = readExample(name);
    const int64_t T = 20, t0 = 11;
    std::vector<Tensor> ins = randomFor(src, 1, 2, T, 500, 1.5, 2.0);
    Tensor base = run(src, ins);
    // Change token t0 in every per-token input (rank >= 3, seq axis 2);
    // a per-token scalar above 1 (PaTH's beta, drawn in [1.5, 2]) moves
    // down, so that it stays in beta's domain [0, 2].
    for (Tensor &x : ins) {
      if (x.rank() < 3 || x.dim(2) != T || x.dim(0) != 1)
        continue;
      int64_t inner = x.rank() == 4 ? x.dim(3) : 1;
      for (int64_t h = 0; h < x.dim(1); ++h)
        for (int64_t e = 0; e < inner; ++e) {
          double &y = x.data[(h * T + t0) * inner + e];
          y += inner == 1 && y > 1 ? -0.75 : 0.75;
        }
    }
    Tensor moved = run(src, ins);
    int64_t d = base.dim(3);
    bool laterChanged = false;
    for (int64_t h = 0; h < base.dim(1); ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t e = 0; e < d; ++e) {
          double a = base.at(0, h, i, e), b = moved.at(0, h, i, e);
          if (i < t0)
            ASSERT_EQ(a, b) << name << " row " << i << " changed";
          else if (a != b)
            laterChanged = true;
        }
    EXPECT_TRUE(laterChanged) << name;
  }
}

TEST(Properties, ZeroBetaPathIsPlainAttention) {
  std::string path = readExample("path.mlir");
  std::string plain = scoresProgram("", 64, 64);
  std::vector<Tensor> ins = randomFor(path, 1, 2, 17, 600);
  for (double &b : ins[4].data)
    b = 0.0;
  Tensor a = run(path, ins);
  Tensor b = run(plain, {ins[0], ins[1], ins[2]});
  EXPECT_LE(attn::ref::relError(a, b), 1e-6);
}

TEST(Properties, ZeroGateFoxIsPlainAttention) {
  std::string fox = readExample("fox.mlir");
  std::string plain = scoresProgram("", 64, 64);
  std::vector<Tensor> ins = randomFor(fox, 1, 2, 17, 601);
  for (double &g : ins[3].data)
    g = 0.0;
  Tensor a = run(fox, ins);
  Tensor b = run(plain, {ins[0], ins[1], ins[2]});
  EXPECT_LE(attn::ref::relError(a, b), 1e-6);
}

TEST(Properties, IdentityMtaKernelsArePlainAttention) {
  std::string src = subst(kMta, {{"$CQ", "6"}, {"$CK", "11"}, {"$CH", "2"}});
  std::vector<Tensor> ins = randomFor(src, 1, 4, 19, 602);
  for (int idx : {3, 5}) {
    ins[idx] = Tensor::zeros(ins[idx].shape);
    for (int64_t h = 0; h < 4; ++h)
      ins[idx].at(h, 5, 5) = 1.0;
  }
  for (int idx : {4, 6}) {
    ins[idx] = Tensor::zeros(ins[idx].shape);
    for (int64_t h = 0; h < 4; ++h)
      ins[idx].at(h, h % 2) = 1.0;
  }
  Tensor a = run(src, ins);
  Tensor b = run(scoresProgram("", 8, 8), {ins[0], ins[1], ins[2]});
  EXPECT_LE(attn::ref::relError(a, b), 1e-6);
}

TEST(Properties, GQAIsRepeatedKVHeads) {
  std::string src = subst(kPath, {{"$ATTRS", ""}});
  std::vector<Tensor> gqa = pathInputs(1, 4, 2, 10, 10, 603);
  auto repeat = [](const Tensor &x) { // [B, 2, ...] -> [B, 4, ...]
    Tensor y = x;
    y.shape[1] = 4;
    int64_t inner = x.numel() / (x.dim(0) * x.dim(1));
    y.data.assign(x.dim(0) * 4 * inner, 0);
    for (int64_t b = 0; b < x.dim(0); ++b)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t e = 0; e < inner; ++e)
          y.data[(b * 4 + h) * inner + e] = x.data[(b * 2 + h / 2) * inner + e];
    return y;
  };
  std::vector<Tensor> mha = gqa;
  for (int idx : {1, 2, 3, 4})
    mha[idx] = repeat(gqa[idx]);
  EXPECT_EQ(run(src, gqa).data, run(src, mha).data);
}

//===----------------------------------------------------------------------===//
// Lower-precision inputs and bad inputs
//===----------------------------------------------------------------------===//

TEST(Execution, HalfAndBfloatActivations) {
  for (const char *elt : {"f16", "bf16"}) {
    std::string src = scoresProgram("", 16, 16, elt);
    std::vector<Tensor> ins = qkv(1, 2, 2, 21, 21, 16, 16, 700);
    // Round the inputs to the storage type first so only the program's own
    // rounding is measured.
    attn::DType dt =
        std::string(elt) == "f16" ? attn::DType::F16 : attn::DType::BF16;
    for (Tensor &x : ins)
      x = *attn::ref::fromHost(attn::ref::toHost(x, dt));
    Program p(src);
    auto ref = attn::ref::evaluate(p.main(), ins);
    ASSERT_TRUE(static_cast<bool>(ref));
    auto kernel = engine().compile(src);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    auto out = (*kernel)->run(toHost(ins, dt));
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    EXPECT_EQ(out->dtype, dt);
    EXPECT_LE(attn::ref::relRmsError(*attn::ref::fromHost(*out), *ref), 5e-3)
        << elt;
  }
}

std::string runError(const std::string &src,
                     const std::vector<HostArray> &ins) {
  auto kernel = engine().compile(src);
  if (!kernel)
    return llvm::toString(kernel.takeError());
  auto out = (*kernel)->run(ins);
  if (out)
    return "";
  return llvm::toString(out.takeError());
}

TEST(Errors, BadInputsAreReportedNotCrashed) {
  std::string src = scoresProgram("");
  auto host = [](std::vector<int64_t> shape) {
    return attn::ref::toHost(attn::ref::randn(shape, 1), attn::DType::F32);
  };
  std::string e = runError(src, {host({1, 2, 4, 16}), host({1, 2, 4, 16})});
  EXPECT_NE(e.find("takes 3 inputs, got 2"), std::string::npos) << e;
  e = runError(src,
               {host({1, 2, 4, 16}), host({1, 2, 4, 8}), host({1, 2, 4, 16})});
  EXPECT_NE(e.find("input 1 must be tensor<?x?x?x16xf32>"), std::string::npos)
      << e;
  e = runError(src,
               {host({1, 3, 4, 16}), host({1, 2, 4, 16}), host({1, 2, 4, 16})});
  EXPECT_NE(e.find("must be a multiple of KV heads"), std::string::npos) << e;
  e = runError(src,
               {host({1, 2, 6, 16}), host({1, 2, 4, 16}), host({1, 2, 4, 16})});
  EXPECT_NE(e.find("T <= S"), std::string::npos) << e;
  e = runError(src,
               {host({2, 2, 4, 16}), host({1, 2, 4, 16}), host({1, 2, 4, 16})});
  EXPECT_NE(e.find("'k' must have shape [B, Hk, S, D]"), std::string::npos)
      << e;
  HostArray ints = host({1, 2, 4, 16});
  ints.dtype = attn::DType::I32;
  e = runError(src, {ints, host({1, 2, 4, 16}), host({1, 2, 4, 16})});
  EXPECT_FALSE(e.empty());
  e = runError("func.func @main(", {});
  EXPECT_NE(e.find("cannot parse"), std::string::npos) << e;
  e = runError("func.func @other() { return }", {});
  EXPECT_NE(e.find("no function @main"), std::string::npos) << e;
}

TEST(Execution, StridedResultIsCopiedOut) {
  // A strided view as the result: lowered code copies it with memrefCopy
  // (MLIR's runner utilities, loaded into the JIT).
  const char *src = R"(
func.func @main(%x: tensor<?x?x?x8xf32>) -> tensor<1x2x3x4xf32> {
  %s = tensor.extract_slice %x[0, 0, 1, 2] [1, 2, 3, 4] [1, 1, 1, 1]
      : tensor<?x?x?x8xf32> to tensor<1x2x3x4xf32>
  return %s : tensor<1x2x3x4xf32>
})";
  Tensor x = attn::ref::randn({1, 2, 5, 8}, 9);
  Tensor got = run(src, {x});
  ASSERT_EQ(got.shape, (std::vector<int64_t>{1, 2, 3, 4}));
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t e = 0; e < 4; ++e)
        EXPECT_EQ(got.at(0, h, i, e), static_cast<double>(static_cast<float>(
                                          x.at(0, h, i + 1, e + 2))));
}

TEST(Errors, UnknownDevice) {
  auto e = attn::Engine::create("tpu");
  ASSERT_FALSE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(e.takeError()).find("unknown device 'tpu'"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// The fused path (attn-fuse -> block program -> CPU backend)
//===----------------------------------------------------------------------===//

/// Fused result vs the oracle, and vs the reference lowering.
void expectFusedMatches(const std::string &source,
                        const std::vector<Tensor> &ins,
                        bool vsReference = true) {
  expectMatchesOracle(source, ins, 1e-5, attn::Pipeline::Fused);
  if (vsReference) {
    Tensor fused = run(source, ins, attn::Pipeline::Fused);
    Tensor ref = run(source, ins, attn::Pipeline::Reference);
    EXPECT_LE(attn::ref::relError(fused, ref), 1e-5);
  }
}

const char *kFusable[] = {"rope.mlir", "fox.mlir"};

TEST(Fused, ExamplesAcrossTileBoundaries) {
  for (const char *name : kFusable) {
    std::string src = readExample(name);
    for (int64_t t : {1, 63, 64, 65, 130})
      expectFusedMatches(src, randomFor(src, 2, 2, t, 800 + t));
    expectFusedMatches(src, randomFor(src, 1, 2, 1000, 801));
  }
}

TEST(Fused, LongSequence) {
  for (const char *name : kFusable) {
    if (!attn::test::sweepCase())
      continue;
    std::string src = readExample(name);
    expectFusedMatches(src, randomFor(src, 1, 1, 4096, 802));
  }
}

TEST(Fused, GQAFewerQueriesAndMasks) {
  for (std::string attrs : {"", "mask none", "mask sliding_window window 37",
                            "scale 2.500000e-01"}) {
    std::string src = scoresProgram(attrs, 16, 24);
    expectFusedMatches(src, qkv(2, 4, 2, 70, 70, 16, 24, 803));
    expectFusedMatches(src, qkv(1, 6, 3, 65, 200, 16, 24, 804));
    expectFusedMatches(src, qkv(1, 2, 1, 1, 129, 16, 24, 805));
  }
}

TEST(Fused, AttentionOpDirectlyWithRopeAndScaledGate) {
  const char *src = R"(
func.func @main(%q: tensor<?x?x?x32xf32>, %k: tensor<?x?x?x32xf32>, %v: tensor<?x?x?x32xf32>,
                %g: tensor<?x?x?xf32>) -> tensor<?x?x?x32xf32> {
  %o = attn.attention %q, %k, %v rope(5.000000e+05) rope_style interleaved rope_dim 16
      gate(%g) scaled
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?xf32>)
      -> tensor<?x?x?x32xf32>
  return %o : tensor<?x?x?x32xf32>
})";
  std::vector<Tensor> ins = qkv(1, 4, 2, 77, 140, 32, 32, 806);
  Tensor g = attn::ref::randUniform({1, 4, 140}, 807, 0.5, 1.0);
  for (double &x : g.data)
    x = std::log(x);
  ins.push_back(g);
  expectFusedMatches(src, ins);
}

TEST(Execution, ExplicitQueryOffsetWithNormEps) {
  // rope_q_offset and a non-default norm_eps together (the oracle once
  // dropped norm_eps on this path).
  const char *src = R"(
func.func @main(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>, %v: tensor<?x?x?x8xf32>,
                %gamma: tensor<8xf32>) -> tensor<?x?x?x8xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_q_offset 5 norm(%gamma)
      norm_eps 5.000000e-01
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<8xf32>)
      -> tensor<?x?x?x8xf32>
  return %o : tensor<?x?x?x8xf32>
})";
  expectMatchesOracle(src, randomFor(src, 1, 2, 9, 820));
}

TEST(Fused, RopeAtNegativeQueryPositions) {
  // mask none allows T > S: queries then sit at negative positions
  // (rope_offset + S - T + i), which the RoPE tables must cover too.
  const char *src = R"(
func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) rope_offset 3 mask none
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
})";
  expectFusedMatches(scoresProgram("mask none"),
                     qkv(1, 2, 2, 12, 9, 16, 16, 812));
  expectFusedMatches(src, qkv(1, 2, 2, 80, 9, 16, 16, 811));
}

TEST(Fused, LowPrecisionActivations) {
  for (const char *elt : {"f16", "bf16"}) {
    std::string src = scoresProgram("", 64, 64, elt);
    attn::DType dt =
        std::string(elt) == "f16" ? attn::DType::F16 : attn::DType::BF16;
    std::vector<Tensor> ins = qkv(1, 2, 2, 150, 150, 64, 64, 808);
    for (Tensor &x : ins)
      x = *attn::ref::fromHost(attn::ref::toHost(x, dt));
    Program p(src);
    auto ref = attn::ref::evaluate(p.main(), ins);
    ASSERT_TRUE(static_cast<bool>(ref));
    attn::CompileOptions options;
    options.pipeline = attn::Pipeline::Fused;
    auto kernel = engine().compile(src, options);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    auto out = (*kernel)->run(toHost(ins, dt));
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    EXPECT_LE(attn::ref::relRmsError(*attn::ref::fromHost(*out), *ref), 5e-3)
        << elt;
  }
}

TEST(Fused, UnfusableVariantsStillRunCorrectly) {
  // PaTH with RoPE is not fused yet: the fused pipeline must fall back to
  // the reference lowering for it (with a remark), never produce wrong
  // numbers. (Fused PaTH: PathFusedTest.cpp; fused MTA: MtaFusedTest.cpp.)
  const char *pathRope = R"(
func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                %v: tensor<?x?x?x64xf32>, %w: tensor<?x?x?x64xf32>,
                %beta: tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) path(%w, %beta)
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
})";
  {
    attn::CompileOptions options;
    options.pipeline = attn::Pipeline::Fused;
    auto kernel = engine().compile(pathRope, options);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    ASSERT_FALSE((*kernel)->remarks().empty());
    EXPECT_NE((*kernel)->remarks()[0].find("PaTH with RoPE"),
              std::string::npos);
  }
  for (const char *src : {pathRope}) {
    expectMatchesOracle(src, randomFor(src, 1, 2, 37, 809, 1.5, 2.0), 1e-5,
                        attn::Pipeline::Fused);
  }
}

TEST(Fused, UnfusedPiecesAreReportedAsRemarks) {
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  auto mta = engine().compile(readExample("mta.mlir"), options);
  ASSERT_TRUE(static_cast<bool>(mta));
  EXPECT_TRUE((*mta)->remarks().empty());
  auto rope = engine().compile(readExample("rope.mlir"), options);
  ASSERT_TRUE(static_cast<bool>(rope));
  EXPECT_TRUE((*rope)->remarks().empty());
}

TEST(Fused, CausalityOnTheFusedPath) {
  std::string src = readExample("fox.mlir");
  const int64_t T = 150, t0 = 97;
  std::vector<Tensor> ins = randomFor(src, 1, 2, T, 810);
  Tensor base = run(src, ins, attn::Pipeline::Fused);
  for (Tensor &x : ins) {
    int64_t inner = x.rank() == 4 ? x.dim(3) : 1;
    for (int64_t h = 0; h < x.dim(1); ++h)
      for (int64_t e = 0; e < inner; ++e)
        x.data[(h * T + t0) * inner + e] += 0.5;
  }
  Tensor moved = run(src, ins, attn::Pipeline::Fused);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < t0; ++i)
      for (int64_t e = 0; e < 64; ++e)
        ASSERT_EQ(base.at(0, h, i, e), moved.at(0, h, i, e)) << i;
}

} // namespace
