//===- Pipelines.cpp - named attn pipelines -------------------------------===//

#include "attn/Passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// Tensors -> buffers -> loops -> LLVM dialect, shared by both CPU paths.
static void buildTensorsToLLVM(OpPassManager &pm, bool threads) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(attn::createAttnCPUFuseElementwise());
  pm.addPass(createCanonicalizerPass());

  bufferization::OneShotBufferizePassOptions bufOpts;
  bufOpts.bufferizeFunctionBoundaries = true;
  // Loop-carried tiles (online-softmax state) are fresh buffers each step.
  bufOpts.allowReturnAllocsFromLoops = true;
  bufOpts.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufOpts));
  bufferization::BufferDeallocationPipelineOptions deallocOpts;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOpts);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createConvertVectorToLLVMPass());

  // Program instances (scf.parallel over the grid) spread over threads.
  if (threads) {
    pm.addPass(createConvertSCFToOpenMPPass());
  }
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
  if (threads)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::attn::buildReferenceToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createAttnLowerToReference());
  buildTensorsToLLVM(pm, /*threads=*/false);
}

void mlir::attn::buildCPUPipeline(OpPassManager &pm, bool threads) {
  pm.addPass(createAttnFuse());
  pm.addPass(createAttnToBlock());
  pm.addPass(createAttnLowerToReference());
  pm.addPass(createAttnBlockToCPU());
  buildTensorsToLLVM(pm, threads);
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<>(
      "attn-reference-to-llvm",
      "Lower attn programs through the naive reference loops to the LLVM "
      "dialect (CPU)",
      buildReferenceToLLVMPipeline);
  PassPipelineRegistration<>(
      "attn-to-cpu",
      "Lower attn programs to the LLVM dialect for the CPU: fuse chains into "
      "attn.attention, fused kernels through the block program, program "
      "instances over OpenMP threads; what cannot be fused runs through the "
      "reference lowering",
      [](OpPassManager &pm) { buildCPUPipeline(pm, /*threads=*/true); });
}
