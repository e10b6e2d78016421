#!/usr/bin/env bash
# Makes a CUDA toolkit directory whose ptxas assembles register-A wgmma
# correctly (release 13.3 or newer): ptxas 13.0 reuses a wgmma's A registers
# before the asynchronous wgmma has read them, and PaTH's attention kernel
# in the wgmma form (path-attention-wgmma) needs a fixed one
# (docs/block-program.md, "PaTH's GPU form"). bin/ptxas comes from PyPI's
# nvidia-cuda-nvcc wheel; nvvm/ (libdevice) is linked from the installed
# toolkit. Point CUDA_HOME (or attn-to-gpu's toolkit=) at the directory.
# Usage: scripts/fixed-ptxas.sh [DIR]     (default: .cache/cuda-ptxas)
# Env: CUDA_HOME, the toolkit whose nvvm/ is linked (default /usr/local/cuda);
# ATTN_PTXAS_WHEEL, the pip requirement (default "nvidia-cuda-nvcc>=13.3");
# ATTN_NVVM_LINK=0 leaves nvvm/ out (gpu-package.sh links it on the GPU
# machine); ATTN_PTXAS_FILE=PATH takes that ptxas instead of the wheel's
# (gpu-run.sh, on the GPU machine, with the one gpu-package.sh packed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.cache/cuda-ptxas}
cuda=${CUDA_HOME:-/usr/local/cuda}
wheel=${ATTN_PTXAS_WHEEL:-nvidia-cuda-nvcc>=13.3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ptxas=${ATTN_PTXAS_FILE:-}
if [ -z "$ptxas" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "fixed-ptxas.sh: needs pip (apt-get install python3-pip)" >&2
    exit 1
  fi
  python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --dest "$tmp" "$wheel"
  whl=$(ls "$tmp"/*.whl)
  member=$(python3 - "$whl" "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.endswith("/bin/ptxas")]
    if not names:
        sys.exit("fixed-ptxas.sh: no bin/ptxas in " + sys.argv[1])
    z.extract(names[0], sys.argv[2])
    print(names[0])
PY
  )
  ptxas=$tmp/x/$member
fi
mkdir -p "$dir/bin"
install -m 755 "$ptxas" "$dir/bin/ptxas"
if [ "${ATTN_NVVM_LINK:-1}" = 1 ]; then
  if [ ! -d "$cuda/nvvm" ]; then
    echo "fixed-ptxas.sh: no $cuda/nvvm to link (set CUDA_HOME)" >&2
    exit 1
  fi
  ln -sfn "$cuda/nvvm" "$dir/nvvm"
fi
"$dir/bin/ptxas" --version | tail -1
echo "CUDA_HOME=$dir"
