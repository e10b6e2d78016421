//===- GpuPathTest.cpp - PaTH / PaTH-FoX on CUDA vs the fp64 oracle -------===//
//
// PaTH and PaTH-FoX through the runtime on a CUDA device:
// attn-to-block{target=chip} builds PaTH's GPU
// form (PathToBlock.cpp: the chunk kernel and the attention kernel),
// attn-block-launch-plan its launch plan, attn-block-to-gpu the PTX. Fresh
// random inputs (the seed is printed), q, k, v rounded to bf16/f16 first so
// that the oracle sees what the kernels see; w unit rows and beta, g f32 as
// the op types them. The runtime poisons the output (all-ones bytes: NaN in
// 16 bits) before each run, so an unwritten row fails. Bounds: relative RMS
// <= kHalfRmsBound (5e-3) and the worst row <= kHalfRowBound (2e-2).
// Without a GPU every case skips with a message.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"
#include "GpuEngine.h"
#include "attn/Passes/Passes.h"
#include "attn/Runtime.h"
#include "attn/Toolkit.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace {

/// The ptxas the runtime compiles with: CUDA_HOME's, or a newer one beside
/// it (ATTN_PTXAS, pip's nvidia-cuda-nvcc: attn::chooseToolkit).
mlir::attn::PtxasFacts runtimePtxas() {
  llvm::SmallString<128> tmp;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
  return attn::probePtxas(
      attn::chooseToolkit(mlir::attn::cudaToolkitPath(), tmp, "python3").path);
}

using attn::DType;
using attn::HostArray;
using attn::exec_test::Program;
using attn::exec_test::subst;
using attn::ref::Tensor;

using attn::gpu_test::gpuEngine;

struct PathCase {
  bool gate;
  int64_t B, Hq, Hk, T, S, D;
  DType dtype;
  double betaLo, betaHi;
  /// CompileOptions::gpu.pathTransport: "" (the default, f16) or "split".
  std::string transport = "";
  /// CompileOptions::gpu.pathChunkWgmma: the chunk kernel in the wgmma
  /// form; such a case runs on sm_90a only.
  bool chunkWgmma = false;
  /// CompileOptions::gpu.pathAttentionWgmma: the attention kernel in the
  /// wgmma form too (with chunkWgmma); it needs ptxas 13.3 or newer, and
  /// with an older one the compile must fail naming it.
  bool attentionWgmma = false;
};

void PrintTo(const PathCase &c, std::ostream *os) {
  *os << (c.gate ? "path_fox" : "path") << " B=" << c.B << " Hq=" << c.Hq
      << " Hk=" << c.Hk << " T=" << c.T << " S=" << c.S << " D=" << c.D
      << (c.dtype == DType::F16 ? " f16" : " bf16") << " beta in (" << c.betaLo
      << ", " << c.betaHi << ")"
      << (c.transport.empty() ? "" : " transport=" + c.transport)
      << (c.chunkWgmma ? " path-chunk-wgmma" : "")
      << (c.attentionWgmma ? " path-attention-wgmma" : "");
}

const char *kPathProgram = R"(
func.func @main(%q: tensor<?x?x?x$Dx$E>, %k: tensor<?x?x?x$Dx$E>, %v: tensor<?x?x?x$Dx$E>,
                %w: tensor<?x?x?x$Dxf32>, %beta: tensor<?x?x?xf32>$GARG) -> tensor<?x?x?x$Dx$E> {
  %o = attn.attention %q, %k, %v path(%w, %beta) $ATTRS
      : (tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dxf32>, tensor<?x?x?xf32>$GTYPE)
      -> tensor<?x?x?x$Dx$E>
  return %o : tensor<?x?x?x$Dx$E>
})";

std::string elementName(DType t) { return t == DType::F16 ? "f16" : "bf16"; }

