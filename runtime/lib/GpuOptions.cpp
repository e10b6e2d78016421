//===- GpuOptions.cpp - CompileOptions::gpu resolved for one device -------===//

#include "GpuOptions.h"
#include "DiskCache.h"

#include "attn/Passes/GpuTarget.h"
#include "attn/Toolkit.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <mutex>

using llvm::Error;
using llvm::Expected;
using mlir::attn::GPUPipelineOptions;

namespace attn::detail {
namespace {

/// The integer kernel-shape fields: CompileOptions::gpu field (0 = unset),
/// environment variable, the pipeline option it sets (whose default applies
/// when both are unset) and the range an environment value must lie in
/// (the pipeline's checks then apply to every value).
struct ShapeField {
  int GpuKernelOptions::*field;
  const char *env;
  int64_t GPUPipelineOptions::*option;
  int lo, hi;
};
const ShapeField kShapeFields[] = {
    {&GpuKernelOptions::warps, "ATTN_GPU_WARPS", &GPUPipelineOptions::warps, 1,
     1024},
    {&GpuKernelOptions::blockN, "ATTN_GPU_BLOCK_N", &GPUPipelineOptions::blockN,
     1, 1 << 20},
};
/// The text options: the field when set, else the variable, else the
/// pipeline's default (checkGPUPipelineOptions judges the value).
struct TextField {
  std::string GpuKernelOptions::*field;
  const char *env;
  std::string GPUPipelineOptions::*option;
};
const TextField kTextFields[] = {
    {&GpuKernelOptions::pathTransport, "ATTN_GPU_PATH_TRANSPORT",
     &GPUPipelineOptions::pathTransport},
    {&GpuKernelOptions::gradDq, "ATTN_GPU_GRAD_DQ",
     &GPUPipelineOptions::gradDq},
};
constexpr const char *kChipEnv = "ATTN_GPU_CHIP";
constexpr const char *kPdlEnv = "ATTN_GPU_PDL";
constexpr const char *kPathChunkWgmmaEnv = "ATTN_GPU_PATH_CHUNK_WGMMA";
constexpr const char *kPathAttentionWgmmaEnv = "ATTN_GPU_PATH_ATTENTION_WGMMA";
/// The direct kernel builder's variables. It was removed after 07981fc
/// (every GPU kernel comes from the block program); a script that still
/// sets one gets an error, not a silently different kernel.
constexpr const char *kRemovedEnv[] = {"ATTN_GPU_LOWERING", "ATTN_GPU_OVERLAP",
                                       "ATTN_GPU_M_TILES"};

/// The value of environment variable `name`; null when unset or empty.
const char *envValue(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

/// The integer in environment variable `name`, `fallback` when unset or
/// empty; anything but a decimal integer in [lo, hi] is an error naming the
/// variable (std::atoi would read "8x" as 8 and "abc" as 0).
Expected<int64_t> envInt(const char *name, int64_t fallback, int lo, int hi) {
  const char *v = envValue(name);
  if (!v)
    return fallback;
  int value = 0;
  if (llvm::StringRef(v).getAsInteger(10, value) || value < lo || value > hi)
    return llvm::createStringError(
        std::string(name) + "='" + v + "' is not an integer in [" +
        std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return value;
}

/// A tri-state flag (-1 unset) from the options, else `env`, else
/// `fallback()`, asked only then.
Expected<bool> flag(int set, const char *env,
                    llvm::function_ref<bool()> fallback) {
  if (set >= 0)
    return set != 0;
  if (!envValue(env))
    return fallback();
  auto v = envInt(env, 0, 0, 1);
  if (!v)
    return v.takeError();
  return *v != 0;
}

/// Whether a form with register-A wgmma is the default for `chip` (a
/// checked chip name): a wgmma chip whose toolkit's ptxas assembles it.
bool registerWgmmaByDefault(const std::string &chip) {
  auto desc = mlir::attn::getTargetDesc(chip);
  if (!desc) {
    llvm::consumeError(desc.takeError());
    return false;
  }
  return desc->mma == mlir::attn::MmaKind::Wgmma &&
         mlir::attn::checkPtxasForRegisterWgmma(
             attn::probePtxas(attn::detail::runtimeToolkit()), "")
             .empty();
}

std::string envNames() {
  std::string names = kChipEnv;
  for (const ShapeField &f : kShapeFields)
    names += std::string(", ") + f.env;
  for (const TextField &f : kTextFields)
    names += std::string(", ") + f.env;
  return names + ", " + kPdlEnv + ", " + kPathChunkWgmmaEnv + ", " +
         kPathAttentionWgmmaEnv;
}

} // namespace

Expected<ResolvedGpuOptions> resolveGpuOptions(const GpuKernelOptions &o,
                                               int smMajor, int smMinor) {
  for (const char *env : kRemovedEnv)
    if (const char *v = envValue(env))
      return llvm::createStringError(
          std::string(env) + "='" + v +
          "' is set, but it was removed on 2026-12-03 with the direct GPU "
          "kernel builder: every GPU kernel now comes from the block "
          "program; unset it");
  ResolvedGpuOptions r;
  GPUPipelineOptions &p = r.pipeline;
  p.chip = o.chip;
  if (p.chip.empty())
    if (const char *c = envValue(kChipEnv))
      p.chip = c;
  // sm_90 devices get the sm_90a (wgmma) kernel: arch-specific code, built
  // for exactly this device; sm_90 (mma.sync) stays selectable.
  if (p.chip.empty())
    p.chip = "sm_" + std::to_string(smMajor) + std::to_string(smMinor) +
             (smMajor == 9 && smMinor == 0 ? "a" : "");
  for (const ShapeField &f : kShapeFields) {
    if (int set = o.*f.field) {
      p.*f.option = set;
      continue;
    }
    auto v = envInt(f.env, p.*f.option, f.lo, f.hi);
    if (!v)
      return v.takeError();
    p.*f.option = *v;
  }
  auto pdl =
      flag(o.dependentLaunch, kPdlEnv, [&] { return r.dependentLaunch; });
  if (!pdl)
    return pdl.takeError();
  r.dependentLaunch = *pdl;
  for (const TextField &f : kTextFields) {
    if (!(o.*f.field).empty())
      p.*f.option = o.*f.field;
    else if (const char *v = envValue(f.env))
      p.*f.option = v;
  }
  // Asked for neither way, PaTH's kernels take the wgmma forms where that
  // is faster (bench/history/runs-to-05a9f8e.md, "GPU: PaTH's attention
  // kernel in the wgmma form with a fixed ptxas" and "GPU: PaTH with both
  // kernels in the wgmma form against fla") and assembled right: a wgmma chip
  // and a toolkit whose ptxas is 13.3 or newer. Both read a dot's A from
  // registers, which ptxas 13.0 miscompiles in the attention kernel; the chunk
  // kernel's form passed its tests through 13.0, but without a reason to trust
  // that in every shape it too is left to an explicit choice there. The ptxas
  // is asked only when a default is needed (once per toolkit).
  auto byDefault = [&] { return registerWgmmaByDefault(p.chip); };
  auto chunkWgmma = flag(o.pathChunkWgmma, kPathChunkWgmmaEnv, byDefault);
  if (!chunkWgmma)
    return chunkWgmma.takeError();
  p.pathChunkWgmma = *chunkWgmma;
  auto attentionWgmma =
      flag(o.pathAttentionWgmma, kPathAttentionWgmmaEnv, byDefault);
  if (!attentionWgmma)
    return attentionWgmma.takeError();
  p.pathAttentionWgmma = *attentionWgmma;
  p.format = "none";
  // Only a form that needs a fixed ptxas asks it.
  if (p.pathAttentionWgmma)
    p.ptxas = attn::probePtxas(runtimeToolkit());
  if (std::string bad = mlir::attn::checkGPUPipelineOptions(p); !bad.empty())
    return llvm::createStringError(bad + " (from CompileOptions::gpu or " +
                                   envNames() + ")");
  return r;
}

std::string gpuOptionsKey(const GpuKernelOptions &o) {
  std::string key = o.chip + '\0';
  for (const ShapeField &f : kShapeFields)
    key += std::to_string(o.*f.field) + '\0';
  for (const TextField &f : kTextFields)
    key += o.*f.field + '\0';
  return key + std::to_string(o.dependentLaunch) + '\0' +
         std::to_string(o.pathChunkWgmma) + '\0' +
         std::to_string(o.pathAttentionWgmma);
}

} // namespace attn::detail

const std::string &attn::detail::runtimeToolkit(std::string *note) {
  // Once per CUDA_HOME and ATTN_PTXAS (a process may change them between
  // compiles; the tests do).
  static std::mutex mu;
  static llvm::StringMap<attn::ChosenToolkit> chosen;
  std::string base = mlir::attn::cudaToolkitPath();
  const char *extra = std::getenv("ATTN_PTXAS");
  std::string key = base + '\0' + (extra ? extra : "");
  std::lock_guard<std::mutex> lock(mu);
  auto it = chosen.find(key);
  if (it == chosen.end()) {
    std::string work = cacheDirectory();
    if (work.empty()) {
      llvm::SmallString<128> tmp;
      llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
      work = tmp.str().str();
    }
    it = chosen.insert({key, attn::chooseToolkit(base, work, "python3")}).first;
  }
  // StringMap's values stay where they are when others are inserted.
  if (note)
    *note = it->second.note;
  return it->second.path;
}
