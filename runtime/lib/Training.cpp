//===- Training.cpp - Engine::compileTraining: a function's training pair -===//
//
// Runs attn-grad on the program (docs/training.md) and compiles the two
// functions it derives through Engine::compile, so that the pair shares the
// kernel cache, the device choice and its CPU fallback with every other
// program.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime.h"

#include "KernelSupport.h"
#include "attn/Dialect/SourceLimits.h"
#include "attn/Passes/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

using llvm::createStringError;
using llvm::Expected;

namespace attn {
namespace {

/// The module after attn-grad, as text, and what the caller needs to know
/// of the pair.
struct DerivedPair {
  std::string text;
  std::vector<size_t> gradArgs;
  /// Each argument's name in the source, its index where there is none.
  std::vector<std::string> argNames;
};

/// Parses `source`, keeping the names the entry's arguments have in it
/// (the parser drops SSA names; its AsmParserState records where each
/// argument is defined), and runs attn-grad on `entry`.
Expected<DerivedPair> derivePair(llvm::StringRef source, llvm::StringRef entry,
                                 llvm::StringRef bufferName) {
  using namespace mlir;
  if (std::optional<std::string> deep =
          mlir::attn::checkSourceNesting(source, bufferName))
    return createStringError("cannot parse " + bufferName.str() + ":\n" +
                             *deep);
  MLIRContext ctx(detail::kernelRegistry());
  ctx.loadAllAvailableDialects();
  detail::DiagnosticCollector diags(&ctx);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  Block parsed;
  AsmParserState asmState;
  if (failed(parseAsmSourceFile(sourceMgr, &parsed, ParserConfig(&ctx),
                                &asmState)))
    return diags.error("cannot parse " + bufferName.str());
  OwningOpRef<ModuleOp> module =
      mlir::detail::constructContainerOpForParserIfNecessary<ModuleOp>(
          &parsed, &ctx, FileLineColLoc::get(&ctx, bufferName, 0, 0));
  if (!module)
    return diags.error("cannot parse " + bufferName.str());
  auto func = module->lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isDeclaration())
    return createStringError("no function @" + entry.str() + " in " +
                             bufferName.str());

  DerivedPair pair;
  const AsmParserState::BlockDefinition *def =
      asmState.getBlockDef(&func.getBody().front());
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = std::to_string(i);
    if (def && i < def->arguments.size()) {
      llvm::SMRange r = def->arguments[i].loc;
      llvm::StringRef text(r.Start.getPointer(),
                           r.End.getPointer() - r.Start.getPointer());
      if (!text.ltrim('%').empty())
        name = text.ltrim('%').str();
    }
    pair.argNames.push_back(name);
  }

  // The pass's errors name the function; the whole op printed after them
  // would bury the message.
  ctx.printOpOnDiagnostic(false);
  PassManager pm(&ctx);
  // Chains become attn.attention first: its VJP is a fused backward.
  pm.addPass(mlir::attn::createAttnFuse());
  mlir::attn::AttnGradOptions options;
  options.functions = {entry.str()};
  pm.addPass(mlir::attn::createAttnGrad(options));
  if (failed(pm.run(*module)))
    return diags.error("cannot derive the training pair of @" + entry.str() +
                       " in " + bufferName.str());
  auto grad = module->lookupSymbol<func::FuncOp>((entry + "_grad").str());
  auto of = grad ? grad->getAttrOfType<DenseI64ArrayAttr>("attn.grad_args")
                 : DenseI64ArrayAttr();
  if (!of)
    return createStringError("attn-grad gave no @" + entry.str() +
                             "_grad with attn.grad_args");
  for (int64_t i : of.asArrayRef())
    pair.gradArgs.push_back(static_cast<size_t>(i));
  // With the source's locations, diagnostics and remarks of the compiled
  // pair point into the file the user wrote.
  llvm::raw_string_ostream os(pair.text);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  return pair;
}

} // namespace

Expected<TrainingKernels> Engine::compileTraining(llvm::StringRef source,
                                                  const CompileOptions &options,
                                                  llvm::StringRef bufferName) {
  auto pair = derivePair(source, options.entry, bufferName);
  if (!pair)
    return pair.takeError();
  TrainingKernels out;
  out.gradArgs = std::move(pair->gradArgs);
  out.argNames = std::move(pair->argNames);
  // The backward takes the forward's results: the pair runs on one device.
  // The backward compiles first, as the half the GPU backend lacks more
  // often (PaTH's, MTA's): where it ran on the CPU of a CUDA engine, the
  // forward goes there without a GPU compile, and the other way round a
  // backward is moved after a forward that fell back.
  auto compileHalf =
      [&](const char *suffix,
          const Kernel *onCpuAlready) -> Expected<std::shared_ptr<Kernel>> {
    CompileOptions each = options;
    each.entry = options.entry + suffix;
    if (!onCpuAlready || dev != Device::CUDA)
      return compile(pair->text, each, bufferName);
    auto k = detail::createCpuKernel(pair->text, each, bufferName);
    if (!k)
      return k.takeError();
    const auto &notes = onCpuAlready->notes;
    (*k)->notes.insert((*k)->notes.begin(),
                       "runs on the CPU because @" + onCpuAlready->entry +
                           " does" + (notes.empty() ? "" : ": " + notes[0]));
    return k;
  };
  auto onCpu = [](const Expected<std::shared_ptr<Kernel>> &k) {
    return (*k)->device() == Device::CPU ? k->get() : nullptr;
  };
  auto backward = compileHalf("_grad", nullptr);
  if (!backward)
    return backward.takeError();
  auto forward = compileHalf("_fwd", onCpu(backward));
  if (!forward)
    return forward.takeError();
  if ((*forward)->device() != (*backward)->device()) {
    backward = compileHalf("_grad", onCpu(forward));
    if (!backward)
      return backward.takeError();
  }
  out.forward = std::move(*forward);
  out.backward = std::move(*backward);
  return out;
}

} // namespace attn
