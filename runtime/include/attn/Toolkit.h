//===- Toolkit.h - what the CUDA toolkit's ptxas is -------------*- C++ -*-===//
//
// The runtime and the tools ask `ptxas --version` once per toolkit and
// process and hand the facts to the pass library
// (GPUPipelineOptions::ptxas), which runs no subprocess itself. The runtime
// also looks for a newer ptxas than its toolkit's (chooseToolkit).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLKIT_H
#define ATTN_TOOLKIT_H

#include "attn/Passes/Passes.h"

#include <string>

namespace attn {

struct PtxasVersion {
  /// The release and where it was found (checkPtxasForRegisterWgmma's
  /// input).
  mlir::attn::PtxasFacts facts;
  /// `ptxas --version`'s text, "" without a ptxas that runs: the GPU disk
  /// cache keys cubins by it, since two toolkits' ptxas make different
  /// cubins of one PTX (13.0's wrong register-A wgmma, 13.3's right one).
  std::string text;
};

/// `toolkit`'s bin/ptxas, asked once per path and process (thread-safe).
const PtxasVersion &ptxasVersion(llvm::StringRef toolkit);

/// ptxasVersion(toolkit).facts, in the form setPtxasProbe takes.
mlir::attn::PtxasFacts probePtxas(llvm::StringRef toolkit);

/// A ptxas besides the toolkit's own, for a toolkit whose ptxas is older
/// than the register-A wgmma forms need: `ATTN_PTXAS` (a file; `none`
/// looks nowhere) when set,
/// else the `nvidia/cu13/bin/ptxas` of PyPI's nvidia-cuda-nvcc in the
/// site-packages of `python` (a name looked up on PATH, or a path; "" skips
/// it). "" when there is none.
std::string findExtraPtxas(llvm::StringRef python);

/// The toolkit to compile with, and why when it is not `base`.
struct ChosenToolkit {
  std::string path, note;
};

/// `base` when its ptxas is 13.3 or newer, or no newer one is found
/// (findExtraPtxas); else a toolkit directory under `workDir` (made once,
/// reused) whose bin/ptxas links the newer ptxas and whose nvvm/ links
/// `base`'s (libdevice), so that a user of CUDA 13.0 with nvidia-cuda-nvcc
/// installed by pip gets the register-A wgmma forms.
ChosenToolkit chooseToolkit(llvm::StringRef base, llvm::StringRef workDir,
                            llvm::StringRef python);

} // namespace attn

#endif // ATTN_TOOLKIT_H
