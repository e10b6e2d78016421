//===- GpuTrainingTest.cpp - the fused backward on the GPU vs the oracle --===//
//
// Training pairs (Engine::compileTraining on a "cuda" engine) of plain,
// RoPE, FoX and RoPE+FoX attention in bf16/f16: the forward's output and
// LSE, then the backward's gradients, each compared with the fp64 oracle's
// (ref::evaluateGrad) on the same rounded inputs and cotangent: relative
// RMS within fla's criteria (dq, dk, dv 8e-3, dg 2e-2) and the worst row
// within 5e-2 (ref::kGradRowFloor). The runtime poisons every output, so an
// unwritten row fails. Fresh inputs per run (ATTN_SEED replays one); without a
// GPU every case skips with a message.
//
//===----------------------------------------------------------------------===//

#include "GpuEngine.h"
#include "ProgramOracle.h"
#include "attn/Dialect/AttnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using attn::DType;
using attn::HostArray;
using attn::ref::Tensor;

struct Case {
  std::string variant; // plain | rope | fox | rope_fox
  int64_t H, Hk, T, D;
  DType dtype = DType::BF16;
  std::string mask = ""; // "" (causal), "mask none", "mask sliding_window ..."
  int64_t S = 0;         // keys (0: T); S > T: the queries are the last T
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.variant << " H=" << c.H << " Hk=" << c.Hk << " T=" << c.T
      << " D=" << c.D << (c.dtype == DType::F16 ? " f16" : " bf16")
      << (c.mask.empty() ? "" : " " + c.mask)
      << (c.S ? " S=" + std::to_string(c.S) : "");
}

bool hasGate(const Case &c) { return c.variant.find("fox") != c.variant.npos; }

std::string programFor(const Case &c) {
  std::string e = c.dtype == DType::F16 ? "f16" : "bf16";
  auto t4 = [&](int64_t h) {
    return llvm::formatv("tensor<?x{0}x?x{1}x{2}>", h, c.D, e).str();
  };
  bool gate = hasGate(c);
  bool rope = c.variant.rfind("rope", 0) == 0;
  std::string gt = llvm::formatv("tensor<?x{0}x?xf32>", c.H).str();
  std::string types =
      t4(c.H) + ", " + t4(c.Hk) + ", " + t4(c.Hk) + (gate ? ", " + gt : "");
  std::string args = "%q: " + t4(c.H) + ", %k: " + t4(c.Hk) +
                     ", %v: " + t4(c.Hk) + (gate ? ", %g: " + gt : "");
  return "func.func @main(" + args + ") -> " + t4(c.H) +
         " {\n  %o = attn.attention %q, %k, %v" +
         (rope ? " rope(1.000000e+04)" : "") + (gate ? " gate(%g)" : "") +
         (c.mask.empty() ? "" : " " + c.mask) + " : (" + types + ") -> " +
         t4(c.H) + "\n  return %o : " + t4(c.H) + "\n}\n";
}

struct Parsed {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit Parsed(const std::string &src) {
    mlir::DialectRegistry registry;
    registry.insert<mlir::attn::AttnDialect>();
    mlir::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(src, &ctx);
  }
  mlir::func::FuncOp main() {
    return module->lookupSymbol<mlir::func::FuncOp>("main");
  }
};

/// `t` as the kernels take it (4-D tensors in the case's dtype, gates in
/// f32), and the oracle's copy of those rounded values.
std::pair<HostArray, Tensor> rounded(const Tensor &t, DType dtype) {
  HostArray h = attn::ref::toHost(t, t.shape.size() == 4 ? dtype : DType::F32);
  auto r = attn::ref::fromHost(h);
  EXPECT_TRUE(static_cast<bool>(r));
  return {std::move(h), r ? std::move(*r) : Tensor()};
}

/// The last `t` rows (dim 2) of a [B, H, S, D] tensor.
Tensor lastRows(const Tensor &x, int64_t t) {
  const int64_t b = x.dim(0), h = x.dim(1), s = x.dim(2), d = x.dim(3);
  std::vector<double> data;
  for (int64_t bh = 0; bh < b * h; ++bh)
    data.insert(data.end(), x.data.begin() + (bh * s + s - t) * d,
                x.data.begin() + (bh * s + s) * d);
  return Tensor({b, h, t, d}, std::move(data));
}

/// `got` against the oracle's `want` within `b`: finite everywhere, the
/// relative RMS and the worst row within their bounds.
void expectClose(const HostArray &got, const Tensor &want,
                 const attn::ref::ErrorBound &b, const std::string &what) {
  auto g = attn::ref::fromHost(got);
  ASSERT_TRUE(static_cast<bool>(g));
  ASSERT_EQ(g->shape, want.shape) << what;
  size_t bad = 0;
  for (double x : g->data)
    bad += !std::isfinite(x);
  EXPECT_EQ(bad, 0u) << what << ": non-finite values (unwritten rows?)";
  double err = attn::ref::relRmsError(*g, want);
  int64_t row = -1;
  double rowErr = attn::ref::worstRowRelError(*g, want, &row, b.rowFloor);
  EXPECT_LE(err, b.bound) << what;
  EXPECT_LE(rowErr, b.rowBound) << what << ": worst row " << row;
  std::printf("[ gpu ] %s: relative RMS %.3e, worst row %.3e\n", what.c_str(),
              err, rowErr);
}

