//===- Pipelines.cpp - named attn pipelines -------------------------------===//

#include "attn/Passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::attn::buildReferenceToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createAttnLowerToReference());
  pm.addPass(createCanonicalizerPass());

  bufferization::OneShotBufferizePassOptions bufOpts;
  bufOpts.bufferizeFunctionBoundaries = true;
  bufOpts.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufOpts));
  bufferization::BufferDeallocationPipelineOptions deallocOpts;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOpts);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createCanonicalizerPass());

  // bf16 <-> f32 conversions become integer bit operations: the x86 backend
  // would otherwise call compiler-rt helpers that libgcc may lack.
  arith::ArithExpandOpsPassOptions expandOpts;
  expandOpts.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOpts));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<>(
      "attn-reference-to-llvm",
      "Lower attn programs through the naive reference loops to the LLVM "
      "dialect (CPU)",
      buildReferenceToLLVMPipeline);
  PassPipelineRegistration<>(
      "attn-to-cpu",
      "Lower attn programs to the LLVM dialect for the CPU through the best "
      "CPU path available (today: the reference lowering)",
      buildReferenceToLLVMPipeline);
}
