//===- ExecutionHelpers.h - shared helpers of the execution gtests -*- C++
//-*-===//
//
// The engine, program parsing, runs through a pipeline, oracle comparisons
// and random inputs shared by ExecutionTest.cpp and PathFusedTest.cpp (one
// test binary, one engine).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_EXECUTIONHELPERS_H
#define ATTN_TEST_UNIT_EXECUTIONHELPERS_H

#include "ProgramOracle.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace attn::exec_test {

using attn::HostArray;
using attn::ref::Tensor;

/// One engine for the whole test binary. It is deliberately never destroyed:
/// its JIT-compiled kernels must not outlive LLVM's own static state, which
/// static destruction at exit does not order.
inline attn::Engine &engine() {
  static attn::Engine *e = [] {
    auto created = attn::Engine::create("cpu");
    if (!created) {
      ADD_FAILURE() << llvm::toString(created.takeError());
      std::abort();
    }
    return created->release();
  }();
  return *e;
}

/// Replaces every "$NAME" in `text` by its value.
inline std::string
subst(std::string text,
      const std::vector<std::pair<std::string, std::string>> &kv) {
  for (auto &[k, v] : kv) {
    size_t pos;
    while ((pos = text.find(k)) != std::string::npos)
      text.replace(pos, k.size(), v);
  }
  return text;
}

struct Program {
  std::string source;
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  explicit Program(std::string src) : source(std::move(src)) {
    mlir::DialectRegistry registry;
    registry.insert<mlir::attn::AttnDialect>();
    mlir::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &ctx);
  }
  mlir::func::FuncOp main() {
    return module->lookupSymbol<mlir::func::FuncOp>("main");
  }
};

inline std::vector<HostArray> toHost(const std::vector<Tensor> &ins,
                                     attn::DType dtype = attn::DType::F32) {
  std::vector<HostArray> out;
  for (const Tensor &t : ins)
    out.push_back(attn::ref::toHost(t, dtype));
  return out;
}

/// Runs `source` on `ins` through `pipeline`, or fails the test.
inline Tensor run(const std::string &source, const std::vector<Tensor> &ins,
                  attn::Pipeline pipeline = attn::Pipeline::Auto) {
  attn::CompileOptions options;
  options.pipeline = pipeline;
  auto kernel = engine().compile(source, options);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError());
    return {};
  }
  auto out = (*kernel)->run(toHost(ins));
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  auto t = attn::ref::fromHost(*out);
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : Tensor();
}

/// Compiled result vs the oracle's, relative error <= tol (DESIGN §6: f32
/// on the CPU, 1e-5).
inline void
expectMatchesOracle(const std::string &source, const std::vector<Tensor> &ins,
                    double tol = 1e-5,
                    attn::Pipeline pipeline = attn::Pipeline::Reference) {
  Program p(source);
  ASSERT_TRUE(p.module) << source;
  auto ref = attn::ref::evaluate(p.main(), ins);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  Tensor got = run(source, ins, pipeline);
  ASSERT_EQ(got.shape, ref->shape);
  double err = attn::ref::relError(got, *ref);
  EXPECT_LE(err, tol) << "source:\n" << source;
}

/// Random inputs for the program's arguments by role (B, H, T).
inline std::vector<Tensor> randomFor(const std::string &source, int64_t b,
                                     int64_t h, int64_t t, uint64_t seed,
                                     double betaLo = 0, double betaHi = 2) {
  Program p(source);
  EXPECT_TRUE(p.module) << source;
  attn::ref::RandomSpec spec;
  spec.batch = b;
  spec.heads = h;
  spec.seqLen = t;
  spec.seed = seed;
  spec.betaLo = betaLo;
  spec.betaHi = betaHi;
  auto ins = attn::ref::randomInputs(p.main(), spec);
  EXPECT_TRUE(static_cast<bool>(ins));
  return ins ? *ins : std::vector<Tensor>{};
}

/// examples/<name> of the source tree: $ATTN_SOURCE_DIR when set (a test
/// binary copied to another machine, e.g. the GPU one, run from a checkout
/// there), else the tree it was built from.
inline std::string readExample(const std::string &name) {
  const char *dir = std::getenv("ATTN_SOURCE_DIR");
  std::ifstream f(std::string(dir && *dir ? dir : ATTN_SOURCE_DIR) +
                  "/examples/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline Tensor unitRows(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t = attn::ref::randn(shape, seed);
  int64_t d = shape.back();
  for (size_t r = 0; r * d < t.data.size(); ++r) {
    double ss = 0;
    for (int64_t e = 0; e < d; ++e)
      ss += t.data[r * d + e] * t.data[r * d + e];
    for (int64_t e = 0; e < d; ++e)
      t.data[r * d + e] /= std::sqrt(ss);
  }
  return t;
}

inline const char *kScores = R"(
func.func @main(%q: tensor<?x?x?x$Dx$E>, %k: tensor<?x?x?x$Dx$E>, %v: tensor<?x?x?x$Vx$E>) -> tensor<?x?x?x$Vx$E> {
  %s = attn.scores %q, %k $ATTRS : (tensor<?x?x?x$Dx$E>, tensor<?x?x?x$Dx$E>) -> tensor<?x?x?x?xf32>
  %p = attn.softmax %s : tensor<?x?x?x?xf32>
  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x$Vx$E>) -> tensor<?x?x?x$Vx$E>
  return %o : tensor<?x?x?x$Vx$E>
})";

inline std::string scoresProgram(const std::string &attrs, int d = 16,
                                 int dv = 16, const std::string &elt = "f32") {
  return subst(kScores, {{"$ATTRS", attrs},
                         {"$D", std::to_string(d)},
                         {"$V", std::to_string(dv)},
                         {"$E", elt}});
}

inline std::vector<Tensor> qkv(int64_t b, int64_t hq, int64_t hk, int64_t t,
                               int64_t s, int64_t d, int64_t dv,
                               uint64_t seed) {
  return {attn::ref::randn({b, hq, t, d}, seed),
          attn::ref::randn({b, hk, s, d}, seed + 1),
          attn::ref::randn({b, hk, s, dv}, seed + 2)};
}

} // namespace attn::exec_test

#endif // ATTN_TEST_UNIT_EXECUTIONHELPERS_H
