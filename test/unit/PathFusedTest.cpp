//===- PathFusedTest.cpp - fused PaTH / PaTH-FoX on the CPU vs the oracle -===//
//
// The PaTH block program (attn-to-block's PathToBlock.cpp: chunk kernel,
// attention kernel with the right-to-left walk) compiled for the CPU, on
// fresh random inputs (seeds printed on failure), against the brute-force
// fp64 oracle: lengths around the chunk size C = 64 and long sequences
// (S = 4096 checked on its last 256 queries), near-reflections (beta in
// (1.5, 2)) and general betas, GQA, fewer queries than keys, sliding
// windows, head dims up to 256. Property tests compare fused runs
// with each other: beta = 0 is plain attention, T < S gives the last rows of
// the full run, causality, GQA is repeated KV heads.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"
#include "Sweep.h"

using namespace attn::exec_test;

namespace {

/// Fused result vs the oracle (max error relative to max |ref|).
void expectFusedPath(const std::string &source, const std::vector<Tensor> &ins,
                     const std::string &what, double tol = 1e-5) {
  if (!attn::test::sweepCase())
    return;
  SCOPED_TRACE(what);
  expectMatchesOracle(source, ins, tol, attn::Pipeline::Fused);
}

/// The fused pipeline compiles PaTH without a "not fused" remark.
TEST(PathFused, ExamplesAreFusedWithoutRemarks) {
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  for (const char *name : {"path.mlir", "path_fox.mlir"}) {
    auto kernel = engine().compile(readExample(name), options);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    EXPECT_TRUE((*kernel)->remarks().empty())
        << name << ": " << (*kernel)->remarks()[0];
  }
}

/// Lengths around one and two chunks of 64, both beta ranges.
TEST(PathFused, ExamplesAcrossChunkBoundaries) {
  for (const char *name : {"path.mlir", "path_fox.mlir"}) {
    std::string src = readExample(name);
    for (auto [lo, hi] : {std::pair{1.5, 2.0}, std::pair{0.0, 2.0}})
      for (int64_t t : {1, 2, 63, 64, 65, 127, 128, 129}) {
        uint64_t seed = 900 + t + static_cast<uint64_t>(lo * 10);
        expectFusedPath(src, randomFor(src, 2, 2, t, seed, lo, hi),
                        std::string(name) + " T=" + std::to_string(t) +
                            " beta in (" + std::to_string(lo) + ", " +
                            std::to_string(hi) + ") seed " +
                            std::to_string(seed));
      }
  }
}

/// T = 1000 in full, and S = 4096 keys with the last 256 queries: the rows
/// with the longest walk (63 chunk transports) against the oracle, which
/// costs O(T S D) per head (the full 4096 x 4096 oracle would take minutes).
TEST(PathFused, LongSequences) {
  for (const char *name : {"path.mlir", "path_fox.mlir"}) {
    std::string src = readExample(name);
    for (auto [lo, hi] : {std::pair{1.5, 2.0}, std::pair{0.0, 2.0}}) {
      uint64_t seed = 950 + static_cast<uint64_t>(lo * 10);
      expectFusedPath(src, randomFor(src, 1, 1, 1000, seed, lo, hi),
                      std::string(name) + " T=1000 seed " +
                          std::to_string(seed));
      const int64_t s = 4096, t = 256;
      std::vector<Tensor> ins = randomFor(src, 1, 1, s, seed + 1, lo, hi);
      Tensor &q = ins[0];
      q.data.erase(q.data.begin(), q.data.begin() + (s - t) * q.dim(3));
      q.shape[2] = t;
      expectFusedPath(src, ins,
                      std::string(name) + " S=4096, last 256 queries, seed " +
                          std::to_string(seed + 1));
    }
  }
}

/// attn.attention written directly: head dims D and Dv, GQA, scale, gate
/// scaled or not, mask causal or sliding_window, f32 or bf16 activations.
const char *kPathAttention = R"(
func.func @main(%q: tensor<?x?x?x$Dx$E>, %k: tensor<?x?x?x$Dx$E>, %v: tensor<?x?x?x$Vx$E>,
                %w: tensor<?x?x?x$Dxf32>, %beta: tensor<?x?x?xf32>$GARG) -> tensor<?x?x?x$Vx$E> {
  %o = attn.attention %q, %k, %v path(%w, %beta) $ATTRS
      : (tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Vx$E>, tensor<?x?x?x$Dxf32>, tensor<?x?x?xf32>$GTYPE)
      -> tensor<?x?x?x$Vx$E>
  return %o : tensor<?x?x?x$Vx$E>
})";

