//===- GpuFormCpuTest.cpp - the GPU form of the block program on the CPU --===//
//
// How the GPU form of the block program is tested without a GPU: a flash
// kernel written as an sm_80 kernel states it (layouts, shared buffers, a
// two-stage cp.async pipeline, barriers; test/passes/Inputs/
// flash-gpu-form.mlir) goes through attn-to-cpu, whose
// attn-block-strip-gpu gives every GPU op its sequential meaning, and runs;
// the result is checked against the fp64 oracle of the attn.attention the
// kernel implements, on fresh random inputs (seeds in the messages). The
// same for the forms attn-to-block generates (sm_90 mma.sync, sm_90a
// wgmma), also over every mask and the tile boundaries where its masked
// and unmasked key tiles meet.
//
//===----------------------------------------------------------------------===//

#include "BlockFormText.h"
#include "ExecutionHelpers.h"
#include "NonFiniteChecks.h"
#include "Sweep.h"
#include "attn/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <limits>

namespace {

using namespace attn::exec_test;

/// What the kernel computes: causal attention, scale 1/sqrt(64), GQA.
const char *kAttention = R"(
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";

std::string gpuFormKernel() {
  std::ifstream f(std::string(ATTN_SOURCE_DIR) +
                  "/test/passes/Inputs/flash-gpu-form.mlir");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The flash kernel attn-to-block builds for `target` from `attention` (the
/// sm_90a one: wgmma layouts, nvmma_shared buffers, proxy fences), as text.
std::string generatedGpuForm(const std::string &target,
                             const std::string &attention = kAttention,
                             int64_t warps = 4, int64_t blockN = 64) {
  return blockFormText(attention, target, warps, blockN);
}

std::shared_ptr<attn::Kernel>
compileGpuForm(const std::string &src = gpuFormKernel(),
               const std::string &name = "flash-gpu-form.mlir") {
  EXPECT_FALSE(src.empty()) << name;
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  auto kernel = engine().compile(src, options, name);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return nullptr;
  }
  return *kernel;
}

/// q, k, v rounded to bf16 (so only the kernel's own rounding is measured).
std::vector<Tensor> inputs(int64_t b, int64_t hq, int64_t hk, int64_t t,
                           int64_t s, uint64_t seed) {
  std::vector<Tensor> ins = qkv(b, hq, hk, t, s, 64, 64, seed);
  for (Tensor &x : ins)
    x = *attn::ref::fromHost(attn::ref::toHost(x, attn::DType::BF16));
  return ins;
}

Tensor runBf16(attn::Kernel &kernel, const std::vector<Tensor> &ins) {
  auto out = kernel.run(toHost(ins, attn::DType::BF16));
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  EXPECT_EQ(out->dtype, attn::DType::BF16);
  return *attn::ref::fromHost(*out);
}

/// `ins` as the kernels take them (4-D tensors in bf16, the rest f32),
/// appended to `host`; returns the values they hold, the oracle's inputs.
std::vector<Tensor> kernelInputs(const std::vector<Tensor> &ins,
                                 std::vector<attn::HostArray> &host) {
  std::vector<Tensor> rounded;
  for (const Tensor &x : ins) {
    attn::DType dt = x.shape.size() == 4 ? attn::DType::BF16 : attn::DType::F32;
    host.push_back(attn::ref::toHost(x, dt));
    rounded.push_back(*attn::ref::fromHost(host.back()));
  }
  return rounded;
}

/// `kernel` run on `host` against the oracle of `reference` on `exact`
/// (the values `host` holds): relative RMS <= 5e-3 and every row within
/// 2e-2 (a bf16 output and a bf16 P: about 2^-9 relative each).
void expectRunMatchesOracle(attn::Kernel &kernel, mlir::func::FuncOp reference,
                            const std::vector<Tensor> &exact,
                            const std::vector<attn::HostArray> &host,
                            const std::string &what) {
  auto ref = attn::ref::evaluate(reference, exact);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  auto out = kernel.run(host);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  Tensor got = *attn::ref::fromHost(*out);
  ASSERT_EQ(got.shape, ref->shape) << what;
  EXPECT_LE(attn::ref::relRmsError(got, *ref), 5e-3) << what;
  EXPECT_LE(attn::ref::worstRowRelError(got, *ref), 2e-2) << what;
}

struct Shape {
  int64_t b, hq, hk, t, s;
};

void expectMatchesOracle(attn::Kernel &kernel, uint64_t seed) {
  Program reference(kAttention);
  ASSERT_TRUE(reference.module);
  // One tile and a partial one, GQA over several tiles, T < S (queries are
  // the last T positions, the first query tile starts mid-way), one tile.
  for (Shape c : std::vector<Shape>{{1, 2, 2, 100, 100},
                                    {2, 4, 2, 130, 130},
                                    {1, 2, 1, 37, 150},
                                    {1, 1, 1, 64, 64}}) {
    ++seed;
    if (!attn::test::sweepCase())
      continue;
    std::vector<Tensor> ins = inputs(c.b, c.hq, c.hk, c.t, c.s, seed);
    auto ref = attn::ref::evaluate(reference.main(), ins);
    ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
    Tensor got = runBf16(kernel, ins);
    ASSERT_EQ(got.shape, ref->shape);
    std::string what = "B " + std::to_string(c.b) + " Hq " +
                       std::to_string(c.hq) + " Hk " + std::to_string(c.hk) +
                       " T " + std::to_string(c.t) + " S " +
                       std::to_string(c.s) + " seed " + std::to_string(seed);
    // bf16 output and bf16 P (the mma operand): about 2^-9 relative each.
    EXPECT_LE(attn::ref::relRmsError(got, *ref), 5e-3) << what;
    EXPECT_LE(attn::ref::relError(got, *ref), 2e-2) << what;
  }
}

TEST(GpuFormOnCpu, FlashKernelMatchesOracle) {
  std::shared_ptr<attn::Kernel> kernel = compileGpuForm();
  ASSERT_TRUE(kernel);
  expectMatchesOracle(*kernel, 2600);
}

/// attn-to-block's own sm_90a (wgmma) form of the same attention: its
/// in-place shared operands, accumulator layouts and row-slice conversions
/// mean the same on the CPU.
TEST(GpuFormOnCpu, GeneratedWgmmaKernelMatchesOracle) {
  std::string src = generatedGpuForm("sm_90a");
  ASSERT_NE(src.find("#attn_block.nvmma_shared"), std::string::npos) << src;
  ASSERT_NE(src.find("attn_block.fence_async_shared"), std::string::npos);
  std::shared_ptr<attn::Kernel> kernel =
      compileGpuForm(src, "attn-to-block{target=sm_90a}");
  ASSERT_TRUE(kernel);
  expectMatchesOracle(*kernel, 2800);
}

/// Packed sequences (cu_seqlens) in the generated GPU forms (mma.sync and
/// wgmma), plain and FoX, causal and windowed, GQA, vs the oracle: one
/// sequence; empty and one-token sequences with boundaries inside tiles;
/// many short sequences in one tile; random cuts.
TEST(GpuFormOnCpu, PackedSequences) {
  uint64_t seed = attn::ref::freshSeed();
  const std::string t = "tensor<?x?x?x64xbf16>", gt = "tensor<?x?x?xf32>";
  const int64_t len = 150;
  std::vector<std::vector<double>> cuts = {
      {0, len}, {0, 1, 1, 70, 71, 150}, {0, 2, 3, 5, 8, 13, 21, 34, 55, 150}};
  // Without a mask a query sees its whole sequence. RoPE (causal):
  // positions restart at each sequence, in the table
  // kernel's scalar form (interleaved) and its tile form (half).
  for (const char *target : {"sm_80", "sm_90a"})
    for (bool fox : {false, true})
      for (std::string mask :
           {"", "mask sliding_window window 37", "mask none", "rope"}) {
        if (fox && mask == "mask none")
          continue; // the gate needs a mask
        std::string rope;
        if (mask == "rope") {
          rope =
              fox ? "rope(1.0e+04) " : "rope(1.0e+04) rope_style interleaved ";
          mask.clear();
        }
        std::string src =
            "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
            (fox ? ", %g: " + gt : "") + ", %cu: tensor<?xi32>) -> " + t +
            " {\n  %o = attn.attention %q, %k, %v " + rope +
            (fox ? "gate(%g) " : "") + "cu_seqlens(%cu) " + mask + " : (" + t +
            ", " + t + ", " + t + (fox ? ", " + gt : "") +
            ", tensor<?xi32>) -> " + t + "\n  return %o : " + t + "\n}\n";
        std::string form = generatedGpuForm(target, src);
        ASSERT_NE(form.find("memref<?xi32>"), std::string::npos) << form;
        std::shared_ptr<attn::Kernel> kernel =
            compileGpuForm(form, std::string("packed ") + target);
        ASSERT_TRUE(kernel);
        Program reference(src);
        ASSERT_TRUE(reference.module);
        for (size_t c = 0; c <= cuts.size(); ++c) {
          ++seed;
          if (!attn::test::sweepCase())
            continue;
          attn::ref::RandomSpec spec;
          spec.batch = 2;
          spec.heads = 4;
          spec.seqLen = len;
          spec.fLo = 0.5;
          spec.seed = seed;
          auto ins = attn::ref::randomInputs(reference.main(), spec);
          ASSERT_TRUE(static_cast<bool>(ins))
              << llvm::toString(ins.takeError());
          // GQA: k and v with 2 heads; the listed cuts, then random ones.
          std::vector<Tensor> q = qkv(2, 4, 2, len, len, 64, 64, seed);
          for (int i = 0; i < 3; ++i)
            (*ins)[i] = q[i];
          if (c < cuts.size())
            ins->back() =
                Tensor({static_cast<int64_t>(cuts[c].size())}, cuts[c]);
          std::vector<attn::HostArray> host;
          for (size_t i = 0; i < ins->size(); ++i) {
            attn::DType dt = i < 3                 ? attn::DType::BF16
                             : i + 1 < ins->size() ? attn::DType::F32
                                                   : attn::DType::I32;
            host.push_back(attn::ref::toHost((*ins)[i], dt));
            if (i < 3)
              (*ins)[i] = *attn::ref::fromHost(host.back());
          }
          expectRunMatchesOracle(*kernel, reference.main(), *ins, host,
                                 std::string(target) + (fox ? " fox " : " ") +
                                     rope + mask + " cuts " +
                                     std::to_string(c) + " seed " +
                                     std::to_string(seed));
        }
      }
}

/// The generated GPU forms (mma.sync and wgmma) over the masks and the
/// tile-boundary cases that their masked / unmasked key tiles tell apart.
TEST(GpuFormOnCpu, GeneratedKernelsOverMasks) {
  struct Case {
    const char *mask; // attn.attention's mask clause
    Shape shape;
  };
  // Causal over several tiles with a partial last one, T < S (the first
  // query tile starts mid-key-tile), no mask past a partial S, sliding
  // windows narrower than a tile and wider than two (the window's lower
  // edge crosses tiles: the unmasked middle tiles skip the mask's scf.if),
  // GQA.
  const std::vector<Case> cases = {
      {"", {1, 2, 2, 200, 200}},
      {"", {1, 2, 1, 37, 150}},
      {"mask none", {2, 2, 2, 130, 130}},
      {"mask none", {1, 1, 1, 50, 90}},
      {"mask sliding_window window 40", {1, 2, 2, 300, 300}},
      {"mask sliding_window window 150", {1, 2, 1, 333, 333}},
  };
  uint64_t seed = attn::ref::freshSeed();
  for (const char *target : {"sm_90", "sm_90a"})
    for (const Case &c : cases) {
      ++seed;
      std::string attention = kAttention;
      if (*c.mask)
        attention.insert(attention.find(" : (tensor"),
                         std::string(" ") + c.mask);
      std::string src = generatedGpuForm(target, attention);
      ASSERT_NE(src.find("attn_block.async_copy"), std::string::npos)
          << target << "\n"
          << attention;
      std::shared_ptr<attn::Kernel> kernel = compileGpuForm(
          src, std::string("attn-to-block{target=") + target + "}");
      ASSERT_TRUE(kernel);
      Program reference(attention);
      ASSERT_TRUE(reference.module);
      const Shape &sh = c.shape;
      std::vector<Tensor> ins = inputs(sh.b, sh.hq, sh.hk, sh.t, sh.s, seed);
      auto ref = attn::ref::evaluate(reference.main(), ins);
      ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
      Tensor got = runBf16(*kernel, ins);
      ASSERT_EQ(got.shape, ref->shape);
      std::string what =
          std::string(target) + ", " + (*c.mask ? c.mask : "causal") + ", B " +
          std::to_string(sh.b) + " Hq " + std::to_string(sh.hq) + " Hk " +
          std::to_string(sh.hk) + " T " + std::to_string(sh.t) + " S " +
          std::to_string(sh.s) + ", seed " + std::to_string(seed);
      EXPECT_LE(attn::ref::relRmsError(got, *ref), 5e-3) << what;
      EXPECT_LE(attn::ref::worstRowRelError(got, *ref), 2e-2) << what;
    }
}

/// The last key reaches the last query only: changing it changes the last
/// output row and leaves every earlier row bit for bit as it was.
TEST(GpuFormOnCpu, FlashKernelIsCausal) {
  std::shared_ptr<attn::Kernel> kernel = compileGpuForm();
  ASSERT_TRUE(kernel);
  const int64_t t = 100, d = 64;
  const uint64_t seed = 2700;
  std::vector<Tensor> ins = inputs(1, 1, 1, t, t, seed);
  Tensor before = runBf16(*kernel, ins);
  for (int64_t e = 0; e < d; ++e) {
    ins[1].data[(t - 1) * d + e] = 2.0 * (e % 2 ? 1 : -1); // k, bf16-exact
    ins[2].data[(t - 1) * d + e] = 3.0;                    // v
  }
  Tensor after = runBf16(*kernel, ins);
  ASSERT_EQ(before.data.size(), after.data.size());
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

/// FoX written as attn.attention (scale 1/8, GQA 4 -> 2).
const char *kFox = R"(
func.func @main(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v gate(%g) : (tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
})";

/// The generated GPU form of FoX (bias G'_j - G'_i from G' in the row and
/// column slices of the accumulator) on the CPU vs the oracle: partial
/// tiles, T < S, strong gates (the bias spans many log2 units in a tile).
void expectFoxFormMatchesOracle(const char *target, int64_t warps = 4,
                                int64_t blockN = 64);

/// Both GPU forms (sm_80 mma.sync, sm_90a wgmma; with G' from
/// launchGatePrefix, the gate prologue's stand-in under attn-to-block).
TEST(GpuFormOnCpu, GeneratedFoxKernelMatchesOracle) {
  for (const char *target : {"sm_80", "sm_90a"})
    expectFoxFormMatchesOracle(target);
}

/// warps=8 block-n=128 (attn-to-block's warps
/// option): 128 query rows a program, two warpgroups on sm_90a, FoX's
/// records written per 64 keys and read per 128-key tile;
/// plain attention across a sliding window whose walk starts mid-tile.
TEST(GpuFormOnCpu, GeneratedKernelsWithEightWarps) {
  for (const char *target : {"sm_90", "sm_90a"})
    expectFoxFormMatchesOracle(target, 8, 128);
  uint64_t seed = attn::ref::freshSeed();
  std::string attention = kAttention;
  attention.insert(attention.find(" : (tensor"),
                   " mask sliding_window window 150");
  for (const char *target : {"sm_90", "sm_90a"}) {
    std::string src = generatedGpuForm(target, attention, 8, 128);
    ASSERT_NE(src.find("attn_block.num_warps = 8"), std::string::npos) << src;
    std::shared_ptr<attn::Kernel> kernel = compileGpuForm(
        src, std::string("attn-to-block{target=") + target + " warps=8}");
    ASSERT_TRUE(kernel);
    Program reference(attention);
    ASSERT_TRUE(reference.module);
    for (Shape sh :
         std::vector<Shape>{{1, 2, 1, 333, 333}, {2, 2, 2, 70, 300}}) {
      ++seed;
      if (!attn::test::sweepCase())
        continue;
      std::vector<Tensor> ins = inputs(sh.b, sh.hq, sh.hk, sh.t, sh.s, seed);
      auto ref = attn::ref::evaluate(reference.main(), ins);
      ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
      Tensor got = runBf16(*kernel, ins);
      ASSERT_EQ(got.shape, ref->shape);
      std::string what = std::string(target) + " warps 8 block-n 128, T " +
                         std::to_string(sh.t) + " S " + std::to_string(sh.s) +
                         ", seed " + std::to_string(seed);
      EXPECT_LE(attn::ref::relRmsError(got, *ref), 5e-3) << what;
      EXPECT_LE(attn::ref::worstRowRelError(got, *ref), 2e-2) << what;
    }
  }
}

void expectFoxFormMatchesOracle(const char *target, int64_t warps,
                                int64_t blockN) {
  std::string form = generatedGpuForm(target, kFox, warps, blockN);
  ASSERT_NE(form.find("attn_block.local_alloc"), std::string::npos) << form;
  // The bias comes from the records kernel (FlashToBlockGpu.cpp).
  ASSERT_NE(form.find("_fox_records"), std::string::npos) << form;
  std::shared_ptr<attn::Kernel> kernel =
      compileGpuForm(form, std::string("fox-gpu-form ") + target);
  ASSERT_TRUE(kernel);
  Program reference(kFox);
  ASSERT_TRUE(reference.module);
  uint64_t seed = attn::ref::freshSeed();
  // The last shapes put the queries after a gate-prefix round of 2048
  // keys and a partial one (T << S), at one key, and after 16K keys: there
  // G' / c, whose bf16 pieces the bias dot subtracts, is ~1e5 with strong
  // decay, and the bias of the keys that count is still to f32's digits.
  for (Shape c : std::vector<Shape>{{1, 4, 2, 100, 100},
                                    {2, 4, 2, 130, 130},
                                    {1, 4, 2, 37, 150},
                                    {1, 4, 2, 3, 2049},
                                    {1, 4, 2, 1, 1},
                                    {1, 4, 2, 64, 16384}}) {
    for (double fLo : {0.9, 0.05}) {
      ++seed;
      if (!attn::test::sweepCase())
        continue;
      attn::ref::RandomSpec spec;
      spec.batch = c.b;
      spec.heads = c.hq;
      spec.seqLen = c.s;
      spec.fLo = fLo;
      spec.seed = seed;
      auto ins = attn::ref::randomInputs(reference.main(), spec);
      ASSERT_TRUE(static_cast<bool>(ins)) << llvm::toString(ins.takeError());
      std::vector<Tensor> q = qkv(c.b, c.hq, c.hk, c.t, c.s, 64, 64, seed);
      (*ins)[0] = q[0]; // T query rows (randomInputs draws S of them)
      std::vector<attn::HostArray> host;
      std::vector<Tensor> rounded = kernelInputs(*ins, host);
      expectRunMatchesOracle(
          *kernel, reference.main(), rounded, host,
          std::string(target) + ", B " + std::to_string(c.b) + " T " +
              std::to_string(c.t) + " S " + std::to_string(c.s) + " f > " +
              std::to_string(fLo) + " seed " + std::to_string(seed));
    }
  }
}

/// Head dims that are not multiples of 64 (the kernels' tiles pad them to
/// one: gpuTileHeadDim), D != Dv, plain causal, FoX (a forget gate) and
/// RoPE, GQA, a partial last tile and T < S, on both GPU forms, vs the
/// oracle on bf16-rounded inputs.
TEST(GpuFormOnCpu, GeneratedKernelsOverHeadDims) {
  struct Dims {
    int64_t d, dv;
  };
  const char *kProgram = R"(
func.func @main(%q: tensor<?x?x?x$Dxbf16>, %k: tensor<?x?x?x$Dxbf16>, %v: tensor<?x?x?x$Vxbf16>$GARG) -> tensor<?x?x?x$Vxbf16> {
  %o = attn.attention %q, %k, %v $ATTRS : (tensor<?x?x?x$Dxbf16>, tensor<?x?x?x$Dxbf16>, tensor<?x?x?x$Vxbf16>$GTYPE) -> tensor<?x?x?x$Vxbf16>
  return %o : tensor<?x?x?x$Vxbf16>
})";
  uint64_t seed = attn::ref::freshSeed();
  for (const char *target : {"sm_90", "sm_90a"})
    for (Dims dims : {Dims{32, 32}, Dims{96, 96}, Dims{160, 160}, Dims{96, 32},
                      Dims{40, 200}})
      for (const char *variant : {"plain", "fox", "rope"}) {
        const bool fox = std::string(variant) == "fox";
        std::string src =
            subst(kProgram, {{"$D", std::to_string(dims.d)},
                             {"$V", std::to_string(dims.dv)},
                             {"$GARG", fox ? ", %g: tensor<?x?x?xf32>" : ""},
                             {"$GTYPE", fox ? ", tensor<?x?x?xf32>" : ""},
                             {"$ATTRS", fox ? "gate(%g)"
                                        : std::string(variant) == "rope"
                                            ? "rope(1.000000e+04)"
                                            : ""}});
        for (Shape c :
             std::vector<Shape>{{1, 4, 2, 130, 130}, {1, 2, 1, 37, 150}}) {
          ++seed;
          if (!attn::test::sweepCase())
            continue;
          std::string what = std::string(target) + " " + variant + " D " +
                             std::to_string(dims.d) + " Dv " +
                             std::to_string(dims.dv) + ", T " +
                             std::to_string(c.t) + " S " + std::to_string(c.s) +
                             ", seed " + std::to_string(seed);
          SCOPED_TRACE(what);
          std::string form = generatedGpuForm(target, src);
          ASSERT_NE(form.find("attn_block.async_copy"), std::string::npos)
              << src;
          std::shared_ptr<attn::Kernel> kernel = compileGpuForm(form, what);
          ASSERT_TRUE(kernel);
          Program reference(src);
          ASSERT_TRUE(reference.module);
          attn::ref::RandomSpec spec;
          spec.batch = c.b;
          spec.heads = c.hq;
          spec.seqLen = c.s;
          spec.seed = seed;
          auto ins = attn::ref::randomInputs(reference.main(), spec);
          ASSERT_TRUE(static_cast<bool>(ins))
              << llvm::toString(ins.takeError());
          std::vector<Tensor> q =
              qkv(c.b, c.hq, c.hk, c.t, c.s, dims.d, dims.dv, seed);
          for (int i = 0; i < 3; ++i)
            (*ins)[i] = q[i]; // T query rows, Hk KV heads
          std::vector<attn::HostArray> host;
          std::vector<Tensor> rounded = kernelInputs(*ins, host);
          expectRunMatchesOracle(*kernel, reference.main(), rounded, host,
                                 what);
        }
      }
}

/// docs/input-limits.md, "Non-finite values": a NaN or inf in v at key t
/// reaches exactly the (row, column) cells that see t in the generated GPU
/// forms too, whose main kernel multiplies P by V and marks the rows that
/// come out non-finite, and whose redo kernel (mma.sync, skip_zero_a)
/// writes those rows again (FlashRows). Causal on both forms, no mask, and
/// a window with two warpgroups and 128-key tiles; t at the edges of tiles.
TEST(GpuFormOnCpu, NonFiniteValuesReachOnlyTheCellsThatSeeThem) {
  struct Form {
    const char *target, *attrs;
    int64_t warps, blockN;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  uint64_t seed = attn::ref::freshSeed();
  for (Form f : {Form{"sm_90", "", 4, 64}, Form{"sm_90a", "", 4, 64},
                 Form{"sm_90a", "mask sliding_window window 40", 8, 128},
                 Form{"sm_90", "mask none", 4, 64}}) {
    std::string attention = kAttention;
    if (*f.attrs)
      attention.insert(attention.find(" : (tensor"),
                       std::string(" ") + f.attrs);
    std::string form = std::string(f.target) + " warps " +
                       std::to_string(f.warps) + " " + f.attrs;
    std::string src = generatedGpuForm(f.target, attention, f.warps, f.blockN);
    ASSERT_NE(src.find("_attention_nonfinite_rows"), std::string::npos) << src;
    std::shared_ptr<attn::Kernel> kernel = compileGpuForm(src, form);
    ASSERT_TRUE(kernel);
    Program reference(attention);
    ASSERT_TRUE(reference.module);
    // T = 1100: the second kernel's second program (1024 rows each).
    for (auto [len, t] : {std::pair<int64_t, int64_t>{200, 0},
                          {200, 63},
                          {200, 64},
                          {200, 100},
                          {200, 199},
                          {1100, 1050}}) {
      ++seed;
      if (!attn::test::sweepCase())
        continue;
      std::string what = form + ", T " + std::to_string(len) +
                         ", v non-finite at key " + std::to_string(t) +
                         ", seed " + std::to_string(seed);
      std::vector<Tensor> ins = inputs(1, 2, 1, len, len, seed);
      const int64_t d = 64;
      // Key t of the one KV head: NaN, +inf and -inf in three columns.
      ins[2].data[t * d + 1] = nan;
      ins[2].data[t * d + 5] = inf;
      ins[2].data[t * d + 9] = -inf;
      auto ref = attn::ref::evaluate(reference.main(), ins);
      ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
      Tensor got = runBf16(*kernel, ins);
      EXPECT_GT(attn::test_util::expectSameNonFiniteCells(got, *ref, what), 0)
          << what;
    }
  }
}

} // namespace
