//===- MtaFusedTest.cpp - fused MTA on the CPU vs the fp64 oracle ---------===//
//
// Multi-Token Attention through the block program (MtaToBlock.cpp) on the
// CPU: every result is compared with the fp64 oracle (reference/) on
// fresh random inputs (the seed is in the failure message), and the
// properties of spec/mta.md §7 are checked on the fused path itself:
// identity kernels/mixing equal plain attention, causality (earlier rows
// bit-identical, later rows changed), and head permutation equivariance.
// Output buffers are poisoned (MALLOC_PERTURB_, see CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "MtaSources.h"
#include "ParsedModule.h"
#include "ProgramOracle.h"
#include "Sweep.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

using attn::ref::Tensor;

namespace {

/// One engine for the binary, never destroyed (see ExecutionTest.cpp).
attn::Engine &engine() {
  static attn::Engine *e = [] {
    auto created = attn::Engine::create("cpu");
    if (!created) {
      ADD_FAILURE() << llvm::toString(created.takeError());
      std::abort();
    }
    return created->release();
  }();
  return *e;
}

using Program = attn::test_util::ParsedModule;

/// Compiles `src` for the fused pipeline, expecting no remark (everything
/// fused), and runs it.
Tensor runFused(const std::string &src, const std::vector<Tensor> &ins,
                bool expectNoRemark = true) {
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  auto kernel = engine().compile(src, options);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return {};
  }
  if (expectNoRemark) {
    EXPECT_TRUE((*kernel)->remarks().empty())
        << (*kernel)->remarks().front() << "\n"
        << src;
  }
  // Every argument f32 but cu_seqlens (i32, the last where present).
  const bool packed = src.find("cu_seqlens") != std::string::npos;
  std::vector<attn::HostArray> host;
  for (size_t i = 0; i < ins.size(); ++i)
    host.push_back(attn::ref::toHost(ins[i], packed && i + 1 == ins.size()
                                                 ? attn::DType::I32
                                                 : attn::DType::F32));
  auto out = (*kernel)->run(host);
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  auto t = attn::ref::fromHost(*out);
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : Tensor();
}

std::vector<Tensor> randomFor(const std::string &src, int64_t b, int64_t h,
                              int64_t t, uint64_t seed) {
  Program p(src);
  EXPECT_TRUE(p.module) << src;
  attn::ref::RandomSpec spec;
  spec.batch = b;
  spec.heads = h;
  spec.seqLen = t;
  spec.seed = seed;
  auto ins = attn::ref::randomInputs(p.main(), spec);
  EXPECT_TRUE(static_cast<bool>(ins)) << llvm::toString(ins.takeError());
  return ins ? *ins : std::vector<Tensor>{};
}

/// Fused result vs the oracle: max relative error <= 1e-5 (f32).
void expectFusedMatchesOracle(const std::string &src,
                              const std::vector<Tensor> &ins,
                              const std::string &what) {
  if (!attn::test::sweepCase())
    return;
  Program p(src);
  ASSERT_TRUE(p.module) << src;
  auto ref = attn::ref::evaluate(p.main(), ins);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  Tensor got = runFused(src, ins);
  ASSERT_EQ(got.shape, ref->shape) << what;
  EXPECT_LE(attn::ref::relError(got, *ref), 1e-5) << what << "\n" << src;
}

/// Which MTA pieces an attn.attention carries; ch = 0 means c_h = H
/// (weights [?, ?]).
struct Config {
  int cq = 6, ck = 11, ch = 0, chPost = -1; // chPost -1: as ch
  bool pre = true, mixPre = true, post = true, mixPost = true;
  bool rope = true, fox = false, norm = true, gate = true;
  bool packed = false; ///< cu_seqlens: random cuts of T into 3
  int d = 16;
};

