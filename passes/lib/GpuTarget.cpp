//===- GpuTarget.cpp - checks of the GPU target options -------------------===//

#include "attn/Passes/GpuTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using llvm::StringRef;

namespace {
/// The sm_80-and-newer processors of LLVM 22's NVPTX backend
/// (`llc -march=nvptx64 -mcpu=help`). A name outside this list makes the
/// NVVM target abort instead of reporting an error.
constexpr StringRef kKnownChips[] = {
    "sm_80",   "sm_86",   "sm_87",   "sm_88",   "sm_89",   "sm_90",   "sm_90a",
    "sm_100",  "sm_100a", "sm_100f", "sm_101",  "sm_101a", "sm_101f", "sm_103",
    "sm_103a", "sm_103f", "sm_110",  "sm_110a", "sm_110f", "sm_120",  "sm_120a",
    "sm_120f", "sm_121",  "sm_121a", "sm_121f"};
} // namespace

unsigned mlir::attn::gpuSmVersion(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return 0;
  StringRef digits = chip.take_while(llvm::isDigit);
  unsigned v = 0;
  if (digits.empty() || digits.size() > 4 || digits.getAsInteger(10, v))
    return 0;
  return v;
}

std::string mlir::attn::checkGpuChip(StringRef chip) {
  const std::string expected = "expected an NVIDIA architecture sm_" +
                               std::to_string(kMinGpuSm) +
                               " or newer (e.g. sm_80, sm_89, sm_90, sm_90a)";
  if (chip.empty())
    return "GPU option chip is empty; " + expected;
  if (chip.starts_with("compute_"))
    return "GPU option chip '" + chip.str() +
           "' is a virtual architecture; give the real one, sm_" +
           chip.drop_front(8).str();
  unsigned sm = gpuSmVersion(chip);
  if (sm == 0)
    return "unknown GPU chip '" + chip.str() + "'; " + expected;
  if (sm < kMinGpuSm)
    return "GPU chip " + chip.str() + " is not supported: the kernels need " +
           "sm_" + std::to_string(kMinGpuSm) +
           " or newer (cp.async, ldmatrix, bf16 mma.sync)";
  if (!llvm::is_contained(kKnownChips, chip))
    return "unknown GPU chip '" + chip.str() + "'; " + expected;
  return "";
}

std::string mlir::attn::checkGpuKernelOptions(StringRef chip, bool overlap,
                                              int64_t warps, int64_t mTiles,
                                              int64_t blockN) {
  auto got = [](int64_t v) { return ", got " + std::to_string(v); };
  if (warps != 1 && warps != 2 && warps != 4 && warps != 8)
    return "GPU option warps must be 1, 2, 4 or 8" + got(warps);
  if (mTiles != 1 && mTiles != 2)
    return "GPU option m-tiles must be 1 or 2" + got(mTiles);
  if (blockN != 32 && blockN != 64 && blockN != 128)
    return "GPU option block-n must be 32, 64 or 128" + got(blockN);
  // wgmma (warpgroup MMA) exists only on sm_90a; its kernel runs one or two
  // warpgroups of 64 query rows each and takes key tiles of 64 or 128.
  const bool wgmma = chip == "sm_90a";
  if (wgmma && warps != 4 && warps != 8)
    return "GPU option warps must be 4 or 8 (one or two warpgroups) for the "
           "sm_90a wgmma kernel" +
           got(warps);
  if (wgmma && mTiles != 1)
    return "GPU option m-tiles must be 1 for the sm_90a wgmma kernel (a "
           "warpgroup owns 64 rows)" +
           got(mTiles);
  if (overlap && !wgmma)
    return "GPU option overlap needs the sm_90a wgmma kernel (chip=sm_90a)";
  if (wgmma && blockN == 32)
    return "GPU option block-n must be 64 or 128 for the sm_90a wgmma kernel";
  return "";
}

std::string mlir::attn::checkGpuFormat(StringRef format) {
  if (format == "bin" || format == "isa" || format == "none")
    return "";
  return "GPU option format must be bin (cubin), isa (PTX) or none (NVVM "
         "dialect), got '" +
         format.str() + "'";
}

std::string mlir::attn::checkGpuLowering(StringRef lowering, StringRef chip) {
  if (lowering == "direct")
    return "";
  if (lowering != "block")
    return "GPU option lowering must be direct or block, got '" +
           lowering.str() + "'";
  if (chip == "sm_90a")
    return "GPU option lowering=block has no wgmma (sm_90a) kernel yet; use "
           "chip=sm_90 or sm_80 (mma.sync), or lowering=direct";
  return "";
}
