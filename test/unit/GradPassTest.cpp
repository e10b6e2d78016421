//===- GradPassTest.cpp - attn-grad's training pairs vs the fp64 oracle ---===//
//
// Runs attn-grad on every example and on a chain of every op, compiles
// @main_fwd and @main_grad on the CPU engine, feeds the forward's saved
// state to the backward and compares the forward's result and every
// gradient with ref::evaluate and ref::evaluateGrad. Fresh random inputs;
// failures print the seed (ATTN_SEED replays it).
//
//===----------------------------------------------------------------------===//

#include "ExecutionHelpers.h"
#include "attn/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <filesystem>

using namespace attn::exec_test;

namespace {

/// The module of `source` after attn-grad, as text.
std::string withTrainingPair(const std::string &source) {
  Program p(source);
  EXPECT_TRUE(p.module);
  mlir::PassManager pm(&p.ctx);
  pm.addPass(mlir::attn::createAttnGrad());
  p.ctx.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler quiet(&p.ctx, [](mlir::Diagnostic &d) {
    return mlir::success(d.getSeverity() == mlir::DiagnosticSeverity::Remark);
  });
  EXPECT_TRUE(mlir::succeeded(pm.run(*p.module)));
  std::string text;
  llvm::raw_string_ostream os(text);
  p.module->print(os);
  return text;
}

std::vector<HostArray> runEntry(const std::string &text,
                                const std::string &entry,
                                const std::vector<HostArray> &inputs) {
  attn::CompileOptions options;
  options.entry = entry;
  options.pipeline = attn::Pipeline::Reference;
  auto kernel = engine().compile(text, options);
  if (!kernel) {
    ADD_FAILURE() << entry << ": " << llvm::toString(kernel.takeError());
    return {};
  }
  auto outs = (*kernel)->runAll(inputs);
  if (!outs) {
    ADD_FAILURE() << entry << ": " << llvm::toString(outs.takeError());
    return {};
  }
  return std::move(*outs);
}

Tensor toTensor(const HostArray &a) {
  auto t = attn::ref::fromHost(a);
  EXPECT_TRUE(static_cast<bool>(t));
  return t ? *t : Tensor();
}

/// The training pair of `source`'s @main against the oracle, f32, relative
/// error <= tol for the output and for every gradient.
void expectTrainingPairMatches(const std::string &what,
                               const std::string &source,
                               attn::ref::RandomSpec spec, double tol = 1e-5) {
  Program p(source);
  ASSERT_TRUE(p.module) << what;
  spec.seed = attn::ref::freshSeed();
  SCOPED_TRACE(what + ", seed " + std::to_string(spec.seed));
  auto inputs = attn::ref::randomInputs(p.main(), spec);
  ASSERT_TRUE(static_cast<bool>(inputs)) << llvm::toString(inputs.takeError());
  auto ref = attn::ref::evaluate(p.main(), *inputs);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  const Tensor dO = attn::ref::randn(ref->shape, spec.seed + 99);
  auto refGrads = attn::ref::evaluateGrad(p.main(), *inputs, dO);
  ASSERT_TRUE(static_cast<bool>(refGrads))
      << llvm::toString(refGrads.takeError());

  const std::string text = withTrainingPair(source);
  std::vector<HostArray> args;
  for (size_t n = 0; n < inputs->size(); ++n)
    args.push_back(attn::ref::toHost(
        (*inputs)[n], mlir::isa<mlir::FloatType>(mlir::getElementTypeOrSelf(
                          p.main().getArgument(n).getType()))
                          ? attn::DType::F32
                          : attn::DType::I64));
  std::vector<HostArray> fwd = runEntry(text, "main_fwd", args);
  ASSERT_GE(fwd.size(), 1u);
  EXPECT_LE(attn::ref::relError(toTensor(fwd[0]), *ref), tol) << "output";

  std::vector<HostArray> bwdArgs = args;
  bwdArgs.insert(bwdArgs.end(), fwd.begin() + 1, fwd.end());
  bwdArgs.push_back(attn::ref::toHost(dO, attn::DType::F32));
  std::vector<HostArray> grads = runEntry(text, "main_grad", bwdArgs);
  size_t next = 0;
  for (size_t n = 0; n < inputs->size(); ++n) {
    if (!(*refGrads)[n])
      continue;
    ASSERT_LT(next, grads.size()) << "too few gradients";
    Tensor got = toTensor(grads[next++]);
    ASSERT_EQ(got.shape, (*refGrads)[n]->shape) << "argument " << n;
    EXPECT_LE(attn::ref::relError(got, *(*refGrads)[n]), tol)
        << "gradient of argument " << n;
  }
  EXPECT_EQ(next, grads.size()) << "one gradient per float argument";
}

} // namespace
