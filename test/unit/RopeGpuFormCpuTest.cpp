//===- RopeGpuFormCpuTest.cpp - RoPE's GPU form on the CPU vs the oracle --===//
//
// RoPE and RoPE+FoX in the GPU form (launchRopeGpu's table and rotation
// kernels, then the flash kernel) run on the CPU through attn-block-strip-gpu
// against the fp64 oracle on fresh random inputs (seeds in the messages):
// both styles, rope_dim < D, rope_offset up to 1e5, rope_q_offset, T < S,
// T > S with mask none, GQA, D = 128 f16; q, k, v rounded to 16 bits first.
// The other style's oracle must be far from the result, and a later key must
// not reach an earlier row. docs/reference/testing.md.
//
//===----------------------------------------------------------------------===//

#include "BlockFormText.h"
#include "ExecutionHelpers.h"
#include "Sweep.h"

#include <iostream>
#include <map>

namespace {

using namespace attn::exec_test;

const char *kRope = R"(
func.func @main(%q: tensor<?x?x?x$Dx$E>, %k: tensor<?x?x?x$Dx$E>, %v: tensor<?x?x?x$Dx$E>$GARG) -> tensor<?x?x?x$Dx$E> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) $ATTRS
      : (tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dx$E>$GTYPE)
      -> tensor<?x?x?x$Dx$E>
  return %o : tensor<?x?x?x$Dx$E>
})";

struct Form {
  std::string target = "sm_90";
  std::string rope;  // after rope(theta): style, dim, offsets
  bool gate = false; // FoX
  std::string mask;  // "" (causal) or a mask clause
  int d = 64;
  std::string elt = "bf16";
};

std::string ropeSource(const Form &f) {
  std::string attrs = f.rope;
  if (f.gate)
    attrs += " gate(%g)";
  if (!f.mask.empty())
    attrs += " " + f.mask;
  return subst(kRope, {{"$GARG", f.gate ? ", %g: tensor<?x?x?xf32>" : ""},
                       {"$GTYPE", f.gate ? ", tensor<?x?x?xf32>" : ""},
                       {"$ATTRS", attrs},
                       {"$D", std::to_string(f.d)},
                       {"$E", f.elt}});
}

attn::DType dtypeOf(const Form &f) {
  return f.elt == "f16" ? attn::DType::F16 : attn::DType::BF16;
}

/// The compiled GPU form of `f` (one compile per source and target).
attn::Kernel *compiledForm(const Form &f) {
  static std::map<std::string, std::shared_ptr<attn::Kernel>> cache;
  std::string source = ropeSource(f), key = f.target + source;
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second.get();
  std::string form = blockFormText(source, f.target);
  // The prologue kernels and the flash kernel in the GPU form, and no
  // table built on the host.
  EXPECT_NE(form.find("attn_block.launch @main_rope_table"), std::string::npos)
      << form;
  EXPECT_NE(form.find("attn_block.launch @main_rope_q"), std::string::npos);
  EXPECT_NE(form.find("attn_block.launch @main_rope_k"), std::string::npos);
  EXPECT_NE(form.find("attn_block.async_copy"), std::string::npos);
  EXPECT_EQ(form.find("tensor.generate"), std::string::npos);
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  auto kernel = engine().compile(form, options, "rope-gpu-form " + f.target);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return (cache[key] = *kernel).get();
}

struct Case {
  int64_t b, hq, hk, t, s;
};

/// q [B,Hq,T,D], k, v [B,Hk,S,D] rounded to the 16-bit type; with FoX
/// g = log U(fLo, 1) [B,Hq,S] (f32).
std::vector<Tensor> inputs(const Form &f, const Case &c, uint64_t seed,
                           double fLo = 0.9) {
  std::vector<Tensor> ins = qkv(c.b, c.hq, c.hk, c.t, c.s, f.d, f.d, seed);
  for (Tensor &x : ins)
    x = *attn::ref::fromHost(attn::ref::toHost(x, dtypeOf(f)));
  if (f.gate) {
    Tensor g = attn::ref::randUniform({c.b, c.hq, c.s}, seed + 5, fLo, 1.0);
    for (double &x : g.data)
      x = std::log(x);
    ins.push_back(g);
  }
  return ins;
}

Tensor runForm(const Form &f, const std::vector<Tensor> &ins) {
  attn::Kernel *kernel = compiledForm(f);
  if (!kernel)
    return {};
  std::vector<attn::HostArray> host;
  for (size_t i = 0; i < ins.size(); ++i)
    host.push_back(
        attn::ref::toHost(ins[i], i < 3 ? dtypeOf(f) : attn::DType::F32));
  auto out = kernel->run(host);
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  EXPECT_EQ(out->dtype, dtypeOf(f));
  return *attn::ref::fromHost(*out);
}

Tensor oracle(const Form &f, const std::vector<Tensor> &ins) {
  Program reference(ropeSource(f));
  EXPECT_TRUE(reference.module);
  if (!reference.module)
    return {};
  auto ref = attn::ref::evaluate(reference.main(), ins);
  EXPECT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  return ref ? *ref : Tensor();
}

std::string describe(const Form &f, const Case &c, uint64_t seed) {
  return f.target + ", D " + std::to_string(f.d) + " " + f.elt + " rope " +
         (f.rope.empty() ? "(half, all of D)" : f.rope) +
         (f.gate ? " + FoX" : "") + (f.mask.empty() ? "" : ", " + f.mask) +
         ", B " + std::to_string(c.b) + " Hq " + std::to_string(c.hq) + " Hk " +
         std::to_string(c.hk) + " T " + std::to_string(c.t) + " S " +
         std::to_string(c.s) + ", seed " + std::to_string(seed);
}

