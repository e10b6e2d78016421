//===- GpuAttentionTest.cpp - GPU kernels vs the fp64 oracle --------------===//
//
// attn.attention programs compiled by the GPU backend (attn-to-gpu through
// the Engine with device cuda) and run on fresh random inputs, compared with
// the fp64 oracle on the same bf16/f16-rounded inputs: relative RMS error
// <= 5e-3. The output buffer is poisoned with NaN before each run (the
// runtime fills it), so an unwritten row fails. Without a GPU every case
// skips with a message. Compilation-only cases (PTX for sm_80/sm_90, the
// diagnostics for unsupported programs) run everywhere.
//
//===----------------------------------------------------------------------===//

#include "GpuAttentionCases.h"
#include "GpuEngine.h"
#include "NonFiniteChecks.h"
#include "ProgramOracle.h"
#include "attn/CudaDriver.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace {

using namespace attn::gpu_test;
using attn::ref::freshSeed;

/// `src` (case `c`) compiled with `shape` and run on `host` matches the
/// oracle's `ref`: every output finite (the runtime poisons the output),
/// relative RMS <= 5e-3 and every row's relative error <= 2e-2.
void expectMatchesOracle(attn::Engine &engine, const Case &c,
                         const std::string &src,
                         const std::vector<HostArray> &host, const Tensor &ref,
                         const attn::GpuKernelOptions &shape, uint64_t seed) {
  attn::CompileOptions opts;
  opts.gpu = shape;
  auto kernel = engine.compile(src, opts);
  if (!kernel) {
    // Two warpgroups with 128-key tiles hold twice the rows in shared
    // memory: wide head dims do not fit, which the launch plan says.
    std::string why = llvm::toString(kernel.takeError());
    ASSERT_TRUE(shape.warps == 8 &&
                why.find("bytes of shared memory") != std::string::npos)
        << why;
    std::printf("[ gpu ] %s T=%lld D=%lld: warps 8 block-n 128 refused: %s\n",
                c.variant.c_str(), static_cast<long long>(c.T),
                static_cast<long long>(c.D), why.c_str());
    return;
  }
  ASSERT_EQ((*kernel)->device(), attn::Device::CUDA);
  std::string what = "?";
  for (const std::string &r : (*kernel)->remarks())
    if (llvm::StringRef(r).starts_with("GPU kernel: "))
      what = r.substr(12);
  auto out = (*kernel)->run(host);
  ASSERT_TRUE(static_cast<bool>(out))
      << what << ": " << llvm::toString(out.takeError());
  auto got = attn::ref::fromHost(*out);
  ASSERT_TRUE(static_cast<bool>(got));
  ASSERT_EQ(got->shape, ref.shape);
  size_t bad = 0;
  for (double x : got->data)
    bad += !std::isfinite(x);
  EXPECT_EQ(bad, 0u) << what << ": non-finite outputs (unwritten rows?)";
  double err = attn::ref::relRmsError(*got, ref);
  EXPECT_LE(err, 5e-3) << what << ", seed " << seed << "\n" << src;
  int64_t row = -1;
  double rowErr = attn::ref::worstRowRelError(*got, ref, &row);
  EXPECT_LE(rowErr, 2e-2) << what << ": worst row " << row << ", seed " << seed
                          << "\n"
                          << src;
  std::printf("[ gpu ] %s T=%lld D=%lld (%s): relative RMS error %.3e, "
              "worst row %.3e\n",
              c.variant.c_str(), static_cast<long long>(c.T),
              static_cast<long long>(c.D), what.c_str(), err, rowErr);
}

/// The default kernels, then on sm_90 devices the mma.sync form (sm_90)
/// and the wgmma form with two warpgroups and 128-key tiles.
std::vector<attn::GpuKernelOptions> kernelShapes(attn::Engine &engine) {
  std::vector<attn::GpuKernelOptions> shapes = {{}};
  if (engine.gpuArch() == "sm_90") {
    attn::GpuKernelOptions mma;
    mma.chip = "sm_90";
    shapes.push_back(mma);
    attn::GpuKernelOptions wg;
    wg.chip = "sm_90a";
    wg.warps = 8;
    wg.blockN = 128;
    shapes.push_back(wg);
  }
  return shapes;
}

class GpuAttention : public ::testing::TestWithParam<Case> {};

