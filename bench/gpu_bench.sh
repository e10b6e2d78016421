#!/usr/bin/env bash
# The issue-5 GPU benchmark, run on the GPU machine in one go (attn and its
# peers in the same run, DESIGN §7): bf16, causal, B*T = 16384 tokens,
# T in $TS, D in $DS, H = 2048 / D.
#   attn RoPE attention, attn plain causal attention, attn FoX
#     (bin/attn-run --time: device time of the kernels, CUDA events, median
#     of $REPS runs after one checked run; RoPE includes its rope kernel,
#     FoX its gate prefix-sum kernel)
#   PyTorch SDPA flash and cuDNN, fla's FoX kernel (bench/gpu_peers.py).
# Usage (on the GPU machine, from the repository root):
#   bench/gpu_bench.sh [BIN_DIR]     (default .device, as gpu-package.sh made)
# Env: TS, DS, REPS; VARIANTS (default "rope plain fox"); PEERS=0 skips the
# peers; TAG is appended to attn's names; ATTN_GPU_CHIP, ATTN_GPU_WARPS,
# ATTN_GPU_BLOCK_N and ATTN_GPU_PDL pass kernel shapes and the launch mode
# to the runtime (docs/reference/environment.md). PASSES=N (default 1) runs the
# variants of each shape N times in turn (plain, fox, plain, fox, ...),
# each line tagged pass=k, and ends with bench/pass_ratios.py's summary:
# per shape the median time of each variant and the median over passes of
# each variant's time over plain's in the same pass, so that drift of the
# GPU's speed between runs cancels out of the ratios. Prints one line per measurement; FA-equivalent
# TFLOP/s = 2*B*H*T^2*D / time (causal forward: half of 4*B*H*T^2*D).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.device}
TS=${TS:-"2048 4096 8192 16384"}
DS=${DS:-"64 128"}
REPS=${REPS:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ATTN_CACHE_DIR=${ATTN_CACHE_DIR:-$tmp/cache}

program() { # program VARIANT D -> path of a bf16 program with head dim D
  local variant=$1 d=$2 f="$tmp/$1_$2.mlir"
  case $variant in
  rope) sed "s/x64x/x${d}x/g" "$root/examples/rope_bf16.mlir" >"$f" ;;
  fox) sed "s/x64x/x${d}x/g" "$root/examples/fox_bf16.mlir" >"$f" ;;
  plain)
    local t="tensor<?x?x?x${d}xbf16>"
    echo "func.func @main(%q: $t, %k: $t, %v: $t) -> $t {
  %o = attn.attention %q, %k, %v : ($t, $t, $t) -> $t
  return %o : $t
}" >"$f" ;;
  esac
  echo "$f"
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
echo "DATE $(date -u +%Y-%m-%dT%H:%M:%SZ)"
for d in $DS; do
  h=$((2048 / d))
  for t in $TS; do
    b=$((16384 / t))
    for pass in $(seq "${PASSES:-1}"); do
      passTag=""
      [ "${PASSES:-1}" -gt 1 ] && passTag=" pass=$pass"
      for v in ${VARIANTS:-rope plain fox}; do
        line=$("$bin/attn-run" "$(program $v "$d")" --device=cuda \
          --random="${b}x${h}x${t}" --seed=1 --time --repeat="$REPS" 2>&1 |
          grep "run .* ms" || true)
        ms=$(sed -n 's/.*run \([0-9.]*\) ms.*/\1/p' <<<"$line")
        if [ -n "$ms" ]; then
          tf=$(awk -v b="$b" -v h="$h" -v t="$t" -v d="$d" -v ms="$ms" \
            'BEGIN { printf "%.1f", 2*b*h*t*t*d / (ms*1e-3) / 1e12 }')
          echo "ATTN name=attn_$v${TAG:-} B=$b H=$h T=$t D=$d ms=$ms tflops=$tf$passTag"
        else
          echo "ATTN name=attn_$v${TAG:-} B=$b H=$h T=$t D=$d status=error: $line"
        fi
      done
    done
  done
done | tee "$tmp/attn.txt"
if [ "${PASSES:-1}" -gt 1 ]; then
  python3 "$root/bench/pass_ratios.py" <"$tmp/attn.txt"
fi
if [ "${PEERS:-1}" = 1 ]; then
  # shellcheck disable=SC2086
  python3 "$root/bench/gpu_peers.py" --T $TS --D $DS --reps "$REPS"
fi
