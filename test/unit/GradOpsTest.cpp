//===- GradOpsTest.cpp - the VJP ops on the CPU vs the fp64 oracle --------===//
//
// Each VJP op (attn.rope inverse, softmax_grad, weighted_sum_grad,
// l2norm_grad, short_conv_grad, head_norm_grad) and attn.logsumexp as a
// one-op program, compiled by the Engine through the reference lowering, run
// on fresh random inputs (seed printed; ATTN_SEED replays) into an output
// poisoned with NaN, and compared with the oracle's gradient (Oracle.h) or,
// for logsumexp, a direct fp64 sum. An op with several results runs once
// per result, each program returning one of them.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"

#include <cstdio>
#include <limits>

using attn::DType;
using attn::HostArray;
using attn::TensorView;
using attn::ref::Tensor;
using namespace attn::exec_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A fresh seed (attn::ref::freshSeed), printed so that a run can be
/// replayed with ATTN_SEED.
uint64_t printedSeed() {
  const uint64_t seed = attn::ref::freshSeed();
  std::printf("ATTN_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

/// Compiles `src` through the reference lowering and launches it on `ins`
/// into an output whose every byte is 0xFF (NaN in f32, f16 and bf16), so
/// that an element the kernel does not write fails the comparison.
Tensor runPoisoned(const std::string &src, std::vector<HostArray> ins) {
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Reference;
  auto kernel = engine().compile(src, options);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\n" << src;
    return {};
  }
  std::vector<TensorView> views;
  for (HostArray &a : ins)
    views.push_back(TensorView::of(a));
  auto shape = (*kernel)->resultShape(views);
  if (!shape) {
    ADD_FAILURE() << llvm::toString(shape.takeError());
    return {};
  }
  HostArray out{(*kernel)->result().dtype, *shape, {}};
  out.bytes.assign(out.numel() * attn::dtypeSize(out.dtype), 0xFF);
  if (llvm::Error e = (*kernel)->launch(views, TensorView::of(out))) {
    ADD_FAILURE() << llvm::toString(std::move(e));
    return {};
  }
  return *attn::ref::fromHost(out);
}

HostArray f32(const Tensor &t) { return attn::ref::toHost(t, DType::F32); }

/// `t` rounded to `dtype` and back: the oracle then sees exactly what the
/// kernel reads.
Tensor roundTo(const Tensor &t, DType dtype) {
  return *attn::ref::fromHost(attn::ref::toHost(t, dtype));
}

void expectClose(const Tensor &got, const Tensor &want, double tol,
                 const std::string &what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  EXPECT_LE(attn::ref::relError(got, want), tol) << what;
}

/// A [B, H, T, S] logit map, -inf right of the causal diagonal
/// (j > i + S - T); row `deadRow` of every head (when >= 0) entirely -inf.
Tensor maskedLogits(std::vector<int64_t> shape, uint64_t seed,
                    double stddev = 1, int64_t deadRow = -1) {
  Tensor s = attn::ref::randn(shape, seed, stddev);
  const int64_t T = shape[2], S = shape[3];
  for (size_t n = 0; n < s.data.size(); ++n) {
    int64_t j = n % S, i = n / S % T;
    if (j > i + S - T || i == deadRow)
      s.data[n] = -kInf;
  }
  return s;
}

/// "?x?x?xD" tensors of element type `elt` throughout a program text.
std::string program(const std::string &text, int64_t d,
                    const std::string &elt = "f32") {
  return subst(text, {{"$D", std::to_string(d)}, {"$E", elt}});
}

struct Shape {
  int64_t b, hq, hk, t, s;
};
/// Odd T (1, 5, 17), GQA (Hq = 2 Hk) and T < S.
const Shape kShapes[] = {
    {1, 2, 2, 1, 1}, {2, 4, 2, 5, 5}, {1, 2, 1, 17, 17}, {2, 4, 2, 5, 12}};

//===----------------------------------------------------------------------===//
// attn.rope inverse
//===----------------------------------------------------------------------===//

TEST(GradOps, RopeInverse) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  const char *tmpl = R"(
func.func @main(%x: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %r = attn.rope %x $ATTRS inverse : tensor<?x?x?x16xf32>
  return %r : tensor<?x?x?x16xf32>
})";
  struct Case {
    const char *attrs;
    attn::ref::RopeStyle style;
    int64_t rotaryDim, offset;
    double theta;
  };
  using attn::ref::RopeStyle;
  const Case cases[] = {
      {"", RopeStyle::Half, 16, 0, 1e4},
      {"style interleaved", RopeStyle::Interleaved, 16, 0, 1e4},
      {"rotary_dim 6 offset 3", RopeStyle::Half, 6, 3, 1e4},
      {"style interleaved theta 5.000000e+05 rotary_dim 10 offset 1000",
       RopeStyle::Interleaved, 10, 1000, 5e5}};
  for (const Case &c : cases)
    for (int64_t t : {1, 5, 17}) {
      std::string src = subst(tmpl, {{"$ATTRS", c.attrs}});
      Tensor x = attn::ref::randn({2, 3, t, 16}, seed + t);
      Tensor want =
          attn::ref::ropeGrad(x, c.theta, c.rotaryDim, c.style, c.offset);
      std::string what = std::string(c.attrs) + ", T = " + std::to_string(t);
      expectClose(runPoisoned(src, {f32(x)}), want, 1e-5, what);
      // The program oracle evaluates the inverse rotation...
      Program p(src);
      auto ref = attn::ref::evaluate(p.main(), {x});
      ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
      expectClose(*ref, want, 1e-12, "oracle: " + what);
      // ...and differentiates it: the transpose is the forward rotation.
      Tensor dy = attn::ref::randn(x.shape, seed + 100 + t);
      auto grads = attn::ref::evaluateGrad(p.main(), {x}, dy);
      ASSERT_TRUE(static_cast<bool>(grads))
          << llvm::toString(grads.takeError());
      expectClose(*(*grads)[0],
                  attn::ref::rope(dy, c.theta, c.rotaryDim, c.style, c.offset),
                  1e-12, "oracle gradient: " + what);
    }
}

