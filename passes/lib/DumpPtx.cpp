//===- DumpPtx.cpp - attn-write-ptx: the PTX of every gpu.module ----------===//
//
// Serializes each gpu.module already in the LLVM/NVVM dialects to PTX and
// writes it to a file, leaving the IR unchanged (attn-opt --attn-dump-ptx
// adds it to attn-to-gpu).
//
//===----------------------------------------------------------------------===//

#include "attn/Passes/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDUMPPTX
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnDumpPtxPass : attn::impl::AttnDumpPtxBase<AttnDumpPtxPass> {
  using AttnDumpPtxBase::AttnDumpPtxBase;

  void runOnOperation() override {
    std::string error;
    auto out = openOutputFile(path, &error);
    if (!out) {
      getOperation().emitError("attn-write-ptx: cannot write '")
          << path << "': " << error;
      return signalPassFailure();
    }
    std::string toolkit = cudaToolkitPath();
    for (auto gm : getOperation().getOps<gpu::GPUModuleOp>()) {
      for (Attribute t : gm.getTargetsAttr()) {
        auto target = dyn_cast<gpu::TargetAttrInterface>(t);
        if (!target)
          continue;
        gpu::TargetOptions opts(toolkit, {}, {}, {},
                                gpu::CompilationTarget::Assembly);
        std::optional<SmallVector<char, 0>> ptx =
            target.serializeToObject(gm, opts);
        if (!ptx) {
          gm.emitError("attn-write-ptx: cannot translate to PTX");
          return signalPassFailure();
        }
        out->os() << "// gpu.module @" << gm.getName() << "\n";
        out->os() << StringRef(ptx->data(), ptx->size()).rtrim('\0') << "\n";
      }
    }
    out->keep();
  }
};

} // namespace
