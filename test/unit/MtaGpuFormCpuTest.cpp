//===- MtaGpuFormCpuTest.cpp - MTA's GPU form on the CPU vs the oracle ----===//
//
// MTA's GPU form (attn-to-block{target=sm_90}, MtaToBlockGpu.cpp) run on the
// CPU through attn-block-strip-gpu against the fp64 oracle on fresh random
// inputs (seeds in the messages): kernels 1x1 to 6x11 and 65x17, groups 1, 2
// and H, lengths around the 64-row tile, pre-only and two-pass programs,
// FoX, GQA, T < S, D = 128, f16, packed sequences; q, k, v rounded to 16
// bits first. Outputs start as junk (MALLOC_PERTURB_). Properties: identity
// kernels and mixing are plain attention, causality, head permutations.
// docs/reference/testing.md.
//
//===----------------------------------------------------------------------===//

#include "BlockFormText.h"
#include "ExecutionHelpers.h"
#include "MtaSources.h"
#include "Sweep.h"

#include <iostream>
#include <map>

namespace {

using namespace attn::exec_test;

/// The compiled GPU form of `source` for `chip` (one compile per pair).
attn::Kernel *compiledForm(const std::string &source, const std::string &chip) {
  static std::map<std::string, std::shared_ptr<attn::Kernel>> cache;
  auto it = cache.find(chip + source);
  if (it != cache.end())
    return it->second.get();
  std::string form = blockFormText(source, chip);
  EXPECT_NE(form.find("attn_block.local_load"), std::string::npos)
      << source << form;
  EXPECT_NE(form.find("#attn_block.mma"), std::string::npos);
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  auto kernel = engine().compile(form, options, "mta-gpu-form");
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return (cache[chip + source] = *kernel).get();
}

Tensor runForm(const MtaForm &f, const std::vector<Tensor> &ins,
               const std::string &chip = "sm_90") {
  attn::Kernel *kernel = compiledForm(mtaSource(f), chip);
  if (!kernel)
    return {};
  auto out = kernel->run(mtaHostInputs(f, ins));
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  EXPECT_EQ(out->dtype, dtypeOf(f.elt));
  return *attn::ref::fromHost(*out);
}

/// The GPU form vs the oracle of `reference` (default: f's own source):
/// relative RMS <= 5e-3 and every row within 2e-2.
void expectMatches(const MtaForm &f, const std::vector<Tensor> &ins,
                   const std::string &what, const std::string &reference = "",
                   const std::string &chip = "sm_90") {
  SCOPED_TRACE(what);
  Program ref(reference.empty() ? mtaSource(f) : reference);
  ASSERT_TRUE(ref.module);
  auto want = attn::ref::evaluate(ref.main(), ins);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  Tensor got = runForm(f, ins, chip);
  ASSERT_EQ(got.shape, want->shape);
  double rms = attn::ref::relRmsError(got, *want);
  double worst = attn::ref::worstRowRelError(got, *want);
  std::cout << "[ mta gpu form ] " << what << ": rms " << rms << ", worst row "
            << worst << "\n";
  EXPECT_LE(rms, attn::ref::kHalfRmsBound);
  EXPECT_LE(worst, attn::ref::kHalfRowBound);
}

void check(const MtaForm &f, int64_t b, int64_t hq, int64_t hk, int64_t t,
           int64_t s, uint64_t seed, const std::string &chip = "sm_90") {
  if (!attn::test::sweepCase())
    return;
  std::string what = chip + ", " + describe(f) + ", B " + std::to_string(b) +
                     " Hq " + std::to_string(hq) + " Hk " + std::to_string(hk) +
                     " T " + std::to_string(t) + " S " + std::to_string(s) +
                     ", seed " + std::to_string(seed);
  expectMatches(f, mtaInputs(f, b, hq, hk, t, s, seed), what, "", chip);
}

const int kKernels[][2] = {{1, 1}, {2, 3}, {3, 5}, {6, 11}};

/// The released composition without RoPE (pre and post convs and mixes,
/// norm and gate) and the pre-only one, over the kernel and group sizes,
/// at the tile-boundary lengths.
TEST(MtaGpuFormOnCpu, KernelsGroupsAndLengths) {
  uint64_t seed = attn::ref::freshSeed();
  for (bool post : {false, true})
    for (auto [cq, ck] : kKernels)
      for (int ch : {1, 2, 0}) {
        MtaForm f;
        f.cq = cq;
        f.ck = ck;
        f.ch = ch;
        f.post = f.mixPost = f.norm = f.gate = post;
        for (int64_t t : {1, 5, 63, 64, 65})
          check(f, 1, 4, 4, t, t, ++seed);
      }
}

/// Longer sequences (several row tiles above the diagonal, the post halo's
/// row tile), the largest kernel the form takes, D = 128, Dv != D, f16.
TEST(MtaGpuFormOnCpu, LongerSequencesWideKernelsAndTypes) {
  uint64_t seed = attn::ref::freshSeed();
  for (bool post : {false, true}) {
    MtaForm f;
    f.post = f.mixPost = post;
    check(f, 1, 2, 2, 300, 300, ++seed);
    MtaForm wide = f;
    wide.cq = 65;
    wide.ck = 17;
    check(wide, 1, 2, 2, 200, 200, ++seed);
    MtaForm d128 = f;
    d128.d = d128.dv = 128;
    check(d128, 1, 2, 2, 130, 130, ++seed);
    MtaForm narrowV = f;
    narrowV.d = 128;
    narrowV.dv = 64;
    check(narrowV, 1, 2, 2, 100, 100, ++seed);
    MtaForm half = f;
    half.elt = "f16";
    check(half, 1, 2, 2, 100, 100, ++seed);
  }
}

/// Each piece alone, FoX, batch > 1, GQA and T < S (the Mask_0 diagonal
/// is shifted by S - T); the norm alone without a mask and windowed.
TEST(MtaGpuFormOnCpu, PiecesAndCompositions) {
  uint64_t seed = attn::ref::freshSeed();
  MtaForm none;
  none.pre = none.mixPre = none.post = none.mixPost = false;
  MtaForm f = none;
  f.pre = true;
  check(f, 2, 2, 2, 70, 70, ++seed); // pre conv only
  f = none;
  f.mixPre = true;
  check(f, 1, 4, 4, 70, 70, ++seed); // pre mix only
  f = none;
  f.post = true;
  check(f, 1, 2, 2, 70, 70, ++seed); // post conv only
  f = none;
  f.mixPost = true;
  f.ch = 2;
  check(f, 1, 4, 4, 70, 70, ++seed); // post mix only
  f = none;
  check(f, 2, 3, 3, 70, 70, ++seed); // the head norm with its gate only
  f = MtaForm();
  f.fox = true;
  check(f, 1, 4, 4, 130, 130, ++seed); // MTA + FoX
  f.scaled = true;
  f.post = f.mixPost = false;
  check(f, 1, 2, 2, 100, 100, ++seed);
  f = MtaForm();
  f.cq = 3;
  f.ck = 5;
  check(f, 1, 4, 2, 40, 100, ++seed); // GQA, T < S
  check(f, 1, 4, 2, 1, 9, ++seed);
  f.post = f.mixPost = false;
  check(f, 1, 4, 2, 70, 200, ++seed);
  // The norm alone fuses under any mask (MTA's convolutions and mixing
  // need the causal one).
  f = none;
  f.attrs = "mask none";
  check(f, 1, 2, 2, 90, 90, ++seed);
  f.attrs = "mask sliding_window window 50";
  check(f, 1, 2, 2, 150, 150, ++seed);
}

/// The released configuration with RoPE (q and k rotated by the rope
/// kernels first), with FoX too, D = 128.
TEST(MtaGpuFormOnCpu, WithRope) {
  uint64_t seed = attn::ref::freshSeed();
  MtaForm f;
  f.rope = true;
  check(f, 1, 4, 4, 65, 65, ++seed);
  check(f, 1, 2, 2, 300, 300, ++seed);
  f.fox = true;
  check(f, 1, 2, 2, 130, 130, ++seed);
  MtaForm d128;
  d128.rope = true;
  d128.d = d128.dv = 128;
  check(d128, 1, 2, 1, 70, 150, ++seed);
}

/// Packed sequences (random cuts of T into 3): the halos stop at each
/// sequence's start (query taps above it read nothing), in both stencil
/// forms (the tensor-core one on sm_90, the scratch taps of the widest
/// kernel), with RoPE and FoX, GQA.
TEST(MtaGpuFormOnCpu, PackedSequences) {
  uint64_t seed = attn::ref::freshSeed();
  MtaForm f;
  f.packed = true;
  check(f, 1, 4, 4, 70, 70, ++seed);
  check(f, 1, 2, 2, 300, 300, ++seed);
  MtaForm pre = f;
  pre.post = pre.mixPost = pre.norm = pre.gate = false;
  check(pre, 1, 2, 2, 200, 200, ++seed);
  MtaForm wide = f;
  wide.cq = 65;
  wide.ck = 17;
  check(wide, 1, 2, 2, 200, 200, ++seed);
  MtaForm rope = f;
  rope.rope = rope.fox = true;
  check(rope, 1, 4, 2, 130, 130, ++seed);
}

/// sm_80 (163 KB of shared memory): the released configuration takes the
/// tensor-core stencil in both passes (its output pass's buffers, 150 KB at
/// D = 128 with RoPE, hold scores from 32 rows above: MtaToBlockGpu.cpp's
/// coverRows); with the widest kernels (65 x 17: two row tiles above) the
/// output pass needs 192 KB for it and keeps the scratch taps, its LSE
/// pass takes the dots.
TEST(MtaGpuFormOnCpu, Sm80KeepsScratchTapsWhereSharedMemoryIsShort) {
  uint64_t seed = attn::ref::freshSeed();
  MtaForm f;
  f.rope = true;
  f.d = f.dv = 128;
  std::string form = blockFormText(mtaSource(f), "sm_80");
  EXPECT_NE(form.find("mta_toeplitz_post"), std::string::npos) << form;
  check(f, 1, 2, 2, 130, 130, ++seed, "sm_80");
  MtaForm wide = f;
  wide.cq = 65;
  wide.ck = 17;
  form = blockFormText(mtaSource(wide), "sm_80");
  EXPECT_NE(form.find("mta_toeplitz_pre"), std::string::npos) << form;
  EXPECT_EQ(form.find("mta_toeplitz_post"), std::string::npos) << form;
  check(wide, 1, 2, 2, 200, 200, ++seed, "sm_80");
  f.post = f.mixPost = false;
  check(f, 1, 2, 2, 100, 100, ++seed, "sm_80");
}

/// 16 heads: all mixed (the released configuration's c_h = H) and in
/// groups of 8, the head mixes' blocked path (c_h a multiple of 8).
TEST(MtaGpuFormOnCpu, SixteenHeadsMixedInGroupsOfEightAndSixteen) {
  uint64_t seed = attn::ref::freshSeed();
  MtaForm f;
  f.rope = true;
  check(f, 1, 16, 16, 70, 70, ++seed);
  MtaForm groups8;
  groups8.ch = 8;
  check(groups8, 1, 16, 16, 65, 65, ++seed);
  groups8.post = groups8.mixPost = false;
  check(groups8, 1, 16, 16, 65, 65, ++seed);
}

/// Identity kernels (a delta at (c_q - 1, centre)) and identity mixing
/// give plain attention (with the norm: plain attention normed).
TEST(MtaGpuFormOnCpu, IdentityIsPlainAttention) {
  uint64_t seed = attn::ref::freshSeed();
  MtaForm f;
  f.norm = f.gate = false;
  const int64_t h = 4, t = 150;
  std::vector<Tensor> ins = mtaInputs(f, 1, h, h, t, t, ++seed);
  for (size_t i = 3; i < ins.size(); ++i) {
    Tensor &x = ins[i];
    for (double &e : x.data)
      e = 0.0;
    if (x.shape.size() == 3) // [H, c_q, c_k]
      for (int64_t g = 0; g < x.shape[0]; ++g)
        x.data[(g * f.cq + f.cq - 1) * f.ck + f.ck / 2] = 1.0;
    else // [H, H]
      for (int64_t g = 0; g < x.shape[0]; ++g)
        x.data[g * x.shape[1] + g] = 1.0;
  }
  std::string plain = R"(
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Program ref(plain);
  ASSERT_TRUE(ref.module);
  auto want = attn::ref::evaluate(ref.main(), {ins[0], ins[1], ins[2]});
  ASSERT_TRUE(static_cast<bool>(want));
  Tensor got = runForm(f, ins);
  ASSERT_EQ(got.shape, want->shape);
  EXPECT_LE(attn::ref::relRmsError(got, *want), attn::ref::kHalfRmsBound)
      << "seed " << seed;
  EXPECT_LE(attn::ref::worstRowRelError(got, *want), attn::ref::kHalfRowBound)
      << "seed " << seed;
}

/// Changing token 100's q, k and v leaves every earlier output row of
/// every head bit for bit as it was (the convolutions reach no future
/// query or key) and changes row 100 and later ones.
TEST(MtaGpuFormOnCpu, IsCausal) {
  uint64_t seed = attn::ref::freshSeed();
  for (bool post : {false, true}) {
    MtaForm f;
    f.post = f.mixPost = post;
    const int64_t h = 2, t = 200, d = 64, at = 100;
    SCOPED_TRACE(describe(f) + ", seed " + std::to_string(seed + 1));
    std::vector<Tensor> ins = mtaInputs(f, 1, h, h, t, t, ++seed);
    Tensor before = runForm(f, ins);
    for (int64_t g = 0; g < h; ++g)
      for (int64_t e = 0; e < d; ++e)
        for (int i = 0; i < 3; ++i)
          ins[i].data[(g * t + at) * d + e] = e % 2 ? 1.5 : -2.0;
    Tensor after = runForm(f, ins);
    ASSERT_EQ(before.data.size(), after.data.size());
    for (int64_t g = 0; g < h; ++g) {
      for (int64_t r = 0; r < t; ++r) {
        bool same = true;
        for (int64_t e = 0; e < d; ++e)
          same &= before.data[(g * t + r) * d + e] ==
                  after.data[(g * t + r) * d + e];
        if (r < at) {
          EXPECT_TRUE(same) << "head " << g << " row " << r << " changed";
        } else if (r == at || r == t - 1) {
          EXPECT_FALSE(same) << "head " << g << " row " << r << " unchanged";
        }
      }
    }
  }
}

/// Permuting the heads of q, k, v, the kernels and both mixing weights
/// permutes the output heads: a head taking another head's kernel or
/// mixing row, or a group scratch indexed by the wrong head, breaks it. The
/// mixes sum the same terms in another order, so only f32 rounding (and the
/// 16-bit output's rounding of it) may differ.
TEST(MtaGpuFormOnCpu, PermutingHeadsPermutesOutputs) {
  uint64_t seed = attn::ref::freshSeed();
  MtaForm f; // all-head mixing before and after the softmax, norm + gate
  f.cq = 3;
  f.ck = 5;
  const int64_t h = 4, t = 90;
  std::vector<Tensor> ins = mtaInputs(f, 1, h, h, t, t, ++seed);
  std::vector<int64_t> perm = {2, 0, 3, 1}; // new head a = old head perm[a]
  std::vector<Tensor> permuted = ins;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Tensor &x = ins[i];
    Tensor &y = permuted[i];
    if (x.shape.size() == 4 || x.shape.size() == 3) { // q, k, v; kernels
      int64_t inner = x.data.size() / h;
      for (int64_t g = 0; g < h; ++g)
        std::copy_n(x.data.begin() + perm[g] * inner, inner,
                    y.data.begin() + g * inner);
    } else if (x.shape.size() == 2) { // mixing weights [H, H]
      for (int64_t r = 0; r < h; ++r)
        for (int64_t c = 0; c < h; ++c)
          y.data[r * h + c] = x.data[perm[r] * h + perm[c]];
    }
  }
  Tensor base = runForm(f, ins);
  Tensor got = runForm(f, permuted);
  ASSERT_EQ(base.shape, got.shape);
  Tensor expect = base;
  int64_t inner = base.data.size() / h;
  for (int64_t g = 0; g < h; ++g)
    std::copy_n(base.data.begin() + perm[g] * inner, inner,
                expect.data.begin() + g * inner);
  EXPECT_LE(attn::ref::relRmsError(got, expect), 1e-3) << "seed " << seed;
  EXPECT_LE(attn::ref::worstRowRelError(got, expect), 5e-3) << "seed " << seed;
  // Not trivially satisfied: the heads differ.
  EXPECT_GT(attn::ref::relRmsError(got, base), 1e-1) << "seed " << seed;
}

} // namespace