TEST_P(GpuAttention, MatchesOracle) {
  const Case &c = GetParam();
  // The program must parse and verify everywhere (CI has no GPU).
  std::string src = programFor(c);
  Parsed p(src);
  ASSERT_TRUE(p.module) << src;
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  // Fresh inputs per run, reproducible from the printed seed.
  const uint64_t seed = freshSeed();
  std::vector<HostArray> host;
  Tensor ref;
  ASSERT_NO_FATAL_FAILURE(randomCase(c, p, seed, host, ref));
  std::vector<attn::GpuKernelOptions> shapes = kernelShapes(*engine);
  for (const attn::GpuKernelOptions &shape : shapes)
    expectMatchesOracle(*engine, c, src, host, ref, shape, seed);
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (int64_t D : {64, 128})
    for (int64_t T : {1, 65, 1000, 4096})
      for (const char *variant : {"rope", "fox"})
        v.push_back({variant, 1, 2, 2, T, D, DType::BF16});
  // f16, GQA, both together, masks, batch > 1, T not a tile multiple.
  v.push_back({"rope", 2, 4, 2, 300, 128, DType::F16});
  v.push_back({"fox", 2, 4, 1, 257, 64, DType::F16});
  v.push_back({"plain", 2, 4, 2, 333, 128, DType::BF16});
  v.push_back({"rope_fox", 1, 2, 2, 1000, 128, DType::BF16});
  v.push_back({"plain", 1, 2, 2, 200, 64, DType::BF16, "mask none"});
  v.push_back({"rope", 1, 2, 2, 700, 64, DType::BF16,
               "mask sliding_window window 100"});
  // Partial interleaved RoPE with a key offset; an explicit query offset
  // with a scaled gate and scale; v's head dim differing from q's; f16
  // sliding window with GQA (their cubins are also built in CI: lit
  // pipeline-attn-to-gpu-variants.mlir).
  {
    Case c{"rope", 1, 2, 2, 300, 64, DType::BF16};
    c.ropeAttrs = "rope_style interleaved rope_dim 32 rope_offset 7";
    v.push_back(c);
    Case d{"rope_fox", 1, 4, 4, 500, 64, DType::BF16};
    d.ropeAttrs = "rope_q_offset 3";
    d.gateAttrs = "scaled";
    d.scale = "scale 1.000000e-01";
    v.push_back(d);
    Case e{"plain", 2, 2, 2, 129, 64, DType::BF16};
    e.Dv = 128;
    v.push_back(e);
    v.push_back({"plain", 1, 8, 2, 600, 128, DType::F16,
                 "mask sliding_window window 256"});
    // T < S (decode / chunked prefill): queries are the last T positions.
    Case f{"plain", 2, 4, 2, 70, 64, DType::BF16};
    f.S = 333;
    v.push_back(f);
    Case g{"plain", 1, 2, 2, 1, 128, DType::F16};
    g.S = 257;
    v.push_back(g);
  }
  // FoX with its bias from the key records on the tensor cores (the form
  // every FoX head dim takes): strong gates (the bias spans
  // hundreds of log2 units within a tile: u_j needs all three bf16 terms),
  // a sliding window with f16 operands (the bias step stays bf16); a
  // negative scale takes the per-score bias path.
  {
    Case c{"fox", 1, 2, 2, 2000, 128, DType::BF16};
    c.fLo = 0.01;
    v.push_back(c);
    Case d{"fox", 1,   2,          1,
           900,   128, DType::F16, "mask sliding_window window 200"};
    d.fLo = 0.5;
    v.push_back(d);
    Case e{"fox", 1, 2, 2, 300, 128, DType::BF16};
    e.scale = "scale -1.000000e-01";
    v.push_back(e);
  }
  // Head dims the tiles pad to a multiple of 64 (gpuTileHeadDim): 32, 96,
  // 160 and 256, Dv != D, every variant.
  for (int64_t D : {32, 96, 160})
    for (const char *variant : {"plain", "rope", "fox"})
      v.push_back({variant, 1, 4, 2, 300, D, DType::BF16});
  {
    Case c{"rope_fox", 1, 2, 1, 1000, 96, DType::F16};
    c.Dv = 40;
    v.push_back(c);
    Case d{"plain", 1, 2, 2, 257, 256, DType::BF16};
    d.Dv = 32;
    v.push_back(d);
  }
  // The longest sequences: one head each (the fp64 oracle is O(T^2 D)).
  v.push_back({"rope", 1, 1, 1, 16384, 64, DType::BF16});
  v.push_back({"fox", 1, 1, 1, 16384, 128, DType::BF16});
  return v;
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  const Case &c = info.param;
  std::string m = c.mask.empty()          ? ""
                  : c.mask == "mask none" ? "_nomask"
                                          : "_window";
  std::string x = std::string(c.ropeAttrs.empty() ? "" : "_ropeattrs") +
                  (c.gateAttrs.empty() ? "" : "_scaledgate") +
                  (c.Dv ? "_Dv" + std::to_string(c.Dv) : "") +
                  (c.fLo != 0.9 ? "_strongf" : "") +
                  (c.scale.empty() ? "" : "_scale") +
                  (c.S ? "_S" + std::to_string(c.S) : "");
  return llvm::formatv("{0}_B{1}H{2}Hk{3}_T{4}_D{5}_{6}{7}{8}", c.variant, c.B,
                       c.H, c.Hk, c.T, c.D,
                       c.dtype == DType::F16 ? "f16" : "bf16", m, x)
      .str();
}

