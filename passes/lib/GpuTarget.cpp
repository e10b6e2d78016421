//===- GpuTarget.cpp - checks of the GPU target options -------------------===//

#include "attn/Passes/GpuTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using llvm::StringRef;

namespace {
using mlir::attn::MmaKind;
using mlir::attn::TargetDesc;
using mlir::attn::TileShape;

constexpr TileShape kFlashTiles[] = {{64, 64, 64}, {128, 64, 64}};

/// Shared memory per block (opt-in maximum), by compute capability.
constexpr int64_t k163K = 166912, k99K = 101376, k227K = 232448;

TargetDesc gpu(llvm::StringLiteral name, unsigned sm, int64_t sharedBytes) {
  // wgmma exists only with sm_90a's arch-specific features; later chips
  // (sm_100a: tcgen05) are not wgmma targets.
  MmaKind mma = name == "sm_90a" ? MmaKind::Wgmma : MmaKind::MmaSync;
  return TargetDesc{name,
                    sm,
                    mma,
                    /*warps=*/4,
                    /*stages=*/2,
                    sharedBytes,
                    /*cpAsync=*/true,
                    /*tma=*/sm >= 90,
                    /*dependentLaunch=*/sm >= 90,
                    kFlashTiles};
}

/// Every target: the CPU and the sm_80-and-newer processors of LLVM 22's
/// NVPTX backend (`llc -march=nvptx64 -mcpu=help`). A GPU name outside this
/// table makes the NVVM target abort instead of reporting an error, so it
/// is refused. sm_88 is not in the Programming Guide's table; it gets the
/// 99 KB of the other sm_8x parts without 163 KB.
const TargetDesc kTargets[] = {
    {"cpu", 0, MmaKind::None, /*warps=*/1, /*stages=*/1, /*sharedBytes=*/0,
     /*cpAsync=*/false, /*tma=*/false, /*dependentLaunch=*/false, kFlashTiles},
    gpu("sm_80", 80, k163K),
    gpu("sm_86", 86, k99K),
    gpu("sm_87", 87, k163K),
    gpu("sm_88", 88, k99K),
    gpu("sm_89", 89, k99K),
    gpu("sm_90", 90, k227K),
    gpu("sm_90a", 90, k227K),
    gpu("sm_100", 100, k227K),
    gpu("sm_100a", 100, k227K),
    gpu("sm_100f", 100, k227K),
    gpu("sm_101", 101, k227K),
    gpu("sm_101a", 101, k227K),
    gpu("sm_101f", 101, k227K),
    gpu("sm_103", 103, k227K),
    gpu("sm_103a", 103, k227K),
    gpu("sm_103f", 103, k227K),
    gpu("sm_110", 110, k227K),
    gpu("sm_110a", 110, k227K),
    gpu("sm_110f", 110, k227K),
    gpu("sm_120", 120, k99K),
    gpu("sm_120a", 120, k99K),
    gpu("sm_120f", 120, k99K),
    gpu("sm_121", 121, k99K),
    gpu("sm_121a", 121, k99K),
    gpu("sm_121f", 121, k99K)};

const TargetDesc *findTarget(StringRef name) {
  for (const TargetDesc &t : kTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}
} // namespace

TileShape mlir::attn::TargetDesc::tileFor(int64_t headDim) const {
  TileShape best = tiles.front();
  for (const TileShape &t : tiles)
    if (t.headDim <= headDim)
      best = t;
  return best;
}

llvm::Expected<const TargetDesc &> mlir::attn::getTargetDesc(StringRef target) {
  if (target != "cpu")
    if (std::string bad = checkGpuChip(target); !bad.empty())
      return llvm::createStringError(bad);
  return *findTarget(target);
}

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
  if (!findTarget(chip))
    return "unknown GPU chip '" + chip.str() + "'; " + expected;
  return "";
}

std::string mlir::attn::checkGpuKernelOptions(int64_t warps, int64_t blockN) {
  auto got = [](int64_t v) { return ", got " + std::to_string(v); };
  // The flash kernel's warps own one 16-row tile each (on sm_90a one or two
  // warpgroups of 64 rows); with block-n 32 FoX's records tile would have
  // fewer rows than an ldmatrix pair or a wgmma core-matrix column.
  if (warps != 4 && warps != 8)
    return "GPU option warps must be 4 or 8" + got(warps);
  if (blockN != 64 && blockN != 128)
    return "GPU option block-n must be 64 or 128" + got(blockN);
  return "";
}

std::string mlir::attn::checkPathTransport(StringRef transport) {
  if (transport == "f16" || transport == "split")
    return "";
  return "GPU option path-transport must be f16 or split, got '" +
         transport.str() + "'";
}

std::string mlir::attn::checkGradDq(StringRef gradDq) {
  if (gradDq == "walk" || gradDq == "reduce")
    return "";
  return "option grad-dq must be walk (a second walk, deterministic) or "
         "reduce (reducing stores), got '" +
         gradDq.str() + "'";
}

std::string mlir::attn::checkGpuFormat(StringRef format) {
  if (format == "bin" || format == "isa" || format == "none")
    return "";
  return "GPU option format must be bin (cubin), isa (PTX) or none (NVVM "
         "dialect), got '" +
         format.str() + "'";
}