/// An attn.attention over [B, H, T, d] f32 with the pieces of `c`
/// (MtaSources.h writes it).
std::string mtaProgram(const Config &c) {
  attn::exec_test::MtaForm f;
  f.cq = c.cq;
  f.ck = c.ck;
  f.ch = c.ch;
  f.chPost = c.chPost;
  f.pre = c.pre;
  f.mixPre = c.mixPre;
  f.post = c.post;
  f.mixPost = c.mixPost;
  f.rope = c.rope;
  f.fox = c.fox;
  f.norm = c.norm;
  f.gate = c.gate;
  f.packed = c.packed;
  f.d = f.dv = c.d;
  f.elt = "f32";
  return attn::exec_test::mtaSource(f);
}

std::string describe(const Config &c, int64_t h, int64_t t, uint64_t seed) {
  std::ostringstream os;
  os << "kernel " << c.cq << "x" << c.ck << " c_h "
     << (c.ch ? std::to_string(c.ch) : "H") << " H " << h << " T " << t
     << " seed " << seed << (c.post || c.mixPost ? " two-pass" : " one-pass");
  return os.str();
}

const int kKernels[][2] = {{1, 1}, {2, 3}, {3, 5}, {6, 11}};

// The released composition (RoPE, pre and post convs and mixes, norm and
// gate) and the pre-only one, over the kernel sizes and group sizes of the
// issue, at the tile-boundary lengths; H = 4 so that c_h = 2 has two groups.
TEST(MtaFused, MatchesOracleAcrossKernelsGroupsAndLengths) {
  uint64_t seed = 1700;
  for (bool post : {true, false})
    for (auto [cq, ck] : kKernels)
      for (int ch : {1, 2, 0}) {
        Config c;
        c.cq = cq;
        c.ck = ck;
        c.ch = ch;
        c.post = c.mixPost = post;
        c.norm = c.gate = post;
        c.rope = post;
        std::string src = mtaProgram(c);
        for (int64_t t : {1, 5, 63, 64, 65}) {
          ++seed;
          expectFusedMatchesOracle(src, randomFor(src, 1, 4, t, seed),
                                   describe(c, 4, t, seed));
        }
      }
}

// T = 1000 on few heads (the oracle is O(H T^2 c_q c_k)).
TEST(MtaFused, MatchesOracleAtLongerSequences) {
  uint64_t seed = 1800;
  for (bool post : {true, false})
    for (auto [cq, ck] : {std::pair{6, 11}, std::pair{2, 3}})
      for (int ch : {1, 0}) {
        Config c;
        c.cq = cq;
        c.ck = ck;
        c.ch = ch;
        c.post = c.mixPost = post;
        std::string src = mtaProgram(c);
        ++seed;
        expectFusedMatchesOracle(src, randomFor(src, 1, 2, 1000, seed),
                                 describe(c, 2, 1000, seed));
      }
}

// Each piece alone, FoX with MTA, differing pre/post group sizes, batch > 1,
// GQA and T < S (the Mask_0 diagonal is shifted by S - T).
TEST(MtaFused, PiecesAloneAndCompositions) {
  uint64_t seed = 1900;
  auto check = [&](Config c, int64_t b, int64_t h, int64_t t) {
    std::string src = mtaProgram(c);
    ++seed;
    expectFusedMatchesOracle(src, randomFor(src, b, h, t, seed),
                             describe(c, h, t, seed));
  };
  Config none;
  none.pre = none.mixPre = none.post = none.mixPost = false;
  Config c = none;
  c.pre = true;
  check(c, 2, 2, 70); // pre conv only
  c = none;
  c.mixPre = true;
  check(c, 1, 4, 70); // pre mix only
  c = none;
  c.post = true;
  check(c, 1, 2, 70); // post conv only
  c = none;
  c.mixPost = true;
  c.ch = 2;
  check(c, 1, 4, 70); // post mix only
  c = none;
  check(c, 2, 3, 70); // the head norm with its gate only
  c.gate = false;
  check(c, 1, 2, 33);
  c = Config();
  c.fox = true;
  check(c, 1, 4, 130); // MTA + FoX + RoPE
  c.rope = false;
  c.cq = 3;
  c.ck = 5;
  check(c, 2, 2, 66); // MTA + FoX
}