std::string programFor(const PathCase &c) {
  return subst(kPathProgram,
               {{"$GARG", c.gate ? ", %g: tensor<?x?x?xf32>" : ""},
                {"$GTYPE", c.gate ? ", tensor<?x?x?xf32>" : ""},
                {"$ATTRS", c.gate ? "gate(%g) scaled" : ""},
                {"$D", std::to_string(c.D)},
                {"$E", elementName(c.dtype)}});
}

/// q [B,Hq,T,D], k, v [B,Hk,S,D] rounded to the 16-bit type; w [B,Hk,S,D]
/// unit rows, beta [B,Hk,S] in (lo, hi), g [B,Hq,S] = log U(0.9, 1).
std::vector<Tensor> inputsFor(const PathCase &c, uint64_t seed) {
  std::vector<Tensor> ins =
      attn::exec_test::qkv(c.B, c.Hq, c.Hk, c.T, c.S, c.D, c.D, seed);
  for (Tensor &x : ins)
    x = *attn::ref::fromHost(attn::ref::toHost(x, c.dtype));
  ins.push_back(attn::exec_test::unitRows({c.B, c.Hk, c.S, c.D}, seed + 3));
  ins.push_back(
      attn::ref::randUniform({c.B, c.Hk, c.S}, seed + 4, c.betaLo, c.betaHi));
  if (c.gate) {
    Tensor g = attn::ref::randUniform({c.B, c.Hq, c.S}, seed + 5, 0.9, 1.0);
    for (double &x : g.data)
      x = std::log(x);
    ins.push_back(std::move(g));
  }
  return ins;
}

std::vector<HostArray> hostInputs(const std::vector<Tensor> &ins, DType t) {
  std::vector<HostArray> host;
  for (size_t i = 0; i < ins.size(); ++i)
    host.push_back(attn::ref::toHost(ins[i], i < 3 ? t : DType::F32));
  return host;
}

std::shared_ptr<attn::Kernel>
compilePath(attn::Engine &engine, const std::string &src,
            const std::string &chip, const std::string &transport = "",
            bool chunkWgmma = false, bool attentionWgmma = false) {
  // Each form named, not left to the default, which depends on the
  // toolkit's ptxas (GpuOptionsTest.cpp): every case tests the same kernels
  // wherever it runs.
  return attn::gpu_test::compileBlockPlan(engine, src, chip, "PaTH", transport,
                                          chunkWgmma ? 1 : 0,
                                          attentionWgmma ? 1 : 0);
}

/// `kernel` run on `ins` as a tensor (empty on failure, which fails).
Tensor runOn(attn::Kernel &kernel, const std::vector<Tensor> &ins, DType t) {
  auto out = kernel.run(hostInputs(ins, t));
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  EXPECT_EQ(out->dtype, t);
  auto got = attn::ref::fromHost(*out);
  EXPECT_TRUE(static_cast<bool>(got));
  return got ? *got : Tensor();
}

class GpuPath : public ::testing::TestWithParam<PathCase> {};