INSTANTIATE_TEST_SUITE_P(All, GpuAttention, ::testing::ValuesIn(cases()),
                         caseName);

/// Every kernel and the launch plan from the block
/// program (attn-to-block{target=chip}, attn-block-launch-plan, the
/// flat-pointer kernel ABI, the runtime's generic plan executor): plain
/// attention, FoX with its gate-prefix block kernel, RoPE and RoPE+FoX
/// with the rope table and rotation block kernels (RopeToBlockGpu.cpp). On
/// sm_90 devices the mma.sync form (sm_90) and the wgmma form (sm_90a),
/// the latter also with warps = 8 and block-n = 128.
class GpuBlockPlan : public ::testing::TestWithParam<Case> {};

TEST_P(GpuBlockPlan, MatchesOracle) {
  const Case &c = GetParam();
  std::string src = programFor(c);
  Parsed p(src);
  ASSERT_TRUE(p.module) << src;
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  const uint64_t seed = freshSeed();
  std::vector<HostArray> host;
  Tensor ref;
  ASSERT_NO_FATAL_FAILURE(randomCase(c, p, seed, host, ref));
  std::vector<std::string> chips = {""};
  if (engine->gpuArch() == "sm_90")
    chips = {"sm_90", "sm_90a"};
  for (const std::string &chip : chips) {
    attn::GpuKernelOptions shape;
    shape.chip = chip;
    expectMatchesOracle(*engine, c, src, host, ref, shape, seed);
  }
  // Two warpgroups and 128-key tiles (attn-to-block's warps option).
  if (engine->gpuArch() == "sm_90") {
    attn::GpuKernelOptions shape;
    shape.chip = "sm_90a";
    shape.warps = 8;
    shape.blockN = 128;
    expectMatchesOracle(*engine, c, src, host, ref, shape, seed);
  }
}

std::vector<Case> blockPlanCases() {
  std::vector<Case> v;
  for (int64_t D : {64, 128})
    for (int64_t T : {1, 65, 1000, 4096})
      for (const char *variant : {"plain", "fox"})
        v.push_back({variant, 1, 2, 2, T, D, DType::BF16});
  // f16 and GQA, batch > 1, masks, Dv != D, T < S.
  v.push_back({"fox", 2, 4, 1, 257, 64, DType::F16});
  v.push_back({"plain", 2, 4, 2, 333, 128, DType::BF16});
  v.push_back({"plain", 1, 2, 2, 200, 64, DType::BF16, "mask none"});
  v.push_back(
      {"fox", 1, 2, 1, 900, 128, DType::F16, "mask sliding_window window 200"});
  Case e{"plain", 2, 2, 2, 129, 64, DType::BF16};
  e.Dv = 128;
  v.push_back(e);
  Case f{"plain", 2, 4, 2, 70, 64, DType::BF16};
  f.S = 333;
  v.push_back(f);
  // FoX with a negative scale: no key tile records (usesFoxRecords), the
  // bias per score; a scaled gate with a positive scale takes the records.
  Case n{"fox", 1, 2, 2, 300, 64, DType::BF16};
  n.scale = "scale -1.000000e-01";
  v.push_back(n);
  Case sg{"fox", 2, 2, 1, 517, 128, DType::BF16};
  sg.gateAttrs = "scaled";
  sg.scale = "scale 1.000000e-01";
  v.push_back(sg);
  // RoPE: both styles, rope_dim < D, offsets (positions near 1e5), T < S,
  // GQA, f16, with FoX; T up to 8K.
  for (int64_t D : {64, 128})
    for (int64_t T : {1, 1000, 8192})
      v.push_back({"rope", 1, 2, 2, T, D, DType::BF16});
  v.push_back({"rope_fox", 2, 4, 2, 1000, 128, DType::F16});
  Case r{"rope", 1, 4, 2, 700, 64, DType::BF16};
  r.ropeAttrs = "rope_style interleaved rope_dim 32 rope_offset 100000";
  v.push_back(r);
  Case rf{"rope_fox", 1, 4, 1, 300, 64, DType::BF16};
  rf.ropeAttrs = "rope_dim 16 rope_q_offset 3";
  rf.S = 900;
  v.push_back(rf);
  // FoX's bias from the tensor cores (FlashToBlockGpu.cpp, foxOperand):
  // strong gates (the bias spans hundreds of log2 units within a tile),
  // queries after 16K keys (G' / c near 1e5, its pieces subtracted in the
  // dot), and 16K queries.
  Case sf{"fox", 1, 2, 2, 2000, 128, DType::BF16};
  sf.fLo = 0.01;
  v.push_back(sf);
  Case lf{"fox", 1, 2, 1, 64, 128, DType::BF16};
  lf.S = 16384;
  lf.fLo = 0.05;
  v.push_back(lf);
  v.push_back({"fox", 1, 1, 1, 16384, 128, DType::BF16});
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, GpuBlockPlan,
                         ::testing::ValuesIn(blockPlanCases()), caseName);

