#!/usr/bin/env bash
# Builds self-contained binaries for a GPU machine that has no LLVM/MLIR
# (DESIGN §8): LLVM/MLIR and libstdc++ linked statically (ATTN_STATIC_LLVM),
# stripped and xz-compressed into a folder that can be copied there whole.
# Needs on the GPU machine only glibc, zlib, zstd, xz and the NVIDIA driver
# (ptxas from a CUDA toolkit too, for tests that compile kernels there).
#
# Usage: scripts/gpu-package.sh [OUT_DIR]        (default: .device)
# Then, on the GPU machine, from a copy of the repository with OUT_DIR:
#   scripts/gpu-run.sh [OUT_DIR]
# Env: ATTN_STATIC_BUILD_DIR (default build-static), ATTN_GPU_TARGETS (default
# "attn-run attn-opt attn-gpu-tests"; all three xz-compressed are ~95 MB;
# `attn` packs libattn.so for the Python check, attn-launch-bench the launch
# overhead tool); ATTN_PACK_PTXAS=1 also packs a ptxas 13.3 or newer from PyPI
# (scripts/fixed-ptxas.sh, ~12 MB compressed), which gpu-run.sh then puts
# under CUDA_HOME for path-attention-wgmma.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.device}
build=${ATTN_STATIC_BUILD_DIR:-$root/build-static}
"$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DATTN_STATIC_LLVM=ON -DATTN_ENABLE_TESTS=ON
fi
read -r -a targets <<<"${ATTN_GPU_TARGETS:-attn-run attn-opt attn-gpu-tests}"
ninja -C "$build" -j "${ATTN_JOBS:-$(nproc)}" "${targets[@]}"
mkdir -p "$out"
for t in "${targets[@]}"; do
  src=$build/bin/$t name=$t
  if [ "$t" = attn ]; then src=$build/lib/libattn.so name=libattn.so; fi
  strip -o "$out/$name" "$src"
  xz -T0 -6 -f "$out/$name"
done
if [ "${ATTN_PACK_PTXAS:-0}" = 1 ]; then
  ATTN_NVVM_LINK=0 "$root/scripts/fixed-ptxas.sh" "$out/cuda-fixed"
  xz -T0 -6 -c "$out/cuda-fixed/bin/ptxas" >"$out/ptxas.xz"
  rm -rf "$out/cuda-fixed"
fi
ls -la "$out"