// Packed sequences (3 random cuts): a tile whose halo rows cross a
// sequence start takes the stencil tap by tap; with RoPE the rope kernels
// rotate first; one-pass and two-pass programs, GQA.
TEST(MtaFused, PackedSequences) {
  uint64_t seed = attn::ref::freshSeed();
  auto check = [&](Config c, int64_t h, int64_t t) {
    std::string src = mtaProgram(c);
    ++seed;
    expectFusedMatchesOracle(src, randomFor(src, 1, h, t, seed),
                             describe(c, h, t, seed) + " packed");
  };
  Config c;
  c.packed = true;
  check(c, 4, 70);
  check(c, 2, 200);
  c.fox = true;
  c.cq = 3;
  c.ck = 5;
  check(c, 2, 130);
  Config pre = c;
  pre.post = pre.mixPost = pre.norm = pre.gate = false;
  pre.rope = false;
  check(pre, 2, 150);
}

TEST(MtaFused, DifferentPreAndPostGroupSizes) {
  // c_h = 2 before the softmax, H = 4 after: a program owns all 4 heads.
  Config c;
  c.ch = 2;
  c.chPost = 0;
  std::string src = mtaProgram(c);
  expectFusedMatchesOracle(src, randomFor(src, 1, 4, 77, 1950),
                           "pre c_h 2, post c_h H = 4, seed 1950");
}

TEST(MtaFused, GqaAndFewerQueriesThanKeys) {
  Config c;
  c.cq = 3;
  c.ck = 5;
  std::string src = mtaProgram(c);
  for (auto [t, s, seed] : {std::tuple{40, 100, 1960}, std::tuple{1, 9, 1961},
                            std::tuple{70, 71, 1962}}) {
    std::vector<Tensor> ins = randomFor(src, 1, 4, s, seed);
    ins[0] = attn::ref::randn({1, 4, t, 16}, seed + 100);
    ins[1] = attn::ref::randn({1, 2, s, 16}, seed + 101); // GQA: 2 KV heads
    ins[2] = attn::ref::randn({1, 2, s, 16}, seed + 102);
    expectFusedMatchesOracle(src, ins,
                             "GQA T " + std::to_string(t) + " S " +
                                 std::to_string(s) + " seed " +
                                 std::to_string(seed));
  }
}

