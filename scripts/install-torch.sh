#!/usr/bin/env bash
# Installs PyTorch from PyPI for attn.torch and its test (test/host/
# test_torch.py) into a venv: $ATTN_TORCH_VENV, default
# ~/.cache/attn/torch-venv, outside the build directory so that a fresh
# build (or another worktree) reuses it. A venv because Debian 12's python3
# is externally managed (PEP 668) and Debian packages no torch. PyPI's
# wheel brings its CUDA libraries (about 3 GB to download, 5 GB installed):
# the CPU-only index is not on PyPI. --no-cache-dir keeps pip from storing
# the wheels a second time. Does nothing when torch already imports there;
# ATTN_NO_TORCH=1 skips it (the torch test then says SKIPPED).
set -euo pipefail
[ "${ATTN_NO_TORCH:-0}" = 1 ] && exit 0
venv=${ATTN_TORCH_VENV:-$HOME/.cache/attn/torch-venv}
if "$venv/bin/python3" -c "import torch, numpy" >/dev/null 2>&1; then
  exit 0
fi
start=$(date +%s)
echo "attn: installing torch into $venv (scripts/install-torch.sh)" >&2
python3 -m venv "$venv"
# torch 2.15.0: the version attn.torch is tested with (torch.library's
# custom_op, register_fake and register_autograd need 2.4 or newer).
"$venv/bin/pip" install --no-cache-dir --disable-pip-version-check -q \
  "torch==2.15.0" numpy
echo "attn: torch installed into $venv in $(($(date +%s) - start)) s" >&2