TEST(GradOps, RopeInversePositions) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  const char *src = R"(
func.func @main(%x: tensor<?x?x?x8xf32>, %pos: tensor<?xi64>) -> tensor<?x?x?x8xf32> {
  %r = attn.rope %x positions(%pos) rotary_dim 6 inverse : tensor<?x?x?x8xf32>, tensor<?xi64>
  return %r : tensor<?x?x?x8xf32>
})";
  for (int64_t t : {1, 5, 17}) {
    Tensor x = attn::ref::randn({1, 2, t, 8}, seed + t);
    Tensor pos = attn::ref::randUniform({t}, seed + 50 + t, 0, 20000);
    std::vector<int64_t> p;
    for (double &v : pos.data)
      p.push_back(static_cast<int64_t>(v = std::floor(v)));
    Tensor want =
        attn::ref::ropeGrad(x, 1e4, 6, attn::ref::RopeStyle::Half, 0, &p);
    Tensor got = runPoisoned(src, {f32(x), attn::ref::toHost(pos, DType::I64)});
    expectClose(got, want, 1e-5, "T = " + std::to_string(t));
  }
}

//===----------------------------------------------------------------------===//
// attn.softmax_grad and attn.logsumexp
//===----------------------------------------------------------------------===//

TEST(GradOps, SoftmaxGrad) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  const char *src = R"(
func.func @main(%p: tensor<?x?x?x?xf32>, %dp: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %dx = attn.softmax_grad %p, %dp : tensor<?x?x?x?xf32>
  return %dx : tensor<?x?x?x?xf32>
})";
  for (const Shape &sh : kShapes) {
    std::vector<int64_t> shape = {sh.b, sh.hq, sh.t, sh.s};
    // Masked entries and, with T > 1, a fully masked row.
    Tensor x = maskedLogits(shape, seed + sh.t, 2.0, sh.t > 1 ? 1 : -1);
    Tensor p = roundTo(attn::ref::softmax(x), DType::F32);
    Tensor dp = attn::ref::randn(shape, seed + 7 + sh.s);
    expectClose(
        runPoisoned(src, {f32(p), f32(dp)}), attn::ref::softmaxGrad(dp, x),
        1e-5, "T = " + std::to_string(sh.t) + ", S = " + std::to_string(sh.s));
  }
}