TEST_P(GpuPath, MatchesOracle) {
  const PathCase &c = GetParam();
  // The program parses and verifies everywhere (CI has no GPU).
  std::string src = programFor(c);
  Program p(src);
  ASSERT_TRUE(p.module) << src;
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  const uint64_t seed = attn::ref::freshSeed();
  std::vector<Tensor> ins = inputsFor(c, seed);
  auto ref = attn::ref::evaluate(p.main(), ins);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  std::vector<std::string> chips = attn::gpu_test::blockChipsOf(*engine);
  if (c.chunkWgmma || c.attentionWgmma) {
    if (engine->gpuArch() != "sm_90")
      GTEST_SKIP() << "the wgmma forms need an sm_90 device (sm_90a)";
    chips = {"sm_90a"};
  }
  if (c.attentionWgmma) {
    std::string old = mlir::attn::checkPtxasForRegisterWgmma(
        runtimePtxas(), "path-attention-wgmma");
    if (!old.empty()) {
      // An old ptxas would assemble wrong rows: the compile must say so.
      attn::CompileOptions opts;
      opts.gpu.chip = "sm_90a";
      opts.gpu.pathAttentionWgmma = 1;
      auto kernel = engine->compile(src, opts);
      ASSERT_FALSE(static_cast<bool>(kernel)) << old;
      std::string err = llvm::toString(kernel.takeError());
      EXPECT_NE(err.find("needs ptxas 13.3 or newer"), std::string::npos)
          << err;
      return;
    }
  }
  for (const std::string &chip : chips) {
    SCOPED_TRACE("chip '" + chip + "', seed " + std::to_string(seed));
    std::shared_ptr<attn::Kernel> kernel = compilePath(
        *engine, src, chip, c.transport, c.chunkWgmma, c.attentionWgmma);
    ASSERT_TRUE(kernel);
    Tensor got = runOn(*kernel, ins, c.dtype);
    ASSERT_EQ(got.shape, ref->shape);
    size_t bad = 0;
    for (double x : got.data)
      bad += !std::isfinite(x);
    EXPECT_EQ(bad, 0u) << "non-finite outputs (unwritten rows?)";
    double rms = attn::ref::relRmsError(got, *ref);
    int64_t row = -1;
    double worst = attn::ref::worstRowRelError(got, *ref, &row);
    EXPECT_LE(rms, attn::ref::kHalfRmsBound) << src;
    EXPECT_LE(worst, attn::ref::kHalfRowBound) << "worst row " << row << "\n"
                                               << src;
    std::printf("[ gpu path ] %s chip '%s' seed %llu: relative RMS %.3e, "
                "worst row %.3e (row %lld)\n",
                ::testing::PrintToString(c).c_str(), chip.c_str(),
                static_cast<unsigned long long>(seed), rms, worst,
                static_cast<long long>(row));
  }
}

std::vector<PathCase> pathCases() {
  std::vector<PathCase> v;
  for (bool gate : {false, true}) {
    // Lengths, both head dims, near-reflections and general betas, GQA
    // (2 query heads per KV head).
    for (int64_t d : {64, 128})
      for (int64_t t : {1, 65, 1000})
        for (auto [lo, hi] : {std::pair{1.5, 2.0}, std::pair{0.0, 2.0}})
          v.push_back({gate, 1, 2, 1, t, t, d, DType::BF16, lo, hi});
    // f16, batch > 1, GQA 4:2.
    v.push_back({gate, 2, 4, 2, 300, 300, 64, DType::F16, 1.5, 2.0});
    v.push_back({gate, 1, 2, 2, 257, 257, 128, DType::F16, 0.0, 2.0});
    // Head dims the tiles pad (gpuTileHeadDim).
    v.push_back({gate, 1, 4, 2, 300, 300, 96, DType::BF16, 0.0, 2.0});
    v.push_back({gate, 1, 2, 1, 200, 200, 32, DType::BF16, 1.5, 2.0});
    // T < S (queries are the last T): decode, mid-chunk and chunk-aligned.
    v.push_back({gate, 1, 2, 1, 1, 1000, 64, DType::BF16, 1.5, 2.0});
    v.push_back({gate, 2, 4, 2, 37, 150, 128, DType::BF16, 0.0, 2.0});
    v.push_back({gate, 1, 2, 2, 256, 4096, 64, DType::F16, 1.5, 2.0});
    // The longest walks, one head (the fp64 oracle is O(T^2 D)).
    for (int64_t d : {64, 128}) {
      v.push_back({gate, 1, 1, 1, 4096, 4096, d, DType::BF16, 1.5, 2.0});
      v.push_back({gate, 1, 1, 1, 16384, 16384, d, DType::BF16, 1.5, 2.0});
    }
    v.push_back({gate, 1, 1, 1, 4096, 4096, 128, DType::F16, 0.0, 2.0});
    // The split transport (path-transport=split): both head dims, a long
    // walk.
    for (int64_t d : {64, 128})
      v.push_back(
          {gate, 1, 2, 1, 4096, 4096, d, DType::BF16, 1.5, 2.0, "split"});
    // The chunk kernel in the wgmma form (path-chunk-wgmma, sm_90a): both
    // head dims, GQA and T < S, f16, both transports.
    for (int64_t d : {64, 128}) {
      v.push_back(
          {gate, 1, 2, 1, 1000, 1000, d, DType::BF16, 1.5, 2.0, "", true});
      v.push_back({gate, 2, 4, 2, 37, 150, d, DType::BF16, 0.0, 2.0, "", true});
      v.push_back(
          {gate, 1, 2, 1, 4096, 4096, d, DType::BF16, 1.5, 2.0, "split", true});
    }
    v.push_back({gate, 1, 2, 2, 257, 257, 128, DType::F16, 0.0, 2.0, "", true});
    v.push_back(
        {gate, 1, 1, 1, 16384, 16384, 64, DType::BF16, 1.5, 2.0, "", true});
    // Both kernels in the wgmma form (path-chunk-wgmma and
    // path-attention-wgmma): the same shapes, and the longest walk at
    // D = 128.
    for (int64_t d : {64, 128}) {
      v.push_back({gate, 1, 2, 1, 1000, 1000, d, DType::BF16, 1.5, 2.0, "",
                   true, true});
      v.push_back(
          {gate, 2, 4, 2, 37, 150, d, DType::BF16, 0.0, 2.0, "", true, true});
      v.push_back({gate, 1, 2, 1, 4096, 4096, d, DType::BF16, 1.5, 2.0, "split",
                   true, true});
    }
    v.push_back(
        {gate, 1, 2, 2, 257, 257, 128, DType::F16, 0.0, 2.0, "", true, true});
    v.push_back({gate, 1, 1, 1, 16384, 16384, 128, DType::BF16, 1.5, 2.0, "",
                 true, true});
  }
  return v;
}

