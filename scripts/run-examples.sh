#!/usr/bin/env bash
# The main job: builds attn, then runs every example in examples/ through the
# furthest pipeline that exists on the default device (today: the reference
# lowering on the CPU), on seeded random inputs, and prints per example the
# error against the fp64 oracle and the time. Exits non-zero if any example
# fails or misses the oracle bound.
# Env: ATTN_SHAPE (BxHxT, default 1x4x256), ATTN_DEVICE (cpu|cuda).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" attn-run attn-opt
build=${ATTN_BUILD_DIR:-$root/build}
shape=${ATTN_SHAPE:-1x4x256}
status=0
for f in "$root"/examples/*.mlir; do
  "$build/bin/attn-run" "$f" --random="$shape" --seed=1 --beta-range=1.5,2 \
    --check --time --repeat=3 || status=1
done
exit $status