/// Cold compile, then an in-memory hit, printed (not pass/fail).
TEST(GpuAttentionCompile, Latency) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  // A program no other test compiled (its text is the cache key).
  std::string src = programFor({"rope_fox", 1, 4, 2, 1, 128, DType::F16}) +
                    "// latency test\n";
  auto t0 = std::chrono::steady_clock::now();
  auto k1 = engine->compile(src);
  auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(static_cast<bool>(k1)) << llvm::toString(k1.takeError());
  auto k2 = engine->compile(src);
  auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(static_cast<bool>(k2));
  EXPECT_EQ(k1->get(), k2->get());
  std::printf("[ gpu ] compile: first %.1f ms, in-memory hit %.3f ms\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count());
  for (const std::string &r : (*k1)->remarks())
    std::printf("[ gpu ]   remark: %s\n", r.c_str());
}

/// Programmatic dependent launch changes when the attention kernel starts,
/// never what it computes: with and without it (GpuKernelOptions::
/// dependentLaunch) the output is the same bits, run after run, and
/// matches the oracle. Each prologue kernel in turn is the one right before
/// attention: gate, the rope pass over k (Q rotated in the kernel), the
/// rope pass over q and k (8 rotated dims). From sm_90 on the default
/// kernel must say it uses the dependent launch (every kernel after the
/// first waits for the one before). On sm_90 devices for the wgmma form
/// (the default chip, sm_90a) and the mma.sync form (sm_90).
TEST(GpuAttentionLaunch, DependentLaunchIsExact) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  // "sm_90" -> 90: griddepcontrol exists from there on.
  const std::string arch = engine->gpuArch();
  const int smVersion =
      arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0;
  std::vector<Case> cases = {
      {"fox", 2, 4, 2, 1000, 64, DType::BF16},
      {"rope", 2, 4, 2, 1000, 64, DType::BF16},
      {"rope", 2, 4, 2, 1000, 64, DType::BF16, "", "rope_dim 8"},
      {"rope_fox", 2, 4, 2, 1000, 128, DType::F16}};
  for (const Case &c : cases)
    for (const char *chip : {"", "sm_90"}) {
      if (*chip && arch != "sm_90")
        continue;
      const std::string lowering = *chip ? chip : "the default chip";
      std::string src = programFor(c);
      Parsed p(src);
      ASSERT_TRUE(p.module) << src;
      const uint64_t seed = freshSeed();
      std::vector<HostArray> host;
      Tensor ref;
      ASSERT_NO_FATAL_FAILURE(randomCase(c, p, seed, host, ref));
      std::vector<decltype(HostArray::bytes)> outs;
      for (int dependent : {1, 0}) {
        attn::CompileOptions opts;
        opts.gpu.dependentLaunch = dependent;
        opts.gpu.chip = chip;
        auto kernel = engine->compile(src, opts);
        ASSERT_TRUE(static_cast<bool>(kernel))
            << llvm::toString(kernel.takeError());
        bool says = false;
        for (const std::string &r : (*kernel)->remarks())
          says |= llvm::StringRef(r).contains("dependent launch");
        EXPECT_EQ(says, dependent && smVersion >= 90) << lowering << "\n"
                                                      << src;
        for (int run = 0; run < 3; ++run) {
          auto out = (*kernel)->run(host);
          ASSERT_TRUE(static_cast<bool>(out))
              << llvm::toString(out.takeError());
          outs.push_back(out->bytes);
          if (outs.size() == 1) {
            auto got = attn::ref::fromHost(*out);
            ASSERT_TRUE(static_cast<bool>(got));
            double err = attn::ref::relRmsError(*got, ref);
            EXPECT_LE(err, 5e-3) << lowering << ", seed " << seed << "\n"
                                 << src;
            EXPECT_LE(attn::ref::worstRowRelError(*got, ref), 2e-2)
                << lowering << ", seed " << seed << "\n"
                << src;
          }
        }
      }
      for (size_t i = 1; i < outs.size(); ++i)
        EXPECT_TRUE(outs[i] == outs[0])
            << lowering << ": run " << i << " differs from the first (seed "
            << seed << ")\n"
            << src;
    }
}

