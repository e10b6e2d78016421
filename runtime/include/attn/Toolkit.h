//===- Toolkit.h - what the CUDA toolkit's ptxas is -------------*- C++ -*-===//
//
// The runtime and the tools ask `ptxas --version` once per toolkit and
// process and hand the facts to the pass library
// (GPUPipelineOptions::ptxas), which runs no subprocess itself.
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

} // namespace attn

#endif // ATTN_TOOLKIT_H