TEST(GradOps, LogSumExp) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  const char *src = R"(
func.func @main(%s: tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  %l = attn.logsumexp %s : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  return %l : tensor<?x?x?xf32>
})";
  for (const Shape &sh : kShapes)
    for (double stddev : {1.0, 60.0}) { // 60: exp overflows without the shift
      Tensor s = roundTo(maskedLogits({sh.b, sh.hq, sh.t, sh.s}, seed + sh.s,
                                      stddev, sh.t > 1 ? sh.t - 1 : -1),
                         DType::F32);
      Tensor want = Tensor::zeros({sh.b, sh.hq, sh.t});
      for (int64_t r = 0; r < want.numel(); ++r) {
        const double *row = &s.data[r * sh.s];
        double m = -kInf, sum = 0;
        for (int64_t j = 0; j < sh.s; ++j)
          m = std::max(m, row[j]);
        for (int64_t j = 0; j < sh.s && m != -kInf; ++j)
          sum += std::exp(row[j] - m);
        want.data[r] = m == -kInf ? -kInf : m + std::log(sum);
      }
      expectClose(runPoisoned(src, {f32(s)}), want, 1e-5,
                  "T = " + std::to_string(sh.t) +
                      ", stddev = " + std::to_string(stddev));
    }
}

//===----------------------------------------------------------------------===//
// attn.weighted_sum_grad
//===----------------------------------------------------------------------===//

const char *kWeightedSumGrad = R"(
func.func @main(%p: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x$Dx$E>, %do: tensor<?x?x?x$Dx$E>) -> $RT {
  %dp, %dv = attn.weighted_sum_grad %p, %v, %do : (tensor<?x?x?x?xf32>, tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dx$E>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x$Dx$E>)
  return $R : $RT
})";

/// dp and dv of weighted_sum_grad for element type `dtype` of v and dO,
/// within `tol` (dp is f32 in either case: `tolDp`).
void checkWeightedSumGrad(DType dtype, const std::string &elt, double tolDp,
                          double tol, uint64_t seed) {
  const int64_t dv = 12;
  for (const Shape &sh : kShapes) {
    Tensor p = roundTo(attn::ref::softmax(maskedLogits(
                           {sh.b, sh.hq, sh.t, sh.s}, seed + sh.t, 2.0)),
                       DType::F32);
    Tensor v =
        roundTo(attn::ref::randn({sh.b, sh.hk, sh.s, dv}, seed + 1), dtype);
    Tensor dO =
        roundTo(attn::ref::randn({sh.b, sh.hq, sh.t, dv}, seed + 2), dtype);
    attn::ref::WeightedSumGrad want = attn::ref::weightedSumGrad(dO, p, v);
    std::vector<HostArray> ins = {f32(p), attn::ref::toHost(v, dtype),
                                  attn::ref::toHost(dO, dtype)};
    std::string what = elt + ", Hq = " + std::to_string(sh.hq) +
                       ", Hk = " + std::to_string(sh.hk) +
                       ", T = " + std::to_string(sh.t) +
                       ", S = " + std::to_string(sh.s);
    auto returning = [&](const char *result, const char *type) {
      return program(subst(kWeightedSumGrad, {{"$RT", type}, {"$R", result}}),
                     dv, elt);
    };
    expectClose(runPoisoned(returning("%dp", "tensor<?x?x?x?xf32>"), ins),
                want.p, tolDp, "dp, " + what);
    expectClose(runPoisoned(returning("%dv", "tensor<?x?x?x$Dx$E>"), ins),
                want.v, tol, "dv, " + what);
  }
}

TEST(GradOps, WeightedSumGrad) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  checkWeightedSumGrad(DType::F32, "f32", 1e-5, 1e-5, seed);
}

