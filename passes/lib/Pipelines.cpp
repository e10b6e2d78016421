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

std::string mlir::attn::checkPtxasForRegisterWgmma(const PtxasFacts &ptxas,
                                                   StringRef what) {
  std::string need = std::to_string(kPtxasRegisterWgmmaMajor) + "." +
                     std::to_string(kPtxasRegisterWgmmaMinor);
  if (!ptxas.release)
    return what.str() + " needs ptxas " + need + " or newer (" + ptxas.where +
           ")";
  if (*ptxas.release >=
      std::pair(kPtxasRegisterWgmmaMajor, kPtxasRegisterWgmmaMinor))
    return "";
  return what.str() + " needs ptxas " + need + " or newer, found " +
         std::to_string(ptxas.release->first) + "." +
         std::to_string(ptxas.release->second) + " at " + ptxas.where +
         " (it reuses a register-A wgmma's registers before the wgmma has "
         "read them; point CUDA_HOME or toolkit= at a newer toolkit)";
}

static attn::PtxasProbe &ptxasProbe() {
  static attn::PtxasProbe probe = nullptr;
  return probe;
}

void mlir::attn::setPtxasProbe(PtxasProbe probe) { ptxasProbe() = probe; }

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
    bad = checkGpuKernelOptions(options.warps, options.blockN);
  if (bad.empty())
    bad = checkPathTransport(options.pathTransport);
  if (bad.empty())
    bad = checkGradDq(options.gradDq);
  bool wgmmaChip =
      bad.empty() && llvm::cantFail(attn::getTargetDesc(options.chip)).mma ==
                         attn::MmaKind::Wgmma;
  for (auto [on, name] : {std::pair<bool, const char *>{options.pathChunkWgmma,
                                                        "path-chunk-wgmma"},
                          {options.pathAttentionWgmma, "path-attention-wgmma"}})
    if (bad.empty() && on && !wgmmaChip)
      bad = std::string("GPU option ") + name +
            " needs a wgmma chip (sm_90a), got " + options.chip;
  if (bad.empty())
    bad = checkGpuFormat(options.format);
  // Only a cubin is assembled here; PTX (isa, none) is whatever ptxas
  // reads it later (the runtime checks its own).
  if (bad.empty() && options.pathAttentionWgmma && options.format == "bin")
    bad = checkPtxasForRegisterWgmma(options.ptxas,
                                     "GPU option path-attention-wgmma");
  return bad;
}

/// attn-to-block's target for `chip` (checkGpuChip accepted it): the GPU
/// forms of the block program differ in wgmma (sm_90a) and in dependent
/// launches (griddepcontrol, sm_90 on: BlockTarget.cpp), so sm_86 or sm_89
/// take the sm_80 form, sm_100 and sm_120 the sm_90 one.
static std::string blockFormOf(StringRef chip) {
  const attn::TargetDesc &t = llvm::cantFail(attn::getTargetDesc(chip));
  if (t.mma == attn::MmaKind::Wgmma)
    return "sm_90a";
  return t.sm >= 90 ? "sm_90" : "sm_80";
}

