#!/usr/bin/env bash
# MTA on the GPU machine, attn and its peers in one run (issue 17 item 5):
# bf16, causal, B = 1, H = 16, D = 128, T in $TS.
#   attn mta_full  examples/mta_bf16.mlir (the released configuration: RoPE,
#                  6x11 pre and post convs, all-head mixing, norm + gate)
#   attn mta_pre   examples/mta_pre_bf16.mlir (6x11 pre conv only)
#     (bin/attn-run --time: device time of the kernels, CUDA events, median
#     of $REPS runs after one run; peak_mb: the process's device memory,
#     nvidia-smi sampled every 50 ms, so it includes the CUDA context and
#     modules)
#   official-style MTA (full and pre-only) and SDPA flash on plain attention
#     of the same shape (bench/mta_peers.py; peak_mb: torch's peak
#     allocation, without the context).
# PASSES=N (default 2) runs everything N times in turn so drift cancels out
# of the ratios. BASE_BIN=DIR also times DIR/attn-run (another commit's
# build) in each pass, right after BIN_DIR's, as attn_full_base and
# attn_pre_base. Usage (from the repository root):
#   bench/mta_gpu_bench.sh [BIN_DIR]   (default .device, as gpu-package.sh made)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.device}
TS=${TS:-"2048 4096 8192"}
REPS=${REPS:-20}
PASSES=${PASSES:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ATTN_CACHE_DIR=${ATTN_CACHE_DIR:-$tmp/cache}

# run_attn NAME EXAMPLE T [BIN]: one TIME line with the median ms and
# peak_mb.
run_attn() {
  local name=$1 ex=$2 t=$3 dir=${4:-$bin} log="$tmp/run.log" peak=0
  "$dir/attn-run" "$root/examples/$ex" --device=cuda --random=1x16x"$t" \
    --time --repeat="$REPS" >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    local m
    m=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
      awk -F', ' -v p="$pid" '$1 == p { print $2 }')
    [ -n "$m" ] && [ "$m" -gt "$peak" ] && peak=$m
    sleep 0.05
  done
  wait "$pid" && rc=0 || rc=$?
  echo "TIME name=attn_$name B=1 H=16 T=$t D=128 peak_mb=$peak rc=$rc $(tail -1 "$log")"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
echo "DATE $(date -u +%Y-%m-%dT%H:%M:%SZ)"
for pass in $(seq 1 "$PASSES"); do
  echo "PASS $pass"
  for t in $TS; do
    run_attn full mta_bf16.mlir "$t"
    [ -n "${BASE_BIN:-}" ] && run_attn full_base mta_bf16.mlir "$t" "$BASE_BIN"
    run_attn pre mta_pre_bf16.mlir "$t"
    [ -n "${BASE_BIN:-}" ] && run_attn pre_base mta_pre_bf16.mlir "$t" "$BASE_BIN"
  done
  python3 "$root/bench/mta_peers.py" --T $TS --reps "$REPS"
done
