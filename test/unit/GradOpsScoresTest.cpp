//===- GradOpsScoresTest.cpp - scores/MTA VJP ops vs the fp64 oracle ------===//
//
// attn.scores_grad, attn.kq_conv_grad and attn.head_mix_grad run through
// the CPU engine's reference lowering, one program per result, against
// reference/'s scoresGrad, kqConvGrad and headMixGrad on fresh random
// inputs (seed in every message; ATTN_SEED replays). Cotangents hold NaN, inf
// and huge values in the cells the ops must not read. docs/reference/testing.md
// lists the suite.
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"

#include <limits>

namespace {

using namespace attn::exec_test;
namespace ref = attn::ref;

/// The garbage written into cells an op must ignore, by position.
double garbage(int64_t n) {
  const double values[] = {std::numeric_limits<double>::quiet_NaN(), 1e30,
                           -std::numeric_limits<double>::infinity(), -1e30,
                           std::numeric_limits<double>::infinity()};
  return values[n % 5];
}

/// `t` rounded to `dtype` and back, so that the oracle sees what the
/// kernel sees.
Tensor roundTo(const Tensor &t, attn::DType dtype) {
  auto back = ref::fromHost(ref::toHost(t, dtype));
  EXPECT_TRUE(static_cast<bool>(back));
  return back ? *back : Tensor();
}

/// Runs `source` on `ins` (each in its dtype) through the reference
/// pipeline.
Tensor runTyped(const std::string &source, const std::vector<Tensor> &ins,
                const std::vector<attn::DType> &dtypes) {
  attn::CompileOptions options;
  options.pipeline = attn::Pipeline::Reference;
  auto kernel = engine().compile(source, options);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\n" << source;
    return {};
  }
  std::vector<HostArray> host;
  for (size_t i = 0; i < ins.size(); ++i)
    host.push_back(ref::toHost(ins[i], dtypes[i]));
  auto out = (*kernel)->run(host);
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  auto t = ref::fromHost(*out);
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : Tensor();
}

/// "tensor<?x?x?x16xf32>" for a rank-`rank` tensor with static last dim
/// `last` (0: dynamic).
std::string tensorType(int rank, int64_t last, const std::string &elt) {
  std::string s = "tensor<";
  for (int i = 0; i + 1 < rank; ++i)
    s += "?x";
  s += (last ? std::to_string(last) : std::string("?")) + "x" + elt + ">";
  return s;
}

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + v[i];
  return s;
}

/// `func.func @main(args) -> results[which]` around one gradient op whose
/// text, between the op name and `:`, is `body`.
std::string gradProgram(const std::string &op, const std::string &body,
                        const std::vector<std::string> &argTypes,
                        const std::vector<std::string> &resultTypes,
                        size_t which) {
  std::vector<std::string> params;
  for (size_t i = 0; i < argTypes.size(); ++i)
    params.push_back("%a" + std::to_string(i) + ": " + argTypes[i]);
  return "func.func @main(" + join(params) + ") -> " + resultTypes[which] +
         " {\n  %r:" + std::to_string(resultTypes.size()) + " = " + op + " " +
         body + " : (" + join(argTypes) + ") -> (" + join(resultTypes) +
         ")\n  return %r#" + std::to_string(which) + " : " +
         resultTypes[which] + "\n}\n";
}

//===----------------------------------------------------------------------===//
// attn.scores_grad
//===----------------------------------------------------------------------===//

struct ScoresCase {
  int64_t b, hq, hk, t, s, d;
  ref::Mask mask = ref::Mask::Causal;
  int64_t window = 0;
  double scale = 0; ///< 0: the default 1/sqrt(D)
  bool path = false, gate = false, gateScaled = false;
  bool bf16 = false;
};

std::string describe(const ScoresCase &c, uint64_t seed) {
  std::ostringstream os;
  os << "B " << c.b << " Hq " << c.hq << " Hk " << c.hk << " T " << c.t << " S "
     << c.s << " D " << c.d << " mask " << int(c.mask) << " window " << c.window
     << " scale " << c.scale << (c.path ? " path" : "")
     << (c.gate ? " gate" : "") << (c.gateScaled ? " scaled" : "")
     << (c.bf16 ? " bf16" : " f32") << " seed " << seed;
  return os.str();
}

