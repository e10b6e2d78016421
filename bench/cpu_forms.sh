#!/usr/bin/env bash
# CPU benchmark of the block program's two forms: each example's CPU form
# (attn-to-block{target=cpu}, what attn-run --pipeline=fused runs) against
# its GPU form (attn-to-block{target=sm_90}, the mma.sync kernels) stripped
# by attn-block-strip-gpu and run on the CPU, in one process each, at the
# shapes of cpu_fused_vs_reference.sh (B=1, H=4, D=64, causal). The GPU form
# takes bf16/f16 operands only, so each f32 example also runs as bf16
# (examples/<name>_bf16.mlir where it exists, else its q, k, v retyped); the
# f32 row has the CPU form alone.
# Usage: bench/cpu_forms.sh [T ...]   (default 1024 4096)
# Env: ATTN_BUILD_DIR (default build), REPEAT (default 5), TARGET (default
#      sm_90), EXAMPLES (default "rope fox path path_fox mta_pre mta"),
#      SHAPE (default 1x4).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
run="$build/bin/attn-run"
opt="$build/bin/attn-opt"
repeat=${REPEAT:-5}
target=${TARGET:-sm_90}
shape=${SHAPE:-1x4}
lens=("$@")
[ ${#lens[@]} -eq 0 ] && lens=(1024 4096)
read -r -a examples <<<"${EXAMPLES:-rope fox path path_fox mta_pre mta}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

time_ms() { # file T -> median ms of attn-run --time on the CPU
  ATTN_DEVICE=cpu "$run" "$1" --random="${shape}x$2" --seed=1 \
    --pipeline=fused --time --repeat="$repeat" 2>&1 |
    sed -n 's/.*run \([0-9.]*\) ms.*/\1/p'
}

printf '| example | dtype | D | T | CPU form ms | GPU form (%s, stripped) ms | GPU form / CPU form |\n' "$target"
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for ex in "${examples[@]}"; do
  src="$root/examples/$ex.mlir"
  bf16="$root/examples/${ex}_bf16.mlir"
  [ -f "$bf16" ] || { sed 's/x64xf32>/x64xbf16>/g' "$src" >"$tmp/$ex.bf16.mlir"; bf16="$tmp/$ex.bf16.mlir"; }
  d32=$(grep -o 'tensor<?x?x?x[0-9]*xf32>' "$src" | head -1 | sed 's/.*x\([0-9]*\)xf32>/\1/')
  d16=$(grep -o 'tensor<?x?x?x[0-9]*xbf16>' "$bf16" | head -1 | sed 's/.*x\([0-9]*\)xbf16>/\1/')
  "$opt" "$bf16" --attn-fuse --attn-to-block="target=$target" \
    -o "$tmp/$ex.gpu.mlir"
  for t in "${lens[@]}"; do
    f32=$(time_ms "$src" "$t")
    printf '| %s | f32 | %s | %s | %s | (bf16/f16 only) | - |\n' "$ex" "$d32" "$t" "$f32"
    cpu=$(time_ms "$bf16" "$t")
    gpu=$(time_ms "$tmp/$ex.gpu.mlir" "$t")
    ratio=$(awk -v a="$gpu" -v b="$cpu" 'BEGIN{printf "%.2f", a/b}')
    printf '| %s | bf16 | %s | %s | %s | %s | %s |\n' "$ex" "$d16" "$t" "$cpu" "$gpu" "$ratio"
  done
done
