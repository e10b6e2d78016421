//===- GradGpuFormCpuTest.cpp - the backward's GPU forms on the CPU -------===//
//
// The fused backward's kernels as attn-to-block builds them for a GPU
// (sm_90 mma.sync, sm_90a wgmma; 16-bit operands, the chip's roundings) run
// on the CPU through attn-block-strip-gpu, against the fp64 oracle's
// gradients with the GPU tests' bounds (fla's relative RMS criteria, the
// worst row within 5e-2 above ref::kGradRowFloor), and the CPU form in f32
// with dQ by reducing stores, with the CPU's bound. The saved state comes
// from the CPU training forward. Fresh inputs; failures print the seed.
//
//===----------------------------------------------------------------------===//

#include "BlockFormText.h"
#include "GradChecks.h"
#include "NonFiniteChecks.h"
#include "Sweep.h"

#include <functional>
#include <limits>

namespace {

using namespace attn::exec_test;
using namespace attn::test_util;

struct GradForm {
  std::string target;
  int64_t hq, hk, t, d;
  std::string pieces; // after `attn.attention %q, %k, %v`
  bool fox = false;
  std::string gradDq = "reduce"; // attn-to-block's grad-dq
  bool f32 = false;              // f32 q, k, v (the CPU form) or bf16
  bool packed = false; // cu_seqlens (random cuts; `pieces` a mask or RoPE)
};

std::string sourceOf(const GradForm &f) {
  std::string e = "x" + std::to_string(f.d) + (f.f32 ? "xf32>" : "xbf16>");
  std::string qo = "tensor<1x" + std::to_string(f.hq) + "x?" + e;
  std::string kv = "tensor<1x" + std::to_string(f.hk) + "x?" + e;
  std::string g = "tensor<1x" + std::to_string(f.hq) + "x?xf32>";
  std::string args = "%q: " + qo + ", %k: " + kv + ", %v: " + kv;
  std::string types = qo + ", " + kv + ", " + kv;
  if (f.fox) {
    args += ", %g: " + g;
    types += ", " + g;
  }
  if (f.packed) {
    args += ", %cu: tensor<?xi32>";
    types += ", tensor<?xi32>";
  }
  // RoPE's clauses come before the gate, a mask after it and the offsets.
  bool rope = f.pieces.rfind("rope", 0) == 0;
  return "func.func @main(" + args + ") -> " + qo + " {\n" +
         "  %o = attn.attention %q, %k, %v " + (rope ? f.pieces + " " : "") +
         (f.fox ? "gate(%g) " : "") + (f.packed ? "cu_seqlens(%cu) " : "") +
         (rope ? "" : f.pieces) + " : (" + types + ") -> " + qo +
         "\n  return %o : " + qo + "\n}\n";
}

/// attn-grad, then attn-to-block{target grad-dq}, of `source`, printed.
std::string backwardForm(const std::string &source, const std::string &target,
                         const std::string &gradDq) {
  mlir::attn::AttnToBlockOptions options;
  options.target = target;
  options.gradDq = gradDq;
  return passedText(source, [&](mlir::PassManager &pm) {
    pm.addPass(mlir::attn::createAttnGrad());
    pm.addPass(mlir::attn::createAttnToBlock(options));
  });
}

/// Sets non-finite values into the (rounded) inputs of a case.
using Poison = std::function<void(std::vector<attn::ref::Tensor> &)>;

/// The fused backward of `f` against the oracle's gradients. With
/// `poison`, each gradient must be non-finite exactly where the oracle's is
/// (docs/input-limits.md, "Non-finite values") and close elsewhere.
void expectFormMatchesOracle(const GradForm &f, uint64_t seed,
                             const Poison &poison = {}) {
  if (!attn::test::sweepCase())
    return;
  std::string source = sourceOf(f);
  std::string what = f.target + " grad-dq=" + f.gradDq + " " + source +
                     "seed " + std::to_string(seed);
  SCOPED_TRACE(what);
  std::string form = backwardForm(source, f.target, f.gradDq);
  ASSERT_FALSE(form.empty());
  ASSERT_NE(form.find("_grad_dkdv"), std::string::npos) << form;
  // dQ by the second walk or by reducing stores from the dkdv walk (FoX:
  // with its row sums of dS, column sums there).
  bool walk = f.gradDq == "walk";
  EXPECT_EQ(walk, form.find("_grad_dq(") != std::string::npos);
  EXPECT_EQ(walk, form.find("transpose_a") == std::string::npos);
  if (f.target == "sm_90a") {
    ASSERT_NE(form.find("#attn_block.nvmma_shared"), std::string::npos);
  }
  attn::CompileOptions bwdOptions;
  bwdOptions.pipeline = attn::Pipeline::Fused;
  bwdOptions.entry = "main_grad";
  auto backward = engine().compile(form, bwdOptions, f.target + " backward");
  ASSERT_TRUE(static_cast<bool>(backward))
      << llvm::toString(backward.takeError());
  auto pair = engine().compileTraining(source);
  ASSERT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());

