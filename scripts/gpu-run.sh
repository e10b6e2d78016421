#!/usr/bin/env bash
# On the GPU machine: unpacks what scripts/gpu-package.sh made and runs the
# GPU tests and the examples there (each binary only if it was packaged).
# Prints the GPU and every result; exits non-zero on the first failure.
# Usage: scripts/gpu-run.sh [DIR]   (default: .device)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.device}
cd "$dir"
for f in *.xz; do
  if [ -e "$f" ]; then xz -d -f "$f"; fi
done
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version --format=csv
fi
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# A packed fixed ptxas (ATTN_PACK_PTXAS=1) becomes a toolkit of its own,
# with the installed toolkit's libdevice, so that path-attention-wgmma runs.
if [ -e ptxas ]; then
  ATTN_PTXAS_FILE=$PWD/ptxas "$root/scripts/fixed-ptxas.sh" cuda-fixed
  export CUDA_HOME=$PWD/cuda-fixed
fi
# Tests that read examples/ find them in this checkout, not the build tree.
export ATTN_SOURCE_DIR=${ATTN_SOURCE_DIR:-$root}
if [ -e attn-gpu-tests ]; then
  chmod +x attn-gpu-tests
  ./attn-gpu-tests
fi
if [ -e attn-run ]; then
  chmod +x attn-run
  for f in "$root"/examples/*.mlir; do
    ./attn-run "$f" --random=1x4x256 --seed=1 --check --time
  done
fi
if [ -e attn-launch-bench ]; then
  chmod +x attn-launch-bench
  for v in plain rope fox; do
    ./attn-launch-bench --device=cuda --variant=$v --shape=1x8x16
  done
fi
# The Python module on PyTorch tensors (needs torch with CUDA).
if [ -e libattn.so ] && python3 -c "import torch" 2>/dev/null; then
  ATTN_LIBRARY=$PWD/libattn.so PYTHONPATH=$root/python \
    python3 "$root/bench/python_gpu_check.py"
fi