void mlir::attn::buildGPUPipeline(OpPassManager &pm,
                                  const GPUPipelineOptions &options) {
  pm.addPass(createAttnFuse());
  // Every kernel and the launch plan from the block program.
  AttnToBlockOptions toBlock;
  toBlock.target = blockFormOf(options.chip);
  toBlock.blockN = options.blockN;
  toBlock.warps = options.warps;
  toBlock.pathTransport = options.pathTransport;
  toBlock.pathChunkWgmma = options.pathChunkWgmma;
  toBlock.pathAttentionWgmma = options.pathAttentionWgmma;
  toBlock.gradDq = options.gradDq;
  pm.addPass(createAttnToBlock(toBlock));
  AttnBlockLaunchPlanOptions plan;
  plan.chip = options.chip;
  pm.addPass(createAttnBlockLaunchPlan(plan));
  pm.addPass(createAttnBlockToGPU());
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
/// attn-to-gpu's textual options, with GPUPipelineOptions' defaults.
const attn::GPUPipelineOptions kKernelDefaults;

struct GPUPipelineCLOptions : public PassPipelineOptions<GPUPipelineCLOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA architecture (sm_80, sm_90, ...; sm_90a: wgmma)"),
      llvm::cl::init(kKernelDefaults.chip)};
  PassOptions::Option<int64_t> warps{
      *this, "warps",
      llvm::cl::desc("warps per block of the flash kernel (4 or 8)"),
      llvm::cl::init(kKernelDefaults.warps)};
  PassOptions::Option<int64_t> blockN{
      *this, "block-n",
      llvm::cl::desc("keys per step of the flash kernel (64 or 128)"),
      llvm::cl::init(kKernelDefaults.blockN)};
  PassOptions::Option<std::string> pathTransport{
      *this, "path-transport",
      llvm::cl::desc("PaTH: the walk's transport dots in f16 (one rounding) "
                     "or split (hi + lo pairs, about 16 more bits)"),
      llvm::cl::init(kKernelDefaults.pathTransport)};
  PassOptions::Option<bool> pathChunkWgmma{
      *this, "path-chunk-wgmma",
      llvm::cl::desc("PaTH on sm_90a: the chunk kernel in the wgmma form "
                     "(default off: mma.sync)"),
      llvm::cl::init(kKernelDefaults.pathChunkWgmma)};
  PassOptions::Option<bool> pathAttentionWgmma{
      *this, "path-attention-wgmma",
      llvm::cl::desc("PaTH on sm_90a: the attention kernel in the wgmma "
                     "form (default off: mma.sync; needs ptxas 13.3 or "
                     "newer)"),
      llvm::cl::init(kKernelDefaults.pathAttentionWgmma)};
  PassOptions::Option<std::string> gradDq{
      *this, "grad-dq",
      llvm::cl::desc("the backward's dQ: walk (a second walk, "
                     "deterministic) or reduce (reducing stores from the "
                     "dK/dV walk)"),
      llvm::cl::init(kKernelDefaults.gradDq)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (ptxas, libdevice); default $CUDA_HOME "
                     "or /usr/local/cuda"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("bin (cubin via ptxas), isa (PTX) or none (stop at "
                     "the NVVM dialect)"),
      llvm::cl::init(kKernelDefaults.format)};
  PassOptions::Option<std::string> dumpPtx{
      *this, "dump-ptx", llvm::cl::desc("write the PTX to this file"),
      llvm::cl::init("")};

  attn::GPUPipelineOptions get() const {
    attn::GPUPipelineOptions o;
    o.chip = chip;
    o.warps = warps;
    o.blockN = blockN;
    o.pathTransport = pathTransport;
    o.pathChunkWgmma = pathChunkWgmma;
    o.pathAttentionWgmma = pathAttentionWgmma;
    o.gradDq = gradDq;
    o.toolkit = toolkit;
    o.format = format;
    o.dumpPtx = dumpPtx;
    // Only a form that needs a fixed ptxas asks the tool's probe.
    if (o.pathAttentionWgmma && o.format == "bin") {
      std::string dir = o.toolkit.empty() ? attn::cudaToolkitPath() : o.toolkit;
      if (attn::PtxasProbe probe = ptxasProbe())
        o.ptxas = probe(dir);
      else
        o.ptxas.where = "this tool does not probe the toolkit's ptxas";
    }
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
      "Compile attn programs for NVIDIA GPUs: attn-fuse, the block program "
      "for the target chip (attn-to-block), its launch plan "
      "(attn-block-launch-plan), tensor-core kernels (attn-block-to-gpu), "
      "NVVM, then a gpu.binary (cubin through ptxas, or PTX)",
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