bool visible(const ScoresCase &c, int64_t i, int64_t j) {
  int64_t p = i + c.s - c.t;
  switch (c.mask) {
  case ref::Mask::None:
    return true;
  case ref::Mask::Causal:
    return j <= p;
  case ref::Mask::SlidingWindow:
    return j <= p && j > p - c.window;
  }
  return false;
}

/// Random operands (q, k, [w, beta], [g]) of a case; q, k rounded to bf16
/// for a bf16 case.
std::vector<Tensor> scoresInputs(const ScoresCase &c, uint64_t seed) {
  std::vector<Tensor> ins = {ref::randn({c.b, c.hq, c.t, c.d}, seed),
                             ref::randn({c.b, c.hk, c.s, c.d}, seed + 1)};
  if (c.bf16)
    for (Tensor &t : ins)
      t = roundTo(t, attn::DType::BF16);
  if (c.path) {
    ins.push_back(unitRows({c.b, c.hk, c.s, c.d}, seed + 2));
    ins.push_back(ref::randUniform({c.b, c.hk, c.s}, seed + 3, 0.0, 2.0));
  }
  if (c.gate)
    ins.push_back(ref::randUniform({c.b, c.hq, c.s}, seed + 4, -2.0, 0.0));
  return ins;
}

/// A random cotangent with garbage in every masked cell (`poison`), or
/// random values there too.
Tensor scoresCotangent(const ScoresCase &c, uint64_t seed, bool poison) {
  Tensor ds = ref::randn({c.b, c.hq, c.t, c.s}, seed + 5);
  int64_t n = 0;
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h)
      for (int64_t i = 0; i < c.t; ++i)
        for (int64_t j = 0; j < c.s; ++j)
          if (poison && !visible(c, i, j))
            ds.at(b, h, i, j) = garbage(n++);
  return ds;
}

std::string scoresAttrs(const ScoresCase &c) {
  std::string s;
  if (c.path)
    s += " path(%a2, %a3)";
  if (c.gate)
    s += " gate(%a" + std::to_string(c.path ? 4 : 2) + ")";
  if (c.gateScaled)
    s += " scaled";
  if (c.mask == ref::Mask::None)
    s += " mask none";
  if (c.mask == ref::Mask::SlidingWindow)
    s += " mask sliding_window window " + std::to_string(c.window);
  if (c.scale)
    s += " scale " + std::to_string(c.scale);
  return s;
}

/// The program returning result `which` of scores_grad for case `c`.
std::string scoresGradProgram(const ScoresCase &c, size_t which) {
  std::string act = tensorType(4, c.d, c.bf16 ? "bf16" : "f32");
  std::vector<std::string> args = {act, act}, results = {act, act};
  if (c.path) {
    args.push_back(tensorType(4, c.d, "f32"));
    args.push_back(tensorType(3, 0, "f32"));
    results.push_back(args[2]);
    results.push_back(args[3]);
  }
  if (c.gate) {
    args.push_back(tensorType(3, 0, "f32"));
    results.push_back(args.back());
  }
  std::string operands =
      "%a0, %a1" + scoresAttrs(c) + ", %a" + std::to_string(args.size());
  args.push_back(tensorType(4, 0, "f32"));
  return gradProgram("attn.scores_grad", operands, args, results, which);
}

/// Every result of scores_grad for case `c` vs the oracle's.
void expectScoresGradMatches(const ScoresCase &c, uint64_t seed) {
  SCOPED_TRACE(describe(c, seed));
  std::vector<Tensor> ins = scoresInputs(c, seed);
  Tensor ds = scoresCotangent(c, seed, /*poison=*/true);
  double scale = c.scale ? c.scale : 1.0 / std::sqrt(double(c.d));
  const Tensor *w = c.path ? &ins[2] : nullptr;
  const Tensor *beta = c.path ? &ins[3] : nullptr;
  const Tensor *g = c.gate ? &ins.back() : nullptr;
  ref::ScoresGrad want = ref::scoresGrad(ds, ins[0], ins[1], scale, w, beta, g,
                                         c.gateScaled, c.mask, c.window);
  std::vector<std::pair<const char *, const Tensor *>> results = {
      {"dq", &want.q}, {"dk", &want.k}};
  if (c.path) {
    results.push_back({"dw", &want.w});
    results.push_back({"dbeta", &want.beta});
  }
  if (c.gate)
    results.push_back({"dg", &want.g});
  std::vector<Tensor> args = ins;
  args.push_back(ds);
  std::vector<attn::DType> dtypes(args.size(), attn::DType::F32);
  if (c.bf16)
    dtypes[0] = dtypes[1] = attn::DType::BF16;
  for (size_t r = 0; r < results.size(); ++r) {
    std::string source = scoresGradProgram(c, r);
    Tensor got = runTyped(source, args, dtypes);
    ASSERT_EQ(got.shape, results[r].second->shape) << results[r].first;
    // bf16 dq and dk are rounded once at the end: 2^-8 of the largest
    // entry, with room for the f32 sums.
    double tol = c.bf16 && r < 2 ? 1e-2 : 1e-5;
    EXPECT_LE(ref::relError(got, *results[r].second), tol)
        << results[r].first << " of\n"
        << source;
  }
}

