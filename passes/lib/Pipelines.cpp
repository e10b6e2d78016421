//===- Pipelines.cpp - named attn pipelines -------------------------------===//

#include "attn/Codegen/Passes.h"
#include "attn/Passes/GpuTarget.h"
#include "attn/Passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

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
    pm.addPass(attn::createAttnCPUSchedulePrograms());
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

/// attn-caller-buffers on `entry`, when one is named.
static void addCallerBuffers(OpPassManager &pm, llvm::StringRef entry) {
  if (entry.empty())
    return;
  attn::AttnCallerBuffersOptions opts;
  opts.entry = entry.str();
  pm.addPass(attn::createAttnCallerBuffers(opts));
}

void mlir::attn::buildReferenceToLLVMPipeline(OpPassManager &pm,
                                              llvm::StringRef callerEntry) {
  pm.addPass(createAttnLowerToReference());
  addCallerBuffers(pm, callerEntry);
  buildTensorsToLLVM(pm, /*threads=*/false);
}

void mlir::attn::buildCPUPipeline(OpPassManager &pm, bool threads,
                                  llvm::StringRef callerEntry) {
  pm.addPass(createAttnFuse());
  pm.addPass(createAttnToBlock());
  // A kernel in GPU form (layouts, shared buffers, async copies) runs with
  // its sequential meaning.
  pm.addPass(createAttnBlockStripGpu());
  pm.addPass(createAttnLowerToReference());
  addCallerBuffers(pm, callerEntry);
  pm.addPass(createAttnBlockToCPU());
  buildTensorsToLLVM(pm, threads);
}

std::string mlir::attn::cudaToolkitPath() {
  if (const char *env = std::getenv("CUDA_HOME"))
    if (*env)
      return env;
  return "/usr/local/cuda";
}

static std::string &defaultPtxDumpPath() {
  static std::string path;
  return path;
}

void mlir::attn::setDefaultPtxDumpPath(llvm::StringRef path) {
  defaultPtxDumpPath() = path.str();
}

std::string
mlir::attn::checkGPUPipelineOptions(const GPUPipelineOptions &options) {
  std::string bad = checkGpuChip(options.chip);
  if (bad.empty())
    bad = checkGpuKernelOptions(options.chip, options.overlap, options.warps,
                                options.mTiles, options.blockN);
  if (bad.empty())
    bad = checkGpuFormat(options.format);
  if (bad.empty())
    bad = checkGpuLowering(options.lowering, options.chip);
  // attn-to-block's flash kernel takes warps (4 or 8) and block-n (64 or
  // 128: a 32-key FoX records tile has fewer 16-byte chunks than threads);
  // its warps hold one 16-row tile each, and the overlap schedule is the
  // direct kernel's.
  const AttnAttentionToGPUOptions defaults;
  if (bad.empty() && options.lowering == "block-plan" &&
      (options.mTiles != defaults.mTiles || options.overlap ||
       (options.warps != 4 && options.warps != 8) ||
       (options.blockN != 64 && options.blockN != 128)))
    bad = "lowering=block-plan (the default) takes warps 4 or 8, block-n 64 "
          "or 128, m-tiles 1 and no overlap (attn-to-block's flash kernel: "
          "one 16-row tile per warp), got warps " +
          std::to_string(options.warps) + ", block-n " +
          std::to_string(options.blockN) + ", m-tiles " +
          std::to_string(options.mTiles) +
          (options.overlap ? ", overlap" : "") +
          " (lowering=direct builds the others)";
  return bad;
}

/// attn-to-block's target for `chip` (checkGpuChip accepted it): the GPU
/// form of the block program differs only in whether the chip has wgmma,
/// so sm_86 or sm_89 take the sm_80 form, sm_100 the sm_90 one.
static std::string blockFormOf(StringRef chip) {
  const attn::TargetDesc &t = llvm::cantFail(attn::getTargetDesc(chip));
  if (t.mma == attn::MmaKind::Wgmma)
    return "sm_90a";
  return t.sm >= 90 ? "sm_90" : "sm_80";
}

void mlir::attn::buildGPUPipeline(OpPassManager &pm,
                                  const GPUPipelineOptions &options) {
  pm.addPass(createAttnFuse());
  // lowering=block-plan: every kernel and the launch plan from the block
  // program; lowering=direct / block: the flash launch plan with the C++
  // builder's / the block program's attention kernel, and the block
  // program's route for what the flash plan does not cover (PaTH, MTA, the
  // head norm: attn-attention-to-gpu leaves them).
  if (options.lowering != "block-plan")
    pm.addPass(createAttnAttentionToGPU(
        static_cast<const AttnAttentionToGPUOptions &>(options)));
  {
    AttnToBlockOptions toBlock;
    toBlock.target = blockFormOf(options.chip);
    toBlock.blockN = options.blockN;
    // Under direct / block the flash kernels are attn-attention-to-gpu's;
    // what attn-to-block gets there (PaTH, MTA) takes its own shapes.
    if (options.lowering == "block-plan")
      toBlock.warps = options.warps;
    pm.addPass(createAttnToBlock(toBlock));
    AttnBlockLaunchPlanOptions plan;
    plan.chip = options.chip;
    pm.addPass(createAttnBlockLaunchPlan(plan));
    pm.addPass(createAttnBlockToGPU());
  }
  // The kernels' gpu/nvgpu/arith/memref/vector/scf ops -> LLVM + NVVM.
  OpPassManager &gm = pm.nest<gpu::GPUModuleOp>();
  gm.addPass(memref::createExpandStridedMetadataPass());
  gm.addPass(createConvertNVGPUToNVVMPass());
  gm.addPass(createSCFToControlFlowPass());
  gm.addPass(createConvertGpuOpsToNVVMOps());
  gm.addPass(createCanonicalizerPass());
  gm.addPass(createCSEPass());
  gm.addPass(createReconcileUnrealizedCastsPass());
  std::string dump =
      options.dumpPtx.empty() ? defaultPtxDumpPath() : options.dumpPtx;
  if (!dump.empty()) {
    AttnDumpPtxOptions dumpOpts;
    dumpOpts.path = dump;
    pm.addPass(createAttnDumpPtx(dumpOpts));
  }
  if (options.format == "none")
    return;
  GpuModuleToBinaryPassOptions binOpts;
  binOpts.toolkitPath =
      options.toolkit.empty() ? cudaToolkitPath() : options.toolkit;
  binOpts.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binOpts));
}

