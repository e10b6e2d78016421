//===- GatePrefixCpuTest.cpp - FoX's gate-prefix GPU kernel on the CPU ----===//
//
// The `<fn>_gate_prefix` block kernel that attn-to-block{target=sm_90}
// launches before FoX's attention (launchGatePrefix: rounds of 2048 keys as
// a blocked tile, attn_block.scan over 8 warps, the carried total) writes
// G' = -gamma log2(e) cumsum(g) per (batch, query head) row. Its output
// is checked element by element, not through attention (where a constant
// error of a row cancels in G'_i - G'_j and old keys weigh nothing): the
// host function of the generated GPU form is cut down to the gate launch
// and returns its buffer, attn-to-cpu (attn-block-strip-gpu) runs it, and
// every element is compared with an fp64 cumsum of the same g. Lengths
// cross a thread's 8 keys, a warp's 256 and a round's 2048, with fresh
// random gates (seeds in the messages).
//
//===----------------------------------------------------------------------===//

#include "BlockFormText.h"
#include "ExecutionHelpers.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cstdio>
#include <random>

namespace {

using namespace attn::exec_test;
namespace blk = mlir::attn_block;

/// FoX over 4 query heads; `gateAttrs` after gate(%g) ("scaled scale s").
std::string foxSource(const std::string &gateAttrs) {
  return R"(
func.func @main(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v gate(%g) )" +
         gateAttrs +
         R"( : (tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
})";
}

/// The GPU form of `source` with its host function reduced to the gate
/// prefix's launch, returning the G' buffer it writes; "" (and a test
/// failure) when the form has no such launch.
std::string gatePrefixOnly(const std::string &source) {
  std::string form = blockFormText(source, "sm_90");
  EXPECT_NE(form.find("attn_block.scan"), std::string::npos) << form;
  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, blk::AttnBlockDialect>();
  mlir::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(form, &ctx);
  if (!module) {
    ADD_FAILURE() << "cannot parse the GPU form:\n" << form;
    return "";
  }
  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  blk::LaunchOp gate;
  main.walk([&](blk::LaunchOp l) {
    if (l.getKernel().ends_with("_gate_prefix"))
      gate = l;
  });
  if (!gate) {
    ADD_FAILURE() << "no gate_prefix launch in:\n" << form;
    return "";
  }
  mlir::Block &body = main.getBody().front();
  // Everything after the gate launch goes (the attention launch and what
  // it returns), last first.
  while (&body.back() != gate.getOperation())
    body.back().erase();
  mlir::Value out = gate.getArgs()[1];
  auto type = llvm::cast<mlir::MemRefType>(out.getType());
  mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(&body);
  auto tensorType =
      mlir::RankedTensorType::get(type.getShape(), type.getElementType());
  mlir::Value result = mlir::bufferization::ToTensorOp::create(
      b, gate.getLoc(), tensorType, out, /*restrict=*/true, /*writable=*/true);
  mlir::func::ReturnOp::create(b, gate.getLoc(), result);
  main.setType(b.getFunctionType(main.getArgumentTypes(), {tensorType}));
  // The kernels no launch names any more.
  llvm::SmallVector<mlir::func::FuncOp> unused;
  module->walk([&](mlir::func::FuncOp fn) {
    if (fn != main && fn.getName() != gate.getKernel())
      unused.push_back(fn);
  });
  for (mlir::func::FuncOp fn : unused)
    fn.erase();
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

/// -gamma log2(e) cumsum(g) along the last dim of g [B, H, S], in long
/// double.
std::vector<double> prefixOracle(const Tensor &g, double gamma) {
  std::vector<double> out(g.data.size());
  const int64_t s = g.dim(2);
  for (int64_t row = 0; row < g.dim(0) * g.dim(1); ++row) {
    long double sum = 0;
    for (int64_t j = 0; j < s; ++j) {
      sum += g.data[row * s + j];
      out[row * s + j] = static_cast<double>(-static_cast<long double>(gamma) *
                                             1.4426950408889634074L * sum);
    }
  }
  return out;
}

void expectPrefixMatches(const std::string &gateAttrs, double gamma,
                         uint64_t seed) {
  std::string src = gatePrefixOnly(foxSource(gateAttrs));
  ASSERT_FALSE(src.empty());
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Fused;
  auto kernel = engine().compile(src, options, "gate-prefix");
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  std::printf("[ gate prefix ] %s seeds from %llu\n", gateAttrs.c_str(),
              static_cast<unsigned long long>(seed + 1));
  for (int64_t s : {1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 1000, 2047, 2048,
                    2049, 4096 + 7}) {
    ++seed;
    const int64_t b = 2, h = 4;
    std::mt19937_64 rng(seed);
    // log forget gates of f in (0.05, 1): a row's G' spans thousands.
    std::uniform_real_distribution<double> f(0.05, 1.0);
    Tensor g({b, h, s}, std::vector<double>(b * h * s));
    for (double &x : g.data)
      x = std::log(f(rng));
    std::vector<Tensor> ins = qkv(b, h, 2, 1, s, 64, 64, seed);
    std::vector<attn::HostArray> host;
    for (const Tensor &x : ins)
      host.push_back(attn::ref::toHost(x, attn::DType::BF16));
    host.push_back(attn::ref::toHost(g, attn::DType::F32));
    // The oracle sums the gates the kernel reads (rounded to f32).
    Tensor g32 = *attn::ref::fromHost(host.back());
    std::vector<double> want = prefixOracle(g32, gamma);
    auto out = (*kernel)->run(host);
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    Tensor got = *attn::ref::fromHost(*out);
    ASSERT_EQ(got.shape, g.shape) << "S " << s;
    std::string what = "S " + std::to_string(s) + " " + gateAttrs + " seed " +
                       std::to_string(seed);
    int64_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      // f64 sums rounded once to f32: within one f32 ulp of the oracle.
      double tol = std::ldexp(std::fabs(want[i]), -23) + 1e-30;
      if (!(std::fabs(got.data[i] - want[i]) <= tol) && bad++ < 5)
        ADD_FAILURE() << what << ": G'[" << i / s << ", " << i % s
                      << "] = " << got.data[i] << ", oracle " << want[i];
    }
    EXPECT_EQ(bad, 0) << what;
  }
}

TEST(GpuFormOnCpu, GatePrefixMatchesCumsum) {
  expectPrefixMatches("", 1.0, attn::ref::freshSeed());
}

/// A scaled gate (fla's PaTH-FoX convention) multiplies by the scale.
TEST(GpuFormOnCpu, ScaledGatePrefixMatchesCumsum) {
  expectPrefixMatches("scaled scale 1.000000e-01", 0.1, attn::ref::freshSeed());
}

} // namespace