TEST(ScoresGradOp, PlainCausal) {
  expectScoresGradMatches({2, 2, 2, 7, 7, 8}, ref::freshSeed());
}

TEST(ScoresGradOp, PlainMaskNoneLongerKeysGqaScale) {
  ScoresCase c{1, 4, 2, 5, 9, 8};
  c.mask = ref::Mask::None;
  c.scale = 0.3;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, PlainMaskNoneMoreQueriesThanKeys) {
  ScoresCase c{1, 2, 1, 6, 4, 8};
  c.mask = ref::Mask::None;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, SlidingWindowGqaQueryOffset) {
  ScoresCase c{2, 4, 2, 5, 8, 8};
  c.mask = ref::Mask::SlidingWindow;
  c.window = 3;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, GateUnscaledQueryOffset) {
  ScoresCase c{1, 2, 2, 5, 8, 8};
  c.gate = true;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, GateScaledSlidingWindowGqa) {
  ScoresCase c{1, 4, 2, 6, 6, 8};
  c.gate = c.gateScaled = true;
  c.mask = ref::Mask::SlidingWindow;
  c.window = 2;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, PathCausalGqaQueryOffset) {
  ScoresCase c{2, 4, 2, 5, 8, 8};
  c.path = true;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, PathGateUnscaledCausal) {
  ScoresCase c{1, 2, 2, 7, 7, 8};
  c.path = c.gate = true;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, PathGateScaledSlidingWindowGqa) {
  ScoresCase c{1, 4, 2, 6, 9, 8};
  c.path = c.gate = c.gateScaled = true;
  c.mask = ref::Mask::SlidingWindow;
  c.window = 4;
  c.scale = 0.4;
  expectScoresGradMatches(c, ref::freshSeed());
}

TEST(ScoresGradOp, Bf16PathGateGqa) {
  ScoresCase c{1, 4, 2, 6, 8, 16};
  c.path = c.gate = true;
  c.bf16 = true;
  expectScoresGradMatches(c, ref::freshSeed());
}

// The cells a mask hides are never read: NaN, inf and 1e30 there give
// bit for bit the results of finite values there.
TEST(ScoresGradOp, MaskedCotangentIsNeverRead) {
  ScoresCase c{1, 2, 1, 6, 8, 8};
  c.path = c.gate = true;
  c.mask = ref::Mask::SlidingWindow;
  c.window = 3;
  uint64_t seed = ref::freshSeed();
  SCOPED_TRACE(describe(c, seed));
  std::vector<Tensor> clean = scoresInputs(c, seed), dirty = clean;
  clean.push_back(scoresCotangent(c, seed, /*poison=*/false));
  dirty.push_back(scoresCotangent(c, seed, /*poison=*/true));
  std::vector<attn::DType> dtypes(clean.size(), attn::DType::F32);
  for (size_t r = 0; r < 5; ++r) {
    std::string source = scoresGradProgram(c, r);
    Tensor a = runTyped(source, clean, dtypes);
    Tensor b = runTyped(source, dirty, dtypes);
    EXPECT_EQ(a.data, b.data) << "result " << r << " of\n" << source;
  }
}

//===----------------------------------------------------------------------===//
// attn.kq_conv_grad and attn.head_mix_grad
//===----------------------------------------------------------------------===//