/// The output's bounds (a 16-bit forward's) and each gradient's: fla's
/// relative RMS criteria, the worst row within 5e-2 (rows below half the
/// mean row norm judged against half of it: ref::kGradRowFloor says why).
const attn::ref::ErrorBound kOutput{true, attn::ref::kHalfRmsBound,
                                    attn::ref::kHalfRowBound};
const attn::ref::ErrorBound kQkv{true, 8e-3, 5e-2, attn::ref::kGradRowFloor};
const attn::ref::ErrorBound kGate{true, 2e-2, 5e-2, attn::ref::kGradRowFloor};

class GpuTraining : public ::testing::TestWithParam<Case> {};

TEST_P(GpuTraining, GradientsMatchOracle) {
  const Case &c = GetParam();
  std::string src = programFor(c);
  Parsed p(src);
  ASSERT_TRUE(p.module) << src;
  std::string why;
  attn::Engine *engine = attn::gpu_test::gpuEngine(why);
  if (!engine)
    GTEST_SKIP() << "no GPU: " << why;
  const uint64_t seed = attn::ref::freshSeed();
  std::ostringstream name;
  PrintTo(c, &name);
  SCOPED_TRACE(name.str() + ", seed " + std::to_string(seed));

  attn::ref::RandomSpec spec;
  spec.heads = c.H;
  spec.seqLen = c.S ? c.S : c.T;
  spec.fLo = 0.9;
  spec.seed = seed;
  auto ins = attn::ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(ins)) << llvm::toString(ins.takeError());
  if (c.S && c.S != c.T)
    (*ins)[0] = lastRows((*ins)[0], c.T);
  std::vector<HostArray> host;
  std::vector<Tensor> exact;
  for (const Tensor &t : *ins) {
    auto [h, r] = rounded(t, c.dtype);
    host.push_back(std::move(h));
    exact.push_back(std::move(r));
  }
  auto out = attn::ref::evaluate(p.main(), exact);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  auto [dOHost, dO] =
      rounded(attn::ref::randomCotangent(out->shape, seed), c.dtype);
  auto want = attn::ref::evaluateGrad(p.main(), exact, dO);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());

  for (const std::string &chip : attn::gpu_test::blockChipsOf(*engine)) {
    SCOPED_TRACE("chip " + (chip.empty() ? engine->gpuArch() : chip));
    attn::CompileOptions opts;
    opts.gpu.chip = chip;
    auto pair = engine->compileTraining(src, opts);
    ASSERT_TRUE(static_cast<bool>(pair)) << llvm::toString(pair.takeError());
    ASSERT_EQ(pair->forward->device(), attn::Device::CUDA);
    ASSERT_EQ(pair->backward->device(), attn::Device::CUDA);
    auto fwd = pair->forward->runAll(host);
    ASSERT_TRUE(static_cast<bool>(fwd)) << llvm::toString(fwd.takeError());
    ASSERT_EQ(fwd->size(), 2u) << "the output and its LSE";
    expectClose((*fwd)[0], *out, kOutput, name.str() + " output");
    std::vector<HostArray> args = host;
    args.insert(args.end(), fwd->begin(), fwd->end());
    args.push_back(dOHost);
    auto grads = pair->backward->runAll(args);
    ASSERT_TRUE(static_cast<bool>(grads)) << llvm::toString(grads.takeError());
    ASSERT_EQ(grads->size(), pair->gradArgs.size());
    const char *names[] = {"dq", "dk", "dv", "dg"};
    for (auto [i, n] : llvm::enumerate(pair->gradArgs)) {
      ASSERT_TRUE((*want)[n].has_value());
      expectClose((*grads)[i], *(*want)[n], n == 3 ? kGate : kQkv,
                  name.str() + " " + names[n]);
    }
  }
}

// Tile edges (63, 64, 65), a long sequence, GQA, both head dims, f16, the
// three masks (FoX has no fused backward without a mask), one decoding
// query over 65 keys.
INSTANTIATE_TEST_SUITE_P(
    Variants, GpuTraining,
    ::testing::Values(Case{"plain", 4, 2, 63, 64}, Case{"plain", 4, 2, 64, 64},
                      Case{"plain", 4, 2, 65, 64},
                      Case{"plain", 4, 2, 1000, 64},
                      Case{"plain", 2, 2, 1000, 128},
                      Case{"plain", 1, 1, 4096, 128},
                      Case{"plain", 2, 1, 1000, 64, DType::F16, "mask none"},
                      Case{"plain", 2, 2, 1000, 128, DType::BF16,
                           "mask sliding_window window 100"},
                      Case{"plain", 2, 2, 1, 64, DType::BF16, "", 65},
                      Case{"rope", 4, 2, 1000, 64}, Case{"rope", 2, 2, 65, 128},
                      Case{"fox", 4, 2, 1000, 64}, Case{"fox", 1, 1, 4096, 128},
                      Case{"fox", 2, 2, 1000, 64, DType::F16,
                           "mask sliding_window window 100"},
                      Case{"rope_fox", 2, 2, 1000, 128},
                      Case{"rope_fox", 4, 2, 513, 64, DType::F16}));

} // namespace
