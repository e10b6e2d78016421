#!/usr/bin/env bash
# On the GPU machine: runs NVIDIA compute-sanitizer's memcheck (out-of-bounds
# and misaligned global/shared accesses, device-side leaks) and racecheck
# (shared-memory hazards between the threads of a block) over the GPU tests
# (attn-gpu-tests from scripts/gpu-package.sh), at a small and a long T.
# Every test still compares with the fp64 oracle. Exits non-zero on the
# first sanitizer report or test failure.
#
# Usage: scripts/gpu-sanitize.sh [DIR]     (default: .device)
# Env:   CUDA_HOME (default /usr/local/cuda; compute-sanitizer from its bin/)
#        ATTN_SANITIZE_SMALL, ATTN_SANITIZE_LONG: gtest filters of the two
#        runs (defaults: every T = 1 and T = 65 case and the host-API tests;
#        the T = 16384 FoX case)
#        ATTN_SANITIZE_TOOLS (default "memcheck racecheck")
# Kernels run 10-100x slower under the sanitizers; the defaults take a few
# minutes on an H200.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.device}
cd "$dir"
if [ -e attn-gpu-tests.xz ]; then xz -d -f attn-gpu-tests.xz; fi
chmod +x attn-gpu-tests
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cs=$CUDA_HOME/bin/compute-sanitizer
if [ ! -x "$cs" ]; then
  echo "gpu-sanitize.sh: error: no compute-sanitizer at $cs (set CUDA_HOME)" >&2
  exit 1
fi
# Compiled images from an earlier run are fine (the sanitizers look at the
# kernels as they run), and they keep the slow part to the kernels.
small=${ATTN_SANITIZE_SMALL:-'All/GpuAttention.MatchesOracle/*_T1_*:All/GpuAttention.MatchesOracle/*_T65_*:HostApiGpu.*'}
long=${ATTN_SANITIZE_LONG:-'All/GpuAttention.MatchesOracle/fox_B1H1Hk1_T16384_*'}
for tool in ${ATTN_SANITIZE_TOOLS:-memcheck racecheck}; do
  extra=()
  if [ "$tool" = memcheck ]; then extra=(--leak-check full); fi
  for filter in "$small" "$long"; do
    echo "== compute-sanitizer --tool $tool: attn-gpu-tests --gtest_filter=$filter"
    start=$(date +%s)
    "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 3 --print-limit 20 \
      ./attn-gpu-tests --gtest_filter="$filter"
    echo "== $tool done in $(( $(date +%s) - start )) s"
  done
done