std::string readExample(const std::string &name) {
  std::ifstream f(std::string(ATTN_SOURCE_DIR) + "/examples/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(MtaFused, ExamplesRunFusedWithoutRemarks) {
  for (const char *name : {"mta.mlir", "mta_pre.mlir"}) {
    std::string src = readExample(name);
    for (int64_t t : {37, 130})
      expectFusedMatchesOracle(src, randomFor(src, 1, 4, t, 2000 + t),
                               std::string(name) + " T " + std::to_string(t));
  }
}

//===----------------------------------------------------------------------===//
// Properties
//===----------------------------------------------------------------------===//

/// Exact identity kernels (delta at (c_q - 1, centre)) and mixing weights.
void makeIdentity(const std::string &src, std::vector<Tensor> &ins) {
  Program p(src);
  auto args = p.main().getArguments();
  for (size_t i = 3; i < ins.size(); ++i) {
    Tensor &t = ins[i];
    bool used = false;
    for (mlir::Operation *user : args[i].getUsers()) {
      auto op = mlir::cast<mlir::attn::AttentionOp>(user);
      if (op.getKqConvPre() == args[i] || op.getKqConvPost() == args[i]) {
        std::fill(t.data.begin(), t.data.end(), 0.0);
        int64_t cq = t.dim(1), ck = t.dim(2);
        for (int64_t h = 0; h < t.dim(0); ++h)
          t.at(h, cq - 1, (ck - 1) / 2) = 1.0;
        used = true;
      } else if (op.getHeadMixPre() == args[i] ||
                 op.getHeadMixPost() == args[i]) {
        std::fill(t.data.begin(), t.data.end(), 0.0);
        for (int64_t h = 0; h < t.dim(0); ++h)
          t.at(h, h % t.dim(1)) = 1.0;
        used = true;
      }
    }
    ASSERT_TRUE(used) << "argument " << i;
  }
}

TEST(MtaProperties, IdentityKernelsAndMixingArePlainAttention) {
  Config plainCfg;
  plainCfg.pre = plainCfg.mixPre = plainCfg.post = plainCfg.mixPost = false;
  plainCfg.norm = plainCfg.gate = false;
  std::string plain = mtaProgram(plainCfg); // no MTA piece: the flash kernel
  for (bool post : {false, true})
    for (auto [cq, ck] : kKernels) {
      Config c;
      c.cq = cq;
      c.ck = ck;
      c.post = c.mixPost = post;
      c.norm = c.gate = false;
      std::string src = mtaProgram(c);
      uint64_t seed = 2100 + cq * 10 + post;
      std::vector<Tensor> ins = randomFor(src, 1, 4, 150, seed);
      makeIdentity(src, ins);
      Tensor mta = runFused(src, ins);
      Tensor ref = runFused(plain, {ins[0], ins[1], ins[2]});
      ASSERT_EQ(mta.shape, ref.shape);
      // The flash kernel (the GPU form's, stripped) and the MTA CPU form
      // sum alike but not in the same order (base-2 scaling folded into q
      // there, into the exponent's fma here): f32 rounding apart.
      double tol = 1e-6;
      EXPECT_LE(attn::ref::relError(mta, ref), tol)
          << describe(c, 4, 150, seed);
    }
}

/// Adds `delta` to token t0 of every [B, H, T(, D)] sequence input.
void perturbToken(std::vector<Tensor> &ins, int64_t t0, double delta) {
  for (size_t n = 0; n < 3; ++n) {
    Tensor &x = ins[n];
    int64_t T = x.dim(2), D = x.dim(3);
    for (int64_t b = 0; b < x.dim(0); ++b)
      for (int64_t h = 0; h < x.dim(1); ++h)
        for (int64_t e = 0; e < D; ++e)
          x.data[((b * x.dim(1) + h) * T + t0) * D + e] += delta;
  }
}

TEST(MtaProperties, CausalOnTheFusedPath) {
  for (bool post : {true, false}) {
    Config c; // 6x11 kernels, all-head mixing, RoPE, norm + gate
    c.post = c.mixPost = post;
    std::string src = mtaProgram(c);
    const int64_t T = 150;
    for (int64_t t0 : {64, 66, 97}) {
      uint64_t seed = 2200 + t0 + post;
      std::vector<Tensor> ins = randomFor(src, 1, 4, T, seed);
      Tensor base = runFused(src, ins);
      perturbToken(ins, t0, 0.5);
      Tensor moved = runFused(src, ins);
      ASSERT_EQ(base.shape, moved.shape);
      int64_t dv = base.dim(3);
      for (int64_t h = 0; h < 4; ++h) {
        for (int64_t i = 0; i < t0; ++i)
          for (int64_t e = 0; e < dv; ++e)
            ASSERT_EQ(base.at(0, h, i, e), moved.at(0, h, i, e))
                << "row " << i << " head " << h << " t0 " << t0 << " seed "
                << seed;
        // Later rows do see token t0 (every row from t0 on, through the
        // query halo of the convolutions too).
        for (int64_t i = t0; i < std::min(T, t0 + 8); ++i) {
          double diff = 0;
          for (int64_t e = 0; e < dv; ++e)
            diff = std::max(
                diff, std::fabs(base.at(0, h, i, e) - moved.at(0, h, i, e)));
          EXPECT_GT(diff, 1e-6) << "row " << i << " head " << h << " t0 " << t0
                                << " seed " << seed;
        }
      }
    }
  }
}

/// Packed sequences are isolated: changing every token of one sequence
/// leaves every other sequence's rows bit for bit (the cells across
/// sequences are selected away, never multiplied by 0), and changes its
/// own. Sequences [0, 60), [60, 70), [70, 150): the middle one's rows and
/// halo share row tiles with both neighbours.
TEST(MtaProperties, PackedSequencesAreIsolated) {
  for (bool post : {true, false}) {
    Config c; // 6x11 kernels, all-head mixing, RoPE, norm + gate
    c.post = c.mixPost = post;
    c.packed = true;
    std::string src = mtaProgram(c);
    const int64_t T = 150, lo = 60, hi = 70;
    const uint64_t seed = attn::ref::freshSeed();
    std::vector<Tensor> ins = randomFor(src, 1, 4, T, seed);
    Tensor &cu = ins.back();
    cu = Tensor::zeros({4});
    cu.data = {0, double(lo), double(hi), double(T)};
    Tensor base = runFused(src, ins);
    for (int64_t t = lo; t < hi; ++t)
      perturbToken(ins, t, 0.5);
    Tensor moved = runFused(src, ins);
    ASSERT_EQ(base.shape, moved.shape);
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < T; ++i) {
        double diff = 0;
        for (int64_t e = 0; e < base.dim(3); ++e)
          diff = std::max(
              diff, std::fabs(base.at(0, h, i, e) - moved.at(0, h, i, e)));
        if (i >= lo && i < hi)
          EXPECT_GT(diff, 1e-6)
              << "row " << i << " head " << h << " seed " << seed;
        else
          EXPECT_EQ(diff, 0.0) << "row " << i << " head " << h << " seed "
                               << seed << (post ? " two-pass" : " one-pass");
      }
  }
}