/// A [B, H, T, S] score map: random left of the diagonal with -inf in the
/// cells a sliding window of 3 hides (masked logits), garbage right of it.
Tensor scoreMapInput(int64_t b, int64_t h, int64_t t, int64_t s,
                     uint64_t seed) {
  Tensor x = ref::randn({b, h, t, s}, seed);
  int64_t n = 0;
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < s; ++j) {
          int64_t p = i + s - t;
          if (j > p)
            x.at(bb, hh, i, j) = garbage(n++);
          else if (j <= p - 3)
            x.at(bb, hh, i, j) = -std::numeric_limits<double>::infinity();
        }
  return x;
}

/// A random cotangent with garbage right of the diagonal.
Tensor mapCotangent(const std::vector<int64_t> &shape, uint64_t seed) {
  Tensor dy = ref::randn(shape, seed);
  int64_t t = shape[2], s = shape[3], n = 0;
  for (int64_t b = 0; b < shape[0]; ++b)
    for (int64_t h = 0; h < shape[1]; ++h)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = i + s - t + 1; j < s; ++j)
          dy.at(b, h, i, j) = garbage(n++ + 1);
  return dy;
}

/// Both results of a map op's gradient (`op` with weight type
/// `weightType`) vs the oracle's `want`.
void expectMapGradMatches(const std::string &op, const std::string &stage,
                          const std::string &weightType,
                          const std::vector<Tensor> &ins,
                          const std::vector<const Tensor *> &want,
                          const std::string &what) {
  SCOPED_TRACE(what);
  std::string map = tensorType(4, 0, "f32");
  std::vector<std::string> args = {map, weightType, map};
  std::vector<std::string> results = {map, weightType};
  std::vector<attn::DType> dtypes(3, attn::DType::F32);
  for (size_t r = 0; r < 2; ++r) {
    std::string source =
        gradProgram(op, stage + " %a0, %a1, %a2", args, results, r);
    Tensor got = runTyped(source, ins, dtypes);
    ASSERT_EQ(got.shape, want[r]->shape) << "result " << r;
    EXPECT_LE(ref::relError(got, *want[r]), 1e-5) << "result " << r << " of\n"
                                                  << source;
  }
}

struct ConvCase {
  int64_t cq, ck, t, s;
  ref::Stage stage;
};

TEST(KqConvGradOp, KernelsAndStages) {
  const ConvCase cases[] = {{1, 1, 6, 6, ref::Stage::Pre},
                            {2, 3, 5, 8, ref::Stage::Post},
                            {3, 5, 6, 9, ref::Stage::Pre},
                            {3, 5, 7, 7, ref::Stage::Post}};
  uint64_t seed = ref::freshSeed();
  for (const ConvCase &c : cases) {
    const int64_t b = 2, h = 2;
    std::vector<Tensor> ins = {scoreMapInput(b, h, c.t, c.s, seed),
                               ref::randn({h, c.cq, c.ck}, seed + 1),
                               mapCotangent({b, h, c.t, c.s}, seed + 2)};
    ref::KqConvGrad want = ref::kqConvGrad(ins[2], ins[0], ins[1], c.stage);
    std::string stage = c.stage == ref::Stage::Pre ? "pre" : "post";
    std::string kernelType = "tensor<" + std::to_string(h) + "x" +
                             std::to_string(c.cq) + "x" + std::to_string(c.ck) +
                             "xf32>";
    std::ostringstream what;
    what << "kernel " << c.cq << "x" << c.ck << " " << stage << " T " << c.t
         << " S " << c.s << " seed " << seed;
    expectMapGradMatches("attn.kq_conv_grad", stage, kernelType, ins,
                         {&want.x, &want.theta}, what.str());
    seed += 3;
  }
}

TEST(HeadMixGradOp, GroupSizesAndStages) {
  const int64_t b = 2, h = 4, t = 5, s = 7;
  uint64_t seed = ref::freshSeed();
  for (int64_t ch : {1, 2, 4})
    for (ref::Stage st : {ref::Stage::Pre, ref::Stage::Post}) {
      std::vector<Tensor> ins = {scoreMapInput(b, h, t, s, seed),
                                 ref::randn({h, ch}, seed + 1),
                                 mapCotangent({b, h, t, s}, seed + 2)};
      ref::HeadMixGrad want = ref::headMixGrad(ins[2], ins[0], ins[1], st);
      std::string stage = st == ref::Stage::Pre ? "pre" : "post";
      std::string weightType =
          "tensor<" + std::to_string(h) + "x" + std::to_string(ch) + "xf32>";
      std::ostringstream what;
      what << "c_h " << ch << " " << stage << " seed " << seed;
      expectMapGradMatches("attn.head_mix_grad", stage, weightType, ins,
                           {&want.x, &want.W}, what.str());
      seed += 3;
    }
}

