//===- Passes.h - attn passes and pipelines ---------------------*- C++ -*-===//

#ifndef ATTN_PASSES_PASSES_H
#define ATTN_PASSES_PASSES_H

#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <optional>
#include <utility>

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Passes/Passes.h.inc"

/// Patterns rewriting attn.attention into the chain of ops it means.
void populateExpandAttentionPatterns(RewritePatternSet &patterns);

/// attn (tensors) -> reference loops -> bufferized -> LLVM dialect, ready for
/// the ExecutionEngine. Functions get the C interface (`_mlir_ciface_*`).
/// With `callerEntry`, that function takes caller-owned strided buffers and
/// writes its result into a trailing output buffer (attn-caller-buffers).
void buildReferenceToLLVMPipeline(OpPassManager &pm,
                                  llvm::StringRef callerEntry = {});

/// The CPU pipeline: attn-fuse, fused attention through the block program
/// (program instances over OpenMP threads when `threads`), the reference
/// lowering for the rest, down to the LLVM dialect.
/// `callerEntry` as for buildReferenceToLLVMPipeline.
void buildCPUPipeline(OpPassManager &pm, bool threads,
                      llvm::StringRef callerEntry = {});

/// What the caller found out about the ptxas that assembles the cubins. The
/// pass library runs no subprocess: the runtime and the tools probe the
/// toolkit (attn/Toolkit.h) and hand over what they found.
struct PtxasFacts {
  /// The release `ptxas --version` names ({13, 0}); none when no ptxas ran
  /// or it named no release.
  std::optional<std::pair<int, int>> release;
  /// The ptxas path, or why there is no release.
  std::string where;
};

/// Options of the GPU pipeline (`attn-to-gpu`), the one options struct of
/// the GPU path and the one place of its defaults: the kernel shape (chip,
/// warps, blockN) and where and how the result is written. The pipeline's
/// textual options (Pipelines.cpp) and the runtime's CompileOptions::gpu
/// and ATTN_GPU_* variables (runtime/lib/GpuOptions.cpp) resolve into it
/// and take its defaults.
struct GPUPipelineOptions {
  /// NVIDIA architecture of the kernels (sm_80, sm_90, ...; sm_90a: the
  /// wgmma form of the block program).
  std::string chip = "sm_90";
  /// Warps per block of the flash kernel (4 or 8).
  int64_t warps = 4;
  /// Keys per step of the flash kernel's key walk (64 or 128).
  int64_t blockN = 64;
  /// PaTH: the precision of the walk's transport dots, "f16" or "split"
  /// (attn-to-block's path-transport).
  std::string pathTransport = "f16";
  /// PaTH on sm_90a: the chunk kernel in the wgmma form (attn-to-block's
  /// path-chunk-wgmma).
  bool pathChunkWgmma = false;
  /// PaTH on sm_90a: the attention kernel in the wgmma form (attn-to-block's
  /// path-attention-wgmma; needs ptxas 13.3 or newer:
  /// checkPtxasForRegisterWgmma).
  bool pathAttentionWgmma = false;
  /// The backward's dQ: "walk" (a second walk, deterministic) or "reduce"
  /// (reducing stores; attn-to-block's grad-dq).
  std::string gradDq = "walk";
  /// The toolkit's ptxas as the caller probed it; checked when a form needs
  /// a fixed one and a cubin is made here (format "bin").
  PtxasFacts ptxas;
  /// Where the CUDA toolkit is (ptxas, libdevice); "" = $CUDA_HOME or
  /// /usr/local/cuda.
  std::string toolkit;
  /// "bin" (cubin through ptxas), "isa" (PTX text) or "none" (stop at the
  /// NVVM dialect, for the runtime, which serializes itself).
  std::string format = "bin";
  /// Write the PTX here when not empty.
  std::string dumpPtx;
};

/// "" when `options` can be built (chip, kernel shape and format valid),
/// else a message naming the bad option. buildGPUPipeline assumes this
/// passed; the attn-to-gpu registration and the runtime call it first.
std::string checkGPUPipelineOptions(const GPUPipelineOptions &options);

/// The CUDA toolkit directory: $CUDA_HOME, else /usr/local/cuda.
std::string cudaToolkitPath();

/// The suffixes of PaTH's kernels (`<func>_<suffix>`, attn-to-block on every
/// target); the runtime finds a PaTH program's launch plan by them.
constexpr llvm::StringLiteral kPathChunkKernelSuffix = "path_chunk_kernel";
constexpr llvm::StringLiteral kPathAttentionKernelSuffix =
    "path_attention_kernel";

/// The ptxas release that first assembles register-A wgmma correctly:
/// ptxas 13.0 can reuse a wgmma's A registers before the asynchronous
/// wgmma has read them (PaTH-FoX's wgmma attention kernel at D = 128 reads
/// another value into some rows of q~). CUDA 13.3's release notes list the
/// fix.
constexpr int kPtxasRegisterWgmmaMajor = 13, kPtxasRegisterWgmmaMinor = 3;

/// "" when `ptxas` is at least release
/// kPtxasRegisterWgmmaMajor.kPtxasRegisterWgmmaMinor, else a message naming
/// what was found (no ptxas, an unreadable version or an older release)
/// and that `what` needs it.
std::string checkPtxasForRegisterWgmma(const PtxasFacts &ptxas,
                                       llvm::StringRef what);

/// How attn-to-gpu's textual options learn about `toolkit`'s ptxas (the
/// tool that parses them sets it; attn-opt does). Without a probe a form
/// that needs a fixed ptxas is refused as unverified.
using PtxasProbe = PtxasFacts (*)(llvm::StringRef toolkit);
void setPtxasProbe(PtxasProbe probe);

/// attn-fuse, attn-to-block{target=chip}, attn-block-launch-plan,
/// attn-block-to-gpu, the gpu.module lowered to NVVM and, unless format is
/// "none", serialized into a gpu.binary.
void buildGPUPipeline(OpPassManager &pm, const GPUPipelineOptions &options);

/// The PTX path `attn-opt --attn-dump-ptx=PATH` asked for ("" if none);
/// attn-to-gpu adds attn-write-ptx when set.
void setDefaultPtxDumpPath(llvm::StringRef path);

/// Registers the named pipelines (`attn-reference-to-llvm`, ...) for attn-opt.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PASSES_PASSES_H