std::string caseName(const ::testing::TestParamInfo<PathCase> &info) {
  const PathCase &c = info.param;
  return llvm::formatv("{0}_B{1}Hq{2}Hk{3}_T{4}_S{5}_D{6}_{7}_beta{8}{9}",
                       c.gate ? "fox" : "path", c.B, c.Hq, c.Hk, c.T, c.S, c.D,
                       elementName(c.dtype),
                       c.betaLo == 0.0 ? "0to2" : "1p5to2",
                       (c.transport.empty() ? "" : "_" + c.transport) +
                           (c.chunkWgmma ? "_chunk_wgmma" : "") +
                           (c.attentionWgmma ? "_attention_wgmma" : ""))
      .str();
}

INSTANTIATE_TEST_SUITE_P(All, GpuPath, ::testing::ValuesIn(pathCases()),
                         caseName);

/// Causality on the device: changing token 100's k, v, w and beta (chunk 1,
/// its 37th row) leaves rows 0-99 bit for bit and changes row 100 or later
/// ones; PaTH and PaTH-FoX, D 64 and 128.
TEST(GpuPathProperties, IsCausal) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  for (bool gate : {false, true})
    for (int64_t d : {64, 128}) {
      const int64_t t = 200, at = 100;
      PathCase c{gate, 1, 1, 1, t, t, d, DType::BF16, 1.5, 2.0};
      const uint64_t seed = attn::ref::freshSeed();
      SCOPED_TRACE(::testing::PrintToString(c) + ", seed " +
                   std::to_string(seed));
      std::string src = programFor(c);
      std::vector<Tensor> ins = inputsFor(c, seed);
      for (const std::string &chip : attn::gpu_test::blockChipsOf(*engine)) {
        std::shared_ptr<attn::Kernel> kernel = compilePath(*engine, src, chip);
        ASSERT_TRUE(kernel);
        Tensor before = runOn(*kernel, ins, c.dtype);
        std::vector<Tensor> changed = ins;
        Tensor w2 = attn::exec_test::unitRows({1, 1, 1, d}, seed + 7);
        for (int64_t e = 0; e < d; ++e) {
          changed[1].data[at * d + e] = 2.0 * (e % 2 ? 1 : -1); // 16-bit exact
          changed[2].data[at * d + e] = 3.0;
          changed[3].data[at * d + e] = w2.data[e];
        }
        changed[4].data[at] = 1.25;
        Tensor after = runOn(*kernel, changed, c.dtype);
        ASSERT_EQ(before.data.size(), static_cast<size_t>(t * d));
        ASSERT_EQ(after.data.size(), before.data.size());
        bool laterChanged = false;
        for (int64_t i = 0; i < t; ++i)
          for (int64_t e = 0; e < d; ++e) {
            double x = before.data[i * d + e], y = after.data[i * d + e];
            if (i < at)
              ASSERT_EQ(x, y) << "row " << i << " saw token " << at;
            else
              laterChanged |= x != y;
          }
        EXPECT_TRUE(laterChanged)
            << "rows from " << at << " on ignored token " << at;
      }
    }
}

