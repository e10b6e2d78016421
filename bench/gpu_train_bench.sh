#!/usr/bin/env bash
# The training benchmark of issue 43 item 6, run on the GPU machine in one
# go: bf16, causal, B*T = 16384 tokens, T in $TS, D in $DS, H = 2048 / D.
#   attn plain and FoX: bin/attn-run --grad --time (device time of the
#     forward's kernels, output + LSE, and of the backward's, CUDA events,
#     median of $REPS runs each; FoX includes its gate prefix kernels)
#   SDPA flash and cuDNN, fla's FoX: bench/gpu_train_peers.py (fwd+bwd and
#     bwd alone through torch.autograd.grad)
# Usage (on the GPU machine, from the repository root):
#   bench/gpu_train_bench.sh [BIN_DIR]     (default .device)
# Env: TS, DS, REPS; VARIANTS (default "plain fox"); PEERS=0 skips the peers.
# Prints one line per measurement:
#   ATTN name= B= H= T= D= fwd_ms= bwd_ms= fwdbwd_ms=
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.device}
TS=${TS:-"2048 4096 8192 16384"}
DS=${DS:-"64 128"}
REPS=${REPS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ATTN_CACHE_DIR=${ATTN_CACHE_DIR:-$tmp/cache}

program() { # program VARIANT D -> a bf16 causal program with head dim D
  local variant=$1 d=$2 f="$tmp/$1_$2.mlir"
  local t="tensor<?x?x?x${d}xbf16>" g="tensor<?x?x?xf32>"
  case $variant in
  plain) echo "func.func @main(%q: $t, %k: $t, %v: $t) -> $t {
  %o = attn.attention %q, %k, %v : ($t, $t, $t) -> $t
  return %o : $t
}" >"$f" ;;
  fox) echo "func.func @main(%q: $t, %k: $t, %v: $t, %g: $g) -> $t {
  %o = attn.attention %q, %k, %v gate(%g) : ($t, $t, $t, $g) -> $t
  return %o : $t
}" >"$f" ;;
  esac
  echo "$f"
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
echo "DATE $(date -u +%Y-%m-%dT%H:%M:%SZ) COMMIT $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
for d in $DS; do
  h=$((2048 / d))
  for t in $TS; do
    b=$((16384 / t))
    for v in ${VARIANTS:-plain fox}; do
      line=$("$bin/attn-run" "$(program $v "$d")" --device=cuda --grad \
        --random="${b}x${h}x${t}" --seed=1 --time --repeat="$REPS" 2>&1 |
        grep "forward .* ms, backward" || true)
      f=$(sed -n 's/.*forward \([0-9.]*\) ms.*/\1/p' <<<"$line")
      bw=$(sed -n 's/.*backward \([0-9.]*\) ms.*/\1/p' <<<"$line")
      if [ -z "$f" ] || [ -z "$bw" ]; then
        echo "ATTN name=attn_$v B=$b H=$h T=$t D=$d status=failed"
        continue
      fi
      echo "ATTN name=attn_$v B=$b H=$h T=$t D=$d fwd_ms=$f bwd_ms=$bw" \
        "fwdbwd_ms=$(awk "BEGIN{printf \"%.4f\", $f + $bw}")"
    done
  done
done
if [ "${PEERS:-1}" != 0 ]; then
  python3 "$root/bench/gpu_train_peers.py" --T $TS --D $DS --reps "$REPS"
fi