/// The GPU form vs the oracle: relative RMS <= 5e-3 and every row within
/// 2e-2 (bf16 q, k after rotation, P and the output: about 2^-9 each).
/// Returns the result.
Tensor expectMatches(const Form &f, const Case &c, uint64_t seed,
                     double fLo = 0.9) {
  std::string what = describe(f, c, seed);
  SCOPED_TRACE(what);
  std::vector<Tensor> ins = inputs(f, c, seed, fLo);
  Tensor ref = oracle(f, ins);
  Tensor got = runForm(f, ins);
  EXPECT_EQ(got.shape, ref.shape);
  if (got.shape != ref.shape)
    return got;
  double rms = attn::ref::relRmsError(got, ref);
  double worst = attn::ref::worstRowRelError(got, ref);
  std::cout << "[ rope gpu form ] " << what << ": rms " << rms << ", worst row "
            << worst << "\n";
  EXPECT_LE(rms, 5e-3);
  EXPECT_LE(worst, 2e-2);
  return got;
}

const std::vector<Case> kShapes = {
    {1, 2, 2, 100, 100}, // one tile and a partial one
    {2, 4, 2, 130, 130}, // GQA, batch 2
    {1, 4, 1, 37, 150},  // T < S: queries at S - T + i
};

/// Both styles, rope_dim < D (the rest copied), rope_offset and
/// rope_q_offset, positions near 1e5 (the f64 angles), on the mma.sync
/// (sm_90) and wgmma (sm_90a) forms.
TEST(RopeGpuFormOnCpu, StylesDimsAndOffsets) {
  uint64_t seed = attn::ref::freshSeed();
  for (const char *target : {"sm_90", "sm_90a"})
    for (const char *rope :
         {"", "rope_style interleaved rope_dim 32 rope_offset 7",
          "rope_dim 16 rope_q_offset 3",
          "rope_style interleaved rope_offset 100000"}) {
      Form f;
      f.target = target;
      f.rope = rope;
      for (const Case &c : kShapes)
        if (attn::test::sweepCase())
          expectMatches(f, c, ++seed);
    }
}

/// RoPE + FoX (the gate prefix kernel after the rope kernels), both
/// styles, rope_dim < D, strong gates, on sm_80 and sm_90a.
TEST(RopeGpuFormOnCpu, WithFox) {
  uint64_t seed = attn::ref::freshSeed();
  for (const char *target : {"sm_80", "sm_90a"})
    for (const char *rope :
         {"", "rope_style interleaved rope_dim 48 rope_offset 11"}) {
      Form f;
      f.target = target;
      f.rope = rope;
      f.gate = true;
      for (const Case &c : kShapes)
        for (double fLo : {0.9, 0.05})
          if (attn::test::sweepCase())
            expectMatches(f, c, ++seed, fLo);
    }
}

/// D = 128 in f16; mask none with T > S (queries at negative positions
/// S - T + i, the query table's rows below the keys'); a sliding window.
TEST(RopeGpuFormOnCpu, HeadDimsTypesAndMasks) {
  uint64_t seed = attn::ref::freshSeed();
  Form d128;
  d128.d = 128;
  d128.elt = "f16";
  d128.rope = "rope_dim 64";
  expectMatches(d128, {1, 2, 1, 150, 150}, ++seed);
  d128.gate = true;
  d128.target = "sm_90a";
  expectMatches(d128, {1, 2, 2, 67, 131}, ++seed);
  Form none;
  none.mask = "mask none";
  none.rope = "rope_style interleaved";
  expectMatches(none, {1, 2, 2, 90, 50}, ++seed);
  Form window;
  window.mask = "mask sliding_window window 40";
  window.rope = "rope_offset 5";
  expectMatches(window, {1, 2, 1, 300, 300}, ++seed);
}

/// The check tells the styles apart: the half-style oracle is far from the
/// interleaved result that matches its own oracle.
TEST(RopeGpuFormOnCpu, OtherStyleDoesNotMatch) {
  const uint64_t seed = attn::ref::freshSeed();
  Form inter;
  inter.rope = "rope_style interleaved";
  const Case c{1, 2, 2, 100, 100};
  Tensor got = expectMatches(inter, c, seed);
  Form half;
  Tensor other = oracle(half, inputs(half, c, seed));
  ASSERT_EQ(got.shape, other.shape);
  EXPECT_GT(attn::ref::relRmsError(got, other), 10 * 5e-3)
      << describe(inter, c, seed);
}

/// Causal with RoPE: changing the last key and value changes the last
/// output row and leaves every earlier row bit for bit as it was.
TEST(RopeGpuFormOnCpu, IsCausal) {
  const uint64_t seed = attn::ref::freshSeed();
  Form f;
  f.rope = "rope_dim 32 rope_offset 3";
  const int64_t t = 100, d = 64;
  std::vector<Tensor> ins = inputs(f, {1, 1, 1, t, t}, seed);
  Tensor before = runForm(f, ins);
  for (int64_t e = 0; e < d; ++e) {
    ins[1].data[(t - 1) * d + e] = 2.0 * (e % 2 ? 1 : -1); // k, bf16-exact
    ins[2].data[(t - 1) * d + e] = 3.0;                    // v
  }
  Tensor after = runForm(f, ins);
  ASSERT_EQ(before.data.size(), after.data.size());
  ASSERT_EQ(before.data.size(), static_cast<size_t>(t * d));
  bool lastChanged = false;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t e = 0; e < d; ++e) {
      double x = before.data[i * d + e], y = after.data[i * d + e];
      if (i < t - 1)
        ASSERT_EQ(x, y) << "row " << i << " saw a later key (seed " << seed
                        << ")";
      else
        lastChanged |= x != y;
    }
  EXPECT_TRUE(lastChanged) << "the last row ignored its own key (seed " << seed
                           << ")";
}

} // namespace
