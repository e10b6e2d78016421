//===- BlockTarget.cpp - target descriptions of the block program ---------===//

#include "BlockTarget.h"

#include "attn/Passes/GpuTarget.h"

#include "llvm/Support/Error.h"

using namespace mlir::attn;

std::string mlir::attn::parseBlockTarget(llvm::StringRef name,
                                         BlockTarget &out) {
  BlockTarget t;
  t.name = name.str();
  if (name == "cpu") {
    out = t;
    return "";
  }
  // mma.sync m16n8k16 kernels (sm_90a: one warpgroup MMA of 64 rows):
  // four warps of 16 query rows, 64-key tiles, two K/V stages in flight
  // (the defaults measured in docs/gpu-backend.md).
  if (name == "sm_80" || name == "sm_90" || name == "sm_90a") {
    t.gpu = true;
    t.wgmma = name == "sm_90a";
    // The chip's facts from the one target table.
    const TargetDesc &desc = llvm::cantFail(getTargetDesc(name));
    t.dependentLaunch = desc.dependentLaunch;
    t.bulkCopies = desc.tma;
    out = t;
    return "";
  }
  return "unknown block-program target '" + name.str() +
         "' (expected cpu, sm_80, sm_90 or sm_90a)";
}