TEST(MtaProperties, PermutingHeadsWithTheMixingWeightsPermutesOutputs) {
  Config c; // all-head mixing before and after the softmax
  c.cq = 3;
  c.ck = 5;
  std::string src = mtaProgram(c);
  const int64_t H = 4, T = 90;
  const uint64_t seed = 2300;
  std::vector<Tensor> ins = randomFor(src, 1, H, T, seed);
  std::vector<int64_t> perm = {2, 0, 3, 1}; // new head a = old head perm[a]
  Program p(src);
  auto op = *p.main().getOps<mlir::attn::AttentionOp>().begin();
  auto args = p.main().getArguments();
  std::vector<Tensor> permuted = ins;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Tensor &x = ins[i];
    Tensor &y = permuted[i];
    mlir::Value a = args[i];
    if (i < 3) { // q, k, v [B, H, T, D]
      int64_t inner = x.dim(2) * x.dim(3);
      for (int64_t h = 0; h < H; ++h)
        std::copy_n(x.data.begin() + perm[h] * inner, inner,
                    y.data.begin() + h * inner);
    } else if (a == op.getKqConvPre() || a == op.getKqConvPost()) {
      int64_t inner = x.dim(1) * x.dim(2);
      for (int64_t h = 0; h < H; ++h)
        std::copy_n(x.data.begin() + perm[h] * inner, inner,
                    y.data.begin() + h * inner);
    } else if (a == op.getHeadMixPre() || a == op.getHeadMixPost()) {
      for (int64_t r = 0; r < H; ++r)
        for (int64_t s = 0; s < H; ++s)
          y.at(r, s) = x.at(perm[r], perm[s]);
    }
  }
  Tensor base = runFused(src, ins);
  Tensor got = runFused(src, permuted);
  ASSERT_EQ(base.shape, got.shape);
  Tensor expect = base;
  int64_t inner = T * base.dim(3);
  for (int64_t h = 0; h < H; ++h)
    std::copy_n(base.data.begin() + perm[h] * inner, inner,
                expect.data.begin() + h * inner);
  // The mix sums the same terms in another order: f32 rounding only.
  EXPECT_LE(attn::ref::relError(got, expect), 1e-6) << "seed " << seed;
  // And it is not trivially satisfied: the heads differ.
  EXPECT_GT(attn::ref::relError(got, base), 1e-2);
}

} // namespace
