#!/usr/bin/env bash
# CPU benchmark: the fused path (attn-fuse -> block program -> CPU backend)
# vs the reference lowering, on examples/rope.mlir, fox.mlir, path.mlir and
# path_fox.mlir (EXAMPLES overrides, e.g. "mta mta_pre"), B=1, H=4 (SHAPE=BxH
# overrides), D=64, f32, causal (PaTH betas U(0, 2)). Prints time (attn-run
# --time, median) and the peak resident memory of the whole process
# (/usr/bin/time -v).
# Usage: bench/cpu_fused_vs_reference.sh [T ...]   (default 1024 2048 4096 8192)
# Env: ATTN_BUILD_DIR (default build), REPEAT (default 3), SKIP_REFERENCE_ABOVE
#      (default 8192: the reference materialises 3 H x T x T f32 maps),
#      EXAMPLES (default "rope fox path path_fox"), SHAPE (default 1x4).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTN_BUILD_DIR:-$root/build}
run="$build/bin/attn-run"
repeat=${REPEAT:-3}
limit=${SKIP_REFERENCE_ABOVE:-8192}
lens=("$@")
read -r -a examples <<<"${EXAMPLES:-rope fox path path_fox}"
shape=${SHAPE:-1x4}
[ ${#lens[@]} -eq 0 ] && lens=(1024 2048 4096 8192)
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt install time)"; exit 1; }

measure() { # file pipeline shape -> "ms peakMiB"
  local out
  out=$(/usr/bin/time -v "$run" "$1" --random="$3" --seed=1 --pipeline="$2" \
        --time --repeat="$repeat" 2>&1)
  local ms mib
  ms=$(sed -n 's/.*run \([0-9.]*\) ms.*/\1/p' <<<"$out")
  mib=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' <<<"$out")
  echo "$ms $((mib / 1024))"
}

printf '| example | BxH | T | reference ms | reference peak MiB | fused ms | fused peak MiB | speed-up |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- |\n'
for ex in "${examples[@]}"; do
  for t in "${lens[@]}"; do
    read -r fms fmib < <(measure "$root/examples/$ex.mlir" fused "${shape}x$t")
    if [ "$t" -le "$limit" ]; then
      read -r rms rmib < <(measure "$root/examples/$ex.mlir" reference "${shape}x$t")
      speed=$(awk -v a="$rms" -v b="$fms" 'BEGIN{printf "%.1fx", a/b}')
    else
      rms="-"; rmib="-"; speed="-"
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$ex" "$shape" "$t" "$rms" "$rmib" "$fms" "$fmib" "$speed"
  done
done