namespace {
/// attn-to-gpu's textual options. The kernel-shape ones mirror
/// attn-attention-to-gpu's (GpuOptions.td) and take their defaults from its
/// generated options struct; see Passes.td for their help in full.
const attn::AttnAttentionToGPUOptions kKernelDefaults;

struct GPUPipelineCLOptions : public PassPipelineOptions<GPUPipelineCLOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA architecture (sm_80, sm_90, ...; sm_90a: wgmma)"),
      llvm::cl::init(kKernelDefaults.chip)};
  PassOptions::Option<int64_t> warps{
      *this, "warps", llvm::cl::desc("warps per block (1, 2, 4, 8)"),
      llvm::cl::init(kKernelDefaults.warps)};
  PassOptions::Option<int64_t> mTiles{
      *this, "m-tiles", llvm::cl::desc("16-row query tiles per warp (1, 2)"),
      llvm::cl::init(kKernelDefaults.mTiles)};
  PassOptions::Option<int64_t> blockN{
      *this, "block-n", llvm::cl::desc("keys per step (32, 64, 128)"),
      llvm::cl::init(kKernelDefaults.blockN)};
  PassOptions::Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("sm_90a: the softmax runs while the previous P V is on "
                     "the tensor cores"),
      llvm::cl::init(kKernelDefaults.overlap)};
  PassOptions::Option<std::string> lowering{
      *this, "lowering",
      llvm::cl::desc("direct (the C++-built attention kernel), block (the "
                     "block program's attention kernel in the flash launch "
                     "plan; PaTH/MTA through attn-block-launch-plan) or "
                     "block-plan (every kernel and the launch plan from the "
                     "block program)"),
      llvm::cl::init(kKernelDefaults.lowering)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (ptxas, libdevice); default $CUDA_HOME "
                     "or /usr/local/cuda"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("bin (cubin via ptxas), isa (PTX) or none (stop at "
                     "the NVVM dialect)"),
      llvm::cl::init(attn::GPUPipelineOptions().format)};
  PassOptions::Option<std::string> dumpPtx{
      *this, "dump-ptx", llvm::cl::desc("write the PTX to this file"),
      llvm::cl::init("")};

  attn::GPUPipelineOptions get() const {
    attn::GPUPipelineOptions o;
    o.chip = chip;
    o.warps = warps;
    o.mTiles = mTiles;
    o.blockN = blockN;
    o.overlap = overlap;
    o.lowering = lowering;
    o.toolkit = toolkit;
    o.format = format;
    o.dumpPtx = dumpPtx;
    return o;
  }
};
} // namespace

void mlir::attn::registerAttnPipelines() {
  // registerPassPipeline rather than PassPipelineRegistration: the builder
  // can then refuse bad options (an error and a non-zero exit) instead of
  // building a pipeline that aborts in LLVM or succeeds with a bad format.
  registerPassPipeline(
      "attn-to-gpu",
      "Compile attn programs for NVIDIA GPUs: attn-fuse, tensor-core kernels "
      "for the fused attn.attention (attn-attention-to-gpu), NVVM, then a "
      "gpu.binary (cubin through ptxas, or PTX)",
      [](OpPassManager &pm, StringRef optionsStr,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        GPUPipelineCLOptions o;
        if (failed(o.parseFromString(optionsStr)))
          return failure();
        GPUPipelineOptions opts = o.get();
        if (std::string bad = checkGPUPipelineOptions(opts); !bad.empty())
          return errorHandler("attn-to-gpu: " + bad);
        buildGPUPipeline(pm, opts);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(GPUPipelineCLOptions());
      });
  PassPipelineRegistration<>(
      "attn-reference-to-llvm",
      "Lower attn programs through the naive reference loops to the LLVM "
      "dialect (CPU)",
      [](OpPassManager &pm) { buildReferenceToLLVMPipeline(pm); });
  PassPipelineRegistration<>(
      "attn-to-cpu",
      "Lower attn programs to the LLVM dialect for the CPU: fuse chains into "
      "attn.attention, fused kernels through the block program, program "
      "instances over OpenMP threads; what cannot be fused runs through the "
      "reference lowering",
      [](OpPassManager &pm) { buildCPUPipeline(pm, /*threads=*/true); });
}