/// docs/input-limits.md, "Non-finite values": a NaN, +inf and -inf in v at
/// key t (three columns) reach exactly the cells that see t: the main
/// kernel multiplies and marks its non-finite rows, the mma.sync redo kernel
/// writes them again (FlashRows). Every variant, a window, GQA, T at and
/// off tile edges; on sm_90 devices the mma.sync form and two warpgroups
/// with 128-key tiles too.
TEST(GpuNonFinite, ValuesReachOnlyTheCellsThatSeeThem) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  std::vector<attn::GpuKernelOptions> shapes = kernelShapes(*engine);
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {"plain", 1, 2, 2, 300, 64, DType::BF16},
      {"rope", 1, 4, 2, 333, 128, DType::F16},
      {"fox", 1, 2, 1, 257, 64, DType::BF16},
      {"plain", 1, 2, 2, 500, 128, DType::BF16,
       "mask sliding_window window 100"},
      {"plain", 1, 2, 2, 200, 64, DType::BF16, "mask none"},
      {"rope_fox", 1, 2, 2, 200, 96, DType::BF16}};
  for (const Case &c : cases) {
    std::string src = programFor(c);
    Parsed p(src);
    ASSERT_TRUE(p.module) << src;
    for (int64_t t : {int64_t{0}, int64_t{63}, int64_t{128}, c.T - 1}) {
      const uint64_t seed = freshSeed();
      std::vector<HostArray> host;
      Tensor clean;
      ASSERT_NO_FATAL_FAILURE(randomCase(c, p, seed, host, clean));
      Tensor v = *attn::ref::fromHost(host[2]);
      const int64_t dv = v.shape[3];
      for (auto [col, x] : {std::pair{1, nan}, {5, inf}, {9, -inf}})
        v.at(0, 0, t, col) = x;
      host[2] = attn::ref::toHost(v, c.dtype);
      std::vector<Tensor> exact;
      for (const HostArray &a : host)
        exact.push_back(*attn::ref::fromHost(a));
      auto ref = attn::ref::evaluate(p.main(), exact);
      ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
      for (const attn::GpuKernelOptions &shape : shapes) {
        attn::CompileOptions opts;
        opts.gpu = shape;
        auto kernel = engine->compile(src, opts);
        ASSERT_TRUE(static_cast<bool>(kernel))
            << llvm::toString(kernel.takeError());
        auto out = (*kernel)->run(host);
        ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
        std::string what = src + "chip '" + shape.chip + "' warps " +
                           std::to_string(shape.warps) + ", key " +
                           std::to_string(t) + " of Dv " + std::to_string(dv) +
                           ", seed " + std::to_string(seed);
        EXPECT_GT(attn::test_util::expectSameNonFiniteCells(
                      *attn::ref::fromHost(*out), *ref, what),
                  0)
            << what;
      }
    }
  }
}

/// Programs the GPU backend cannot run: a clear error with device cuda.
TEST(GpuAttentionCompile, UnsupportedIsAnError) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  Case c{"plain", 1, 2, 2, 8, 64, DType::BF16};
  std::string src = programFor(c);
  std::string f32 = src;
  for (size_t at; (at = f32.find("bf16")) != std::string::npos;)
    f32.replace(at, 4, "f32");
  auto k = engine->compile(f32);
  ASSERT_FALSE(static_cast<bool>(k));
  EXPECT_NE(llvm::toString(k.takeError()).find("f32 operands"),
            std::string::npos);
}

} // namespace