/// A non-finite w or beta at positions `bad` of KV head 0 on the device
/// (docs/input-limits.md, "Non-finite values"): the rows whose path crosses
/// one (the row at or after it, a key before it) are NaN in every element,
/// every other row is bit for bit what it is with finite values there.
/// beta = inf is refused in host memory (outside [0, 2]), so NaN there.
TEST(GpuPathProperties, NonFiniteTransformsPoisonOnlyTheRowsCrossingThem) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  struct Form {
    std::string chip, transport;
    bool chunkWgmma = false, attentionWgmma = false;
  };
  std::vector<Form> forms;
  for (const std::string &chip : attn::gpu_test::blockChipsOf(*engine))
    forms.push_back({chip, ""});
  if (engine->gpuArch() == "sm_90") {
    forms.push_back({"sm_90a", "split", true, false});
    if (mlir::attn::checkPtxasForRegisterWgmma(runtimePtxas(), "").empty())
      forms.push_back({"sm_90a", "", true, true});
  }
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  const int64_t t = 200;
  for (bool gate : {false, true})
    for (int64_t d : {64, 128}) {
      PathCase c{gate, 1, 4, 2, t, t, d, DType::BF16, 0.0, 2.0};
      std::string src = programFor(c);
      for (const Form &f : forms) {
        std::shared_ptr<attn::Kernel> kernel = compilePath(
            *engine, src, f.chip, f.transport, f.chunkWgmma, f.attentionWgmma);
        ASSERT_TRUE(kernel);
        const uint64_t seed = attn::ref::freshSeed();
        std::vector<Tensor> ins = inputsFor(c, seed);
        Tensor clean = runOn(*kernel, ins, c.dtype);
        for (std::vector<int64_t> bad :
             {std::vector<int64_t>{0}, {5}, {63}, {64}, {100, 110}, {199}})
          for (auto [arg, value] : {std::pair{3, nan}, {4, nan}, {3, -inf}}) {
            SCOPED_TRACE(::testing::PrintToString(c) + " chip " + f.chip + " " +
                         f.transport +
                         (f.attentionWgmma ? " attention-wgmma" : "") +
                         ", seed " + std::to_string(seed) + ", input " +
                         std::to_string(arg) + " = " + std::to_string(value) +
                         " at " + std::to_string(bad[0]));
            std::vector<Tensor> poisoned = ins;
            for (int64_t at : bad) {
              if (arg == 3)
                poisoned[3].at(0, 0, at, 1) = value;
              else
                poisoned[4].at(0, 0, at) = value;
            }
            Tensor got = runOn(*kernel, poisoned, c.dtype);
            ASSERT_EQ(got.shape, clean.shape);
            for (int64_t h = 0; h < c.Hq; ++h)
              for (int64_t i = 0; i < t; ++i) {
                bool crosses = false;
                for (int64_t at : bad)
                  crosses |= h < c.Hq / c.Hk && 0 < at && at <= i;
                bool allNan = true, same = true;
                for (int64_t e = 0; e < d; ++e) {
                  double x = got.at(0, h, i, e);
                  allNan &= std::isnan(x);
                  same &= x == clean.at(0, h, i, e);
                }
                if (crosses)
                  ASSERT_TRUE(allNan) << "row " << i << " of head " << h;
                else
                  ASSERT_TRUE(same) << "row " << i << " of head " << h;
              }
          }
      }
    }
}

