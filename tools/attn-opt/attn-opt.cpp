//===- attn-opt.cpp - mlir-opt for the attn dialect -----------------------===//
//
// Parses, verifies and transforms attn programs: every upstream dialect and
// pass is registered beside attn's own, so a pipeline can stop and print at
// any stage, exactly like mlir-opt.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"
#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "attn/Dialect/SourceLimits.h"
#include "attn/Passes/Passes.h"
#include "attn/Toolkit.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>
#include <optional>
#include <string>

/// `--attn-dump-ptx=PATH`: attn-to-gpu also writes the PTX of its kernels.
/// The pipeline reads it when it is built, after option parsing.
static llvm::cl::opt<std::string> dumpPtx(
    "attn-dump-ptx", llvm::cl::value_desc("path"),
    llvm::cl::desc("With --attn-to-gpu: write the kernels' PTX to PATH"),
    llvm::cl::init(""), llvm::cl::callback([](const std::string &path) {
      mlir::attn::setDefaultPtxDumpPath(path);
    }));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnCodegenPasses();
  mlir::attn::registerAttnPipelines();
  // attn-to-gpu asks this tool, not the pass library, what ptxas is.
  mlir::attn::setPtxasProbe(attn::probePtxas);

  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::attn_block::AttnBlockDialect,
                  mlir::attn_launch::AttnLaunchDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates GPU modules to LLVM IR in-process.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "attn optimizer driver: attn dialect, passes and pipelines\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // These read no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << message << "\n";
    return EXIT_FAILURE;
  }
  // Text nested too deep for the parser's recursion is an error, not a
  // stack overflow.
  if (std::optional<std::string> deep = mlir::attn::checkSourceNesting(
          input->getBuffer(), input->getBufferIdentifier())) {
    llvm::errs() << *deep << "\n";
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &message);
  if (!output) {
    llvm::errs() << message << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