std::string pathAttention(int d, int dv, bool gate, const std::string &attrs,
                          const std::string &elt = "f32") {
  return subst(kPathAttention,
               {{"$GARG", gate ? ", %g: tensor<?x?x?xf32>" : ""},
                {"$GTYPE", gate ? ", tensor<?x?x?xf32>" : ""},
                {"$ATTRS", (gate ? "gate(%g) " : "") + attrs},
                {"$D", std::to_string(d)},
                {"$V", std::to_string(dv)},
                {"$E", elt}});
}

/// q [B,Hq,T,D], k/w [B,Hk,S,D], v [B,Hk,S,Dv], beta [B,Hk,S] in (lo, hi),
/// g = log U(0.9, 1) [B,Hq,S] when `gate`.
std::vector<Tensor> pathCase(int64_t b, int64_t hq, int64_t hk, int64_t t,
                             int64_t s, int64_t d, int64_t dv, bool gate,
                             uint64_t seed, double lo = 1.5, double hi = 2.0) {
  std::vector<Tensor> ins = qkv(b, hq, hk, t, s, d, dv, seed);
  ins.push_back(unitRows({b, hk, s, d}, seed + 3));
  ins.push_back(attn::ref::randUniform({b, hk, s}, seed + 4, lo, hi));
  if (gate) {
    Tensor g = attn::ref::randUniform({b, hq, s}, seed + 5, 0.9, 1.0);
    for (double &x : g.data)
      x = std::log(x);
    ins.push_back(g);
  }
  return ins;
}

TEST(PathFused, GQAFewerQueriesWindowsAndHeadDims) {
  struct Case {
    int d, dv;
    bool gate;
    std::string attrs;
    int64_t b, hq, hk, t, s;
  };
  const Case cases[] = {
      {32, 24, false, "", 2, 4, 2, 70, 70},
      {32, 24, true, "scaled", 1, 6, 3, 65, 200},
      {32, 24, true, "", 1, 2, 1, 1, 129},
      {16, 16, true, "scaled mask sliding_window window 37", 1, 4, 2, 150, 150},
      {16, 16, false, "mask sliding_window window 64", 1, 2, 2, 100, 230},
      {16, 16, false, "mask sliding_window window 1", 1, 2, 1, 70, 70},
      {16, 16, true, "scale 2.500000e-01", 2, 2, 2, 5, 40},
      {100, 60, true, "scaled", 1, 2, 1, 90, 90},
      {256, 256, false, "", 1, 1, 1, 130, 130},
      {128, 128, true, "scaled", 1, 2, 2, 67, 131},
  };
  uint64_t seed = 1000;
  for (const Case &c : cases) {
    std::string src = pathAttention(c.d, c.dv, c.gate, c.attrs);
    for (auto [lo, hi] : {std::pair{1.5, 2.0}, std::pair{0.0, 2.0}}) {
      seed += 10;
      expectFusedPath(
          src,
          pathCase(c.b, c.hq, c.hk, c.t, c.s, c.d, c.dv, c.gate, seed, lo, hi),
          src + "\nseed " + std::to_string(seed));
    }
  }
}

TEST(PathFused, LowPrecisionActivations) {
  for (const char *elt : {"f16", "bf16"}) {
    std::string src = pathAttention(64, 64, true, "scaled", elt);
    attn::DType dt =
        std::string(elt) == "f16" ? attn::DType::F16 : attn::DType::BF16;
    std::vector<Tensor> ins = pathCase(1, 2, 1, 150, 150, 64, 64, true, 1100);
    // Activations rounded to the storage type first: only the program's own
    // rounding (the bf16/f16 output) is measured.
    for (int i = 0; i < 3; ++i)
      ins[i] = *attn::ref::fromHost(attn::ref::toHost(ins[i], dt));
    Program p(src);
    auto ref = attn::ref::evaluate(p.main(), ins);
    ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
    attn::CompileOptions options;
    options.pipeline = attn::Pipeline::Fused;
    auto kernel = engine().compile(src, options);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    std::vector<HostArray> host = toHost(ins);
    for (int i = 0; i < 3; ++i)
      host[i] = attn::ref::toHost(ins[i], dt);
    auto out = (*kernel)->run(host);
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    EXPECT_LE(attn::ref::relRmsError(*attn::ref::fromHost(*out), *ref), 5e-3)
        << elt;
  }
}

//===----------------------------------------------------------------------===//
// Properties of the fused kernels
//===----------------------------------------------------------------------===//

