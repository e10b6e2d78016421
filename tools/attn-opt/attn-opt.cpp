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
#include "attn/Passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"

/// `--attn-dump-ptx=PATH`: attn-to-gpu also writes the PTX of its kernels.
/// The pipeline reads it when it is built, after option parsing.
static llvm::cl::opt<std::string> dumpPtx(
    "attn-dump-ptx", llvm::cl::value_desc("path"),
    llvm::cl::desc("With --attn-to-gpu: write the kernels' PTX to PATH"),
    llvm::cl::init(""), llvm::cl::callback([](const std::string &path) {
      mlir::attn::setDefaultPtxDumpPath(path);
    }));

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnCodegenPasses();
  mlir::attn::registerAttnPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::attn_block::AttnBlockDialect,
                  mlir::attn_launch::AttnLaunchDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates GPU modules to LLVM IR in-process.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn optimizer driver: attn dialect, passes and pipelines\n",
      registry));
}