  Program p(source);
  attn::ref::RandomSpec spec;
  spec.heads = f.hq;
  spec.seqLen = f.t;
  spec.seed = seed;
  spec.fLo = 0.5;
  spec.sequences = 5;
  auto inputs = attn::ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(inputs)) << llvm::toString(inputs.takeError());
  // The values the kernels take: q, k, v rounded to their type.
  const attn::DType elt = f.f32 ? attn::DType::F32 : attn::DType::BF16;
  auto typeOf = [&](size_t n) {
    bool offsets = f.packed && n + 1 == inputs->size();
    return n < 3 ? elt : offsets ? attn::DType::I32 : attn::DType::F32;
  };
  std::vector<HostArray> host;
  for (auto [n, x] : llvm::enumerate(*inputs)) {
    host.push_back(attn::ref::toHost(x, typeOf(n)));
    x = toTensor(host.back());
  }
  if (poison) {
    poison(*inputs);
    for (auto [n, x] : llvm::enumerate(*inputs))
      host[n] = attn::ref::toHost(x, typeOf(n));
  }
  auto fwd = pair->forward->runAll(host);
  ASSERT_TRUE(static_cast<bool>(fwd)) << llvm::toString(fwd.takeError());
  ASSERT_EQ(fwd->size(), 2u) << "the output and its LSE";
  HostArray dO =
      attn::ref::toHost(attn::ref::randomCotangent((*fwd)[0].shape, seed), elt);
  auto want = attn::ref::evaluateGrad(p.main(), *inputs, toTensor(dO));
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());

  std::vector<HostArray> args = host;
  args.insert(args.end(), fwd->begin(), fwd->end());
  args.push_back(dO);
  auto grads = (*backward)->runAll(args);
  ASSERT_TRUE(static_cast<bool>(grads)) << llvm::toString(grads.takeError());
  // One gradient per float argument (not cu_seqlens').
  ASSERT_EQ(grads->size(), inputs->size() - (f.packed ? 1 : 0));
  const char *names[] = {"dq", "dk", "dv", "dg"};
  int64_t nonFinite = 0;
  for (size_t n = 0; n < grads->size(); ++n) {
    ASSERT_TRUE((*want)[n].has_value());
    // f32: the CPU's bound (max relative error 1e-5).
    const attn::ref::ErrorBound &bound = f.f32    ? attn::ref::ErrorBound{}
                                         : n == 3 ? kGateGrad16
                                                  : kGrad16;
    std::string name = f.target + " " + names[n];
    if (poison)
      nonFinite += expectSameNonFiniteCells(toTensor((*grads)[n]), *(*want)[n],
                                            name, bound);
    else
      expectClose((*grads)[n], *(*want)[n], bound, name, "cpu");
  }
  if (poison)
    EXPECT_GT(nonFinite, 0) << "the poisoned inputs reach no gradient";
}

// Both chips' forms: tile edges, GQA, D = 128, the sliding window, FoX and
// RoPE (the inverse rotation of the kernels' f32 dq and dk), dQ by reducing
// stores and by the second walk, head dims the tiles pad.
TEST(GradGpuFormOnCpu, BackwardKernelsMatchOracle) {
  uint64_t seed = attn::ref::freshSeed();
  for (const char *target : {"sm_90", "sm_90a"})
    for (GradForm f : std::vector<GradForm>{
             {"", 2, 2, 65, 64, ""},
             {"", 4, 2, 130, 64, ""},
             {"", 2, 2, 100, 128, "mask sliding_window window 40"},
             {"", 2, 1, 90, 64, "rope(1.0e+04)", true},
             {"", 4, 2, 130, 64, "", true},
             {"", 2, 2, 100, 128, "", true, "walk"},
             {"", 2, 1, 130, 64, "rope(1.0e+04)"},
             {"", 4, 2, 100, 64, "", false, "walk"},
             // Head dims the tiles pad to 64 or 128 (gpuTileHeadDim).
             {"", 4, 2, 130, 96, ""},
             {"", 2, 2, 100, 96, "", true, "walk"},
             {"", 2, 1, 90, 32, "rope(1.0e+04)"},
             {"", 2, 2, 70, 40, "mask sliding_window window 30", false, "walk"},
         }) {
      f.target = target;
      expectFormMatchesOracle(f, ++seed);
    }
}