TEST(PathFused, ZeroBetaIsPlainAttention) {
  for (bool gate : {false, true}) {
    std::string path = pathAttention(32, 32, gate, gate ? "scaled" : "");
    std::string plain = subst(R"(
func.func @main(%q: tensor<?x?x?x32xf32>, %k: tensor<?x?x?x32xf32>, %v: tensor<?x?x?x32xf32>$GARG) -> tensor<?x?x?x32xf32> {
  %o = attn.attention %q, %k, %v $ATTRS
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>$GTYPE) -> tensor<?x?x?x32xf32>
  return %o : tensor<?x?x?x32xf32>
})",
                              {{"$GARG", gate ? ", %g: tensor<?x?x?xf32>" : ""},
                               {"$GTYPE", gate ? ", tensor<?x?x?xf32>" : ""},
                               {"$ATTRS", gate ? "gate(%g) scaled" : ""}});
    std::vector<Tensor> ins = pathCase(1, 4, 2, 150, 150, 32, 32, gate, 1200);
    for (double &x : ins[4].data)
      x = 0.0;
    std::vector<Tensor> flashIns = {ins[0], ins[1], ins[2]};
    if (gate)
      flashIns.push_back(ins[5]);
    Tensor a = run(path, ins, attn::Pipeline::Fused);
    Tensor b = run(plain, flashIns, attn::Pipeline::Fused);
    EXPECT_LE(attn::ref::relError(a, b), 1e-6) << "gate " << gate;
  }
}

/// Rows [S - T, S) of a run over all S queries equal a run over the last T
/// queries, bit for bit: each query row's arithmetic is the same, only the
/// padding rows of the first chunk differ.
TEST(PathFused, FewerQueriesAreTheLastRowsOfTheFullRun) {
  const int64_t s = 200;
  std::string src = pathAttention(32, 24, true, "scaled");
  std::vector<Tensor> full = pathCase(1, 4, 2, s, s, 32, 24, true, 1300);
  Tensor all = run(src, full, attn::Pipeline::Fused);
  for (int64_t t : {1, 63, 64, 65, 137}) {
    std::vector<Tensor> part = full;
    Tensor &q = part[0];
    q.shape[2] = t;
    q.data.clear();
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = s - t; i < s; ++i)
        for (int64_t e = 0; e < 32; ++e)
          q.data.push_back(full[0].at(0, h, i, e));
    Tensor last = run(src, part, attn::Pipeline::Fused);
    ASSERT_EQ(last.shape, (std::vector<int64_t>{1, 4, t, 24}));
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t e = 0; e < 24; ++e)
          ASSERT_EQ(last.at(0, h, i, e), all.at(0, h, s - t + i, e))
              << "T " << t << " head " << h << " row " << i;
  }
}

/// Changing token t0 (q, k, v, w, beta, g) leaves rows before it
/// bit-identical and changes rows at and after it, including rows chunks
/// away (reached through the transported query).
TEST(PathFused, Causality) {
  const int64_t t = 200;
  for (int64_t t0 : {0, 63, 64, 97}) {
    std::string src = pathAttention(16, 16, true, "scaled");
    std::vector<Tensor> ins = pathCase(1, 2, 2, t, t, 16, 16, true, 1400 + t0);
    Tensor base = run(src, ins, attn::Pipeline::Fused);
    for (Tensor &x : ins) {
      int64_t inner = x.rank() == 4 ? x.dim(3) : 1;
      for (int64_t h = 0; h < x.dim(1); ++h)
        for (int64_t e = 0; e < inner; ++e) {
          // A per-token scalar above 1 (beta) moves down: beta stays in
          // its domain [0, 2].
          double &y = x.data[(h * t + t0) * inner + e];
          y += inner == 1 && y > 1 ? -0.25 : 0.25;
        }
    }
    Tensor moved = run(src, ins, attn::Pipeline::Fused);
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t i = 0; i < t; ++i) {
        bool changed = false;
        for (int64_t e = 0; e < 16; ++e) {
          double a = base.at(0, h, i, e), b = moved.at(0, h, i, e);
          if (i < t0) {
            ASSERT_EQ(a, b) << "t0 " << t0 << " head " << h << " row " << i;
          }
          changed |= a != b;
        }
        if (i >= t0) {
          EXPECT_TRUE(changed) << "t0 " << t0 << " head " << h << " row " << i
                               << " did not change";
        }
      }
    }
  }
}

TEST(PathFused, GQAIsRepeatedKVHeads) {
  std::string src = pathAttention(16, 16, true, "scaled");
  std::vector<Tensor> gqa = pathCase(2, 4, 2, 150, 150, 16, 16, true, 1500);
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
  Tensor a = run(src, gqa, attn::Pipeline::Fused);
  Tensor b = run(src, mha, attn::Pipeline::Fused);
  ASSERT_FALSE(a.data.empty());
  EXPECT_EQ(a.data, b.data);
}

} // namespace
