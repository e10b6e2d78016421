#!/usr/bin/env bash
# Runs every test: builds attn, then ctest runs the lit suite (check-attn:
# dialect, verifier, pass and pipeline tests) and the GoogleTest suites
# (fp64 oracle, .npy I/O, programs executed on the CPU vs the oracle).
# GPU tests (ctest label gpu) skip with a message where no GPU exists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
build=${ATTN_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j "${ATTN_JOBS:-$(nproc)}"