/// bf16 v and dO: dp is still f32; dv is rounded once to bf16 (8 bits of
/// mantissa, half an ulp = 2^-9 of an element), accumulated in f32.
TEST(GradOps, WeightedSumGradBf16) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  checkWeightedSumGrad(DType::BF16, "bf16", 1e-5, 4e-3, seed);
}

//===----------------------------------------------------------------------===//
// attn.l2norm_grad
//===----------------------------------------------------------------------===//

TEST(GradOps, L2NormGrad) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  const char *tmpl = R"(
func.func @main(%x: tensor<?x?x?x$Dx$E>, %dy: tensor<?x?x?x$Dx$E>) -> tensor<?x?x?x$Dx$E> {
  %dx = attn.l2norm_grad %x, %dy $ATTRS : tensor<?x?x?x$Dx$E>
  return %dx : tensor<?x?x?x$Dx$E>
})";
  struct Case {
    const char *attrs;
    double eps;
    DType dtype;
    const char *elt;
    double tol;
  };
  // bf16: dx rounded once to bf16.
  const Case cases[] = {{"", 1e-6, DType::F32, "f32", 1e-5},
                        {"eps 1.000000e-01", 0.1, DType::F32, "f32", 1e-5},
                        {"", 1e-6, DType::BF16, "bf16", 4e-3}};
  for (const Case &c : cases)
    for (int64_t t : {1, 5, 17}) {
      Tensor x = roundTo(attn::ref::randn({2, 3, t, 16}, seed + t), c.dtype);
      Tensor dy = roundTo(attn::ref::randn(x.shape, seed + 9 + t), c.dtype);
      std::string src = subst(program(tmpl, 16, c.elt), {{"$ATTRS", c.attrs}});
      expectClose(runPoisoned(src, {attn::ref::toHost(x, c.dtype),
                                    attn::ref::toHost(dy, c.dtype)}),
                  attn::ref::l2normGrad(dy, x, c.eps), c.tol,
                  std::string(c.elt) + " " + c.attrs +
                      ", T = " + std::to_string(t));
    }
}

//===----------------------------------------------------------------------===//
// attn.short_conv_grad
//===----------------------------------------------------------------------===//

TEST(GradOps, ShortConvGrad) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  const char *tmpl = R"(
func.func @main(%x: tensor<?x?x?x8xf32>, %k: tensor<?x8x$Kxf32>, %dy: tensor<?x?x?x8xf32>) -> $RT {
  %dx, %dk = attn.short_conv_grad %x, %k, %dy $ATTRS : tensor<?x?x?x8xf32>, tensor<?x8x$Kxf32>
  return $R : $RT
})";
  for (bool silu : {false, true})
    for (int64_t kSize : {3, 4})
      for (int64_t t : {1, 5, 17}) {
        Tensor x = attn::ref::randn({2, 3, t, 8}, seed + t);
        Tensor k = attn::ref::randn({3, 8, kSize}, seed + 1, 0.5);
        Tensor dy = attn::ref::randn(x.shape, seed + 2 + t);
        attn::ref::ShortConvGrad want =
            attn::ref::shortConvGrad(dy, x, k, silu);
        std::string src = subst(tmpl, {{"$ATTRS", silu ? "silu" : ""},
                                       {"$K", std::to_string(kSize)}});
        std::string what = std::string(silu ? "silu" : "plain") +
                           ", K = " + std::to_string(kSize) +
                           ", T = " + std::to_string(t);
        std::vector<HostArray> ins = {f32(x), f32(k), f32(dy)};
        expectClose(runPoisoned(subst(src, {{"$RT", "tensor<?x?x?x8xf32>"},
                                            {"$R", "%dx"}}),
                                ins),
                    want.x, 1e-5, "dx, " + what);
        expectClose(runPoisoned(subst(src, {{"$RT", "tensor<?x8x$Kxf32>"},
                                            {"$K", std::to_string(kSize)},
                                            {"$R", "%dk"}}),
                                ins),
                    want.kernel, 1e-5, "dkernel, " + what);
      }
}

