#!/usr/bin/env bash
# Installs what attn needs to build and test on Debian 12: LLVM/MLIR 22 from
# Debian's packages, ninja, ccache, GoogleTest, Python 3 (for lit), DLPack's
# header (attn/attn.h), NumPy (the Python module's test), then PyTorch from
# PyPI into a venv (scripts/install-torch.sh: attn.torch's test; skipped
# with ATTN_NO_TORCH=1; python3-venv makes the venv, and python3-dev has
# the Python.h that torch.compile's CPU kernels include). Does nothing when
# everything is present; uses sudo when not run as root.
set -euo pipefail

packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          libomp-22-dev cmake ninja-build ccache g++ libgtest-dev python3 zlib1g-dev
          libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev
          libdlpack-dev python3-numpy python3-venv python3-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "attn: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi
# Without torch (no network, say) everything builds: a warning here, and
# the torch test fails under scripts/test.sh saying what is missing.
"$(dirname "$0")/install-torch.sh" ||
  echo "attn: warning: scripts/install-torch.sh failed: attn.torch's test" \
    "cannot run (ATTN_NO_TORCH=1 declines torch)" >&2
