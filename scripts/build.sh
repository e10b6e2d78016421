#!/usr/bin/env bash
# Configures and builds attn in ./build (Release, ninja, ccache). Extra
# arguments are ninja targets (default: everything).
# Env: ATTN_BUILD_DIR (default build), ATTN_JOBS (default nproc),
#      ATTN_CMAKE_ARGS (extra cmake arguments, e.g. -DATTN_STATIC_LLVM=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${ATTN_BUILD_DIR:-$root/build}
# Paths relative to the checkout in ccache's keys: another clone (CI's) or
# worktree reuses the objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
jobs=${ATTN_JOBS:-$(nproc)}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${ATTN_CMAKE_ARGS:-}
fi
ninja -C "$build" -j "$jobs" "$@"