//===----------------------------------------------------------------------===//
// attn.head_norm_grad
//===----------------------------------------------------------------------===//

/// The concatenation of the elements of `parts`, flattened: the gate's
/// weight and bias gradients are compared as one vector, relative to its
/// largest entry, since the bias's single sum over every row may cancel to
/// near 0 by chance.
Tensor concat(const std::vector<const Tensor *> &parts) {
  Tensor out;
  for (const Tensor *p : parts)
    out.data.insert(out.data.end(), p->data.begin(), p->data.end());
  out.shape = {static_cast<int64_t>(out.data.size())};
  return out;
}

TEST(GradOps, HeadNormGrad) {
  const uint64_t seed = printedSeed();
  SCOPED_TRACE("ATTN_SEED=" + std::to_string(seed));
  const char *plain = R"(
func.func @main(%o: tensor<?x?x?x16xf32>, %g: tensor<16xf32>, %dy: tensor<?x?x?x16xf32>) -> $RT {
  %dx, %dg = attn.head_norm_grad %o, %g, %dy eps 1.000000e-03 : (tensor<?x?x?x16xf32>, tensor<16xf32>, tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<16xf32>)
  return $R : $RT
})";
  const char *gated = R"(
func.func @main(%o: tensor<?x?x?x16xf32>, %g: tensor<16xf32>, %w: tensor<16xf32>, %b: tensor<1xf32>, %dy: tensor<?x?x?x16xf32>) -> $RT {
  %dx, %dg, %dw, %db = attn.head_norm_grad %o, %g gate(%w, %b), %dy eps 1.000000e-03 : (tensor<?x?x?x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<1xf32>, tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<1xf32>)
  return $R : $RT
})";
  const std::vector<std::pair<std::string, std::string>> dx = {
      {"$RT", "tensor<?x?x?x16xf32>"}, {"$R", "%dx"}};
  const std::vector<std::pair<std::string, std::string>> dg = {
      {"$RT", "tensor<16xf32>"}, {"$R", "%dg"}};
  for (bool gate : {false, true})
    for (int64_t t : {1, 5, 17}) {
      Tensor o = attn::ref::randn({2, 4, t, 16}, seed + t);
      Tensor gamma = attn::ref::randn({16}, seed + 1, 0.1);
      for (double &v : gamma.data)
        v += 1.0;
      Tensor w = attn::ref::randn({16}, seed + 2, 0.3);
      Tensor b = attn::ref::randn({1}, seed + 3, 0.3);
      Tensor dy = attn::ref::randn(o.shape, seed + 4 + t);
      attn::ref::HeadNormGrad want = attn::ref::headNormGrad(
          dy, o, gamma, 1e-3, gate ? &w : nullptr, gate ? &b : nullptr);
      std::vector<HostArray> ins = {f32(o), f32(gamma)};
      if (gate)
        ins.insert(ins.end(), {f32(w), f32(b)});
      ins.push_back(f32(dy));
      std::string src = gate ? gated : plain;
      std::string what =
          std::string(gate ? "gated" : "plain") + ", T = " + std::to_string(t);
      expectClose(runPoisoned(subst(src, dx), ins), want.o, 1e-5,
                  "dx, " + what);
      expectClose(runPoisoned(subst(src, dg), ins), want.gamma, 1e-5,
                  "dgamma, " + what);
      if (!gate)
        continue;
      Tensor dw = runPoisoned(
          subst(src, {{"$RT", "tensor<16xf32>"}, {"$R", "%dw"}}), ins);
      Tensor db = runPoisoned(
          subst(src, {{"$RT", "tensor<1xf32>"}, {"$R", "%db"}}), ins);
      ASSERT_EQ(dw.shape, want.gateW.shape);
      ASSERT_EQ(db.shape, want.gateB.shape);
      expectClose(concat({&dw, &db}), concat({&want.gateW, &want.gateB}), 1e-5,
                  "dgate_w, dgate_b, " + what);
    }
}

} // namespace