/// Packed sequences: kq_conv, head_mix and their gradients with cu_seqlens
/// against the oracle's, on maps whose cells across sequences hold values
/// (the ops must read them as masked) and cotangents with garbage wherever
/// the output is a constant (right of the diagonal, before the row's
/// sequence).
TEST(MtaMapOps, PackedSequences) {
  const std::vector<int64_t> cu = {0, 3, 3, 4, 9, 11};
  const int64_t b = 2, h = 2, t = cu.back();
  Tensor offsets = Tensor::zeros({static_cast<int64_t>(cu.size())});
  for (size_t i = 0; i < cu.size(); ++i)
    offsets.data[i] = static_cast<double>(cu[i]);
  auto startOf = [&](int64_t i) {
    int64_t lo = 0;
    for (int64_t c : cu)
      if (c <= i)
        lo = c;
    return lo;
  };
  uint64_t seed = ref::freshSeed();
  Tensor x = ref::randn({b, h, t, t}, seed);
  Tensor dy = ref::randn({b, h, t, t}, seed + 1);
  int64_t n = 0;
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < t; ++j) {
          if (j > i)
            x.at(bb, hh, i, j) = garbage(n++);
          if (j > i || j < startOf(i))
            dy.at(bb, hh, i, j) = garbage(n++);
        }
  std::string map = tensorType(4, 0, "f32"), cuType = "tensor<?xi32>";
  const std::vector<attn::DType> dtypes = {attn::DType::F32, attn::DType::F32,
                                           attn::DType::F32, attn::DType::I32};
  for (ref::Stage st : {ref::Stage::Pre, ref::Stage::Post}) {
    std::string stage = st == ref::Stage::Pre ? "pre" : "post";
    std::ostringstream what;
    what << stage << " seed " << seed;
    SCOPED_TRACE(what.str());
    // kq_conv 3 x 5 and head_mix c_h = 2, forward and gradient.
    Tensor theta = ref::randn({h, 3, 5}, seed + 2);
    Tensor w = ref::randn({h, 2}, seed + 3);
    for (bool conv : {true, false}) {
      const Tensor &param = conv ? theta : w;
      std::string paramType = conv ? "tensor<2x3x5xf32>" : "tensor<2x2xf32>";
      std::string op = conv ? "attn.kq_conv" : "attn.head_mix";
      std::string fwd =
          "func.func @main(%a0: " + map + ", %a1: " + paramType +
          ", %a2: " + cuType + ") -> " + map + " {\n  %r = " + op + " " +
          stage + " %a0, %a1 cu_seqlens(%a2) : " + map + ", " + paramType +
          ", " + cuType + "\n  return %r : " + map + "\n}\n";
      Tensor want =
          conv ? ref::kqConv(x, theta, st, &cu) : ref::headMix(x, w, st, &cu);
      Tensor got =
          runTyped(fwd, {x, param, offsets}, {dtypes[0], dtypes[1], dtypes[3]});
      ASSERT_EQ(got.shape, want.shape) << fwd;
      EXPECT_LE(ref::relError(got, want), 1e-5) << fwd;
      std::vector<Tensor> wantGrad;
      if (conv) {
        ref::KqConvGrad g = ref::kqConvGrad(dy, x, theta, st, &cu);
        wantGrad = {g.x, g.theta};
      } else {
        ref::HeadMixGrad g = ref::headMixGrad(dy, x, w, st, &cu);
        wantGrad = {g.x, g.W};
      }
      std::vector<std::string> args = {map, paramType, map, cuType};
      std::vector<std::string> results = {map, paramType};
      for (size_t r = 0; r < 2; ++r) {
        std::string source =
            gradProgram(op + "_grad", stage + " %a0, %a1, %a2 cu_seqlens(%a3)",
                        args, results, r);
        Tensor g = runTyped(source, {x, param, dy, offsets}, dtypes);
        ASSERT_EQ(g.shape, wantGrad[r].shape) << source;
        EXPECT_LE(ref::relError(g, wantGrad[r]), 1e-5)
            << "result " << r << " of\n"
            << source;
      }
    }
  }
}

} // namespace