/// examples/path_bf16.mlir and path_fox_bf16.mlir (attn.scores / softmax /
/// weighted_sum, fused by attn-fuse) on the device: what
/// `attn-run <example> --device=cuda
/// --random=1x2x1000 --check` runs, inputs from the oracle's randomInputs
/// as attn-run draws them; on each chip with the mma.sync forms named, then
/// with the runtime's default chip and forms.
TEST(GpuPathProperties, ExamplesRunOnTheDevice) {
  std::string why;
  attn::Engine *engine = gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  for (const char *name : {"path_bf16.mlir", "path_fox_bf16.mlir"}) {
    std::string src = attn::exec_test::readExample(name);
    ASSERT_FALSE(src.empty()) << name;
    Program p(src);
    ASSERT_TRUE(p.module) << name;
    const uint64_t seed = attn::ref::freshSeed();
    SCOPED_TRACE(std::string(name) + ", seed " + std::to_string(seed));
    attn::ref::RandomSpec spec;
    spec.batch = 1;
    spec.heads = 2;
    spec.seqLen = 1000;
    spec.seed = seed;
    auto drawn = attn::ref::randomInputs(p.main(), spec);
    ASSERT_TRUE(static_cast<bool>(drawn)) << llvm::toString(drawn.takeError());
    std::vector<Tensor> ins = std::move(*drawn);
    for (size_t i = 0; i < 3; ++i)
      ins[i] = *attn::ref::fromHost(attn::ref::toHost(ins[i], DType::BF16));
    auto ref = attn::ref::evaluate(p.main(), ins);
    ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
    auto check = [&](attn::Kernel &kernel, const std::string &what) {
      Tensor got = runOn(kernel, ins, DType::BF16);
      ASSERT_EQ(got.shape, ref->shape);
      double rms = attn::ref::relRmsError(got, *ref);
      double worst = attn::ref::worstRowRelError(got, *ref);
      EXPECT_LE(rms, attn::ref::kHalfRmsBound) << what;
      EXPECT_LE(worst, attn::ref::kHalfRowBound) << what;
      std::printf("[ gpu path ] %s %s seed %llu: relative RMS %.3e, "
                  "worst row %.3e\n",
                  name, what.c_str(), static_cast<unsigned long long>(seed),
                  rms, worst);
    };
    for (const std::string &chip : attn::gpu_test::blockChipsOf(*engine)) {
      std::shared_ptr<attn::Kernel> kernel = compilePath(*engine, src, chip);
      ASSERT_TRUE(kernel);
      check(*kernel, "chip '" + chip + "'");
    }
    // The runtime's own choice (no chip, no form named): on an sm_90
    // device the wgmma forms exactly when the toolkit's ptxas is 13.3 or
    // newer, and the remark says which.
    std::shared_ptr<attn::Kernel> kernel =
        attn::gpu_test::compileBlockPlan(*engine, src, "", "PaTH");
    ASSERT_TRUE(kernel);
    bool wgmma =
        engine->gpuArch() == "sm_90" &&
        mlir::attn::checkPtxasForRegisterWgmma(runtimePtxas(), "").empty();
    std::string form = wgmma ? "wgmma" : "mma.sync";
    std::string want = "PaTH: chunk kernel in the " + form +
                       " form, attention kernel in the " + form + " form";
    const auto &remarks = kernel->remarks();
    EXPECT_NE(std::find(remarks.begin(), remarks.end(), want), remarks.end())
        << "no remark '" << want << "'";
    check(*kernel, "default forms (" + form + ")");
  }
}

} // namespace