// Packed sequences (5 random cuts of T, empty ones possible): the masks of
// both walks and their bounds, plain and FoX, causal, windowed and (plain)
// without a mask, RoPE (positions restarting at each sequence, both table
// forms), GQA, dQ by reducing stores and by the walk, both chips' forms and
// the CPU's f32.
TEST(GradGpuFormOnCpu, PackedSequencesMatchOracle) {
  uint64_t seed = attn::ref::freshSeed();
  for (const char *target : {"sm_90", "sm_90a", "cpu"})
    for (GradForm f : std::vector<GradForm>{
             {"", 4, 2, 150, 64, "", false, "reduce", false, true},
             {"", 2, 2, 130, 64, "", true, "reduce", false, true},
             {"", 2, 1, 150, 64, "mask sliding_window window 37", true, "walk",
              false, true},
             {"", 2, 2, 100, 64, "", false, "walk", false, true},
             {"", 4, 2, 150, 64, "rope(1.0e+04)", true, "reduce", false, true},
             {"", 2, 2, 130, 64, "rope(1.0e+04) rope_style interleaved", false,
              "walk", false, true},
             {"", 4, 2, 150, 64, "mask none", false, "reduce", false, true},
             {"", 2, 2, 130, 64, "mask none", false, "walk", false, true},
         }) {
      f.target = target;
      f.f32 = f.target == "cpu";
      expectFormMatchesOracle(f, ++seed);
    }
}

// The CPU form (f32) with dQ (and FoX's row sums of dS) by reducing stores
// (atomic adds from the programs OpenMP runs at once): the CPU's 1e-5
// bound, as the walk's
// (GradPass.FusedFlashBackward).
TEST(GradGpuFormOnCpu, ReducingStoresOfTheCpuFormMatchOracle) {
  uint64_t seed = attn::ref::freshSeed();
  for (GradForm f : std::vector<GradForm>{
           {"cpu", 2, 2, 130, 64, ""},
           {"cpu", 4, 2, 100, 32, ""},
           {"cpu", 2, 2, 150, 64, "mask sliding_window window 40"},
           {"cpu", 2, 1, 130, 64, "rope(1.0e+04)"},
           {"cpu", 4, 2, 130, 64, "", true},
       }) {
    f.f32 = true;
    expectFormMatchesOracle(f, ++seed);
  }
}

// A NaN, +inf and -inf in three columns of v at one key t reach the
// gradients through the rows that see t only: the dS of a cell the mask
// hides is 0 (docs/input-limits.md, "Non-finite values"); on the CPU form,
// whose backward products skip the hidden cells' zeros, the same in q and
// k. Both chips' forms and the CPU's f32, causal and windowed, FoX (causal,
// not q: FoX's dg after t in its round is not there yet), dQ by the walk
// and by reducing stores; t on and off tile edges.
TEST(GradGpuFormOnCpu, NonFiniteValuesReachOnlyTheGradientsThatSeeThem) {
  uint64_t seed = attn::ref::freshSeed();
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  for (const char *target : {"sm_90", "sm_90a", "cpu"})
    for (GradForm f : std::vector<GradForm>{
             {"", 2, 1, 130, 64, ""},
             {"", 2, 2, 100, 64, "mask sliding_window window 40", false,
              "walk"},
             {"", 2, 1, 130, 64, "", true},
         })
      for (int64_t t : {0, 63, 90})
        for (int arg : {0, 1, 2}) {
          f.target = target;
          f.f32 = f.target == "cpu";
          // Key 63 (the last of a tile) for the window and FoX; q and k
          // on the CPU form; not q with FoX (its dg after t, as with a
          // window).
          if (((f.fox || f.gradDq == "walk") && t != 63) ||
              (arg != 2 && !f.f32) || (f.fox && arg == 0))
            continue;
          SCOPED_TRACE(
              std::string("qkv"[arg] + std::string(" non-finite at ")) +
              std::to_string(t));
          expectFormMatchesOracle(f, ++seed, [&](auto &ins) {
            for (auto [col, x] : {std::pair{1, nan}, {5, inf}, {9, -inf}})
              ins[arg].at(0, 0, t, col) = x;
          });
        }
}

} // namespace
