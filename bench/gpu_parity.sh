#!/usr/bin/env bash
# Parity of two builds of the GPU backend on the GPU machine (issue 15,
# item 6): BIN_DIR/attn-run against OLD_BIN/attn-run (another commit's
# build, e.g. the commit before a change), on each chip of CHIPS (default:
# ATTN_GPU_CHIP, else sm_90: mma.sync; sm_90a: wgmma), in one run,
# interleaved pass by pass (every chip and build in each pass) so drift of
# the GPU's clock cancels out of the ratios. bf16, causal, B*T = 16384,
# H*D = 2048 (bench/gpu_bench.sh's shapes), VARIANTS (default plain; any of
# plain rope fox). OLD_LOWERING=L runs the old build with
# ATTN_GPU_LOWERING=L: builds up to 07981fc, the last with the direct
# kernel builder, time its kernels with OLD_LOWERING=direct (later builds
# refuse the variable).
# Usage: OLD_BIN=DIR bench/gpu_parity.sh [BIN_DIR]   (default .device)
# Env: TS, DS, REPS (default 30), PASSES (default 3), CHIPS, VARIANTS,
# OLD_BIN (required), OLD_LOWERING (default unset).
# Prints gpu_bench.sh's lines tagged _<chip>_old / _<chip>_new and pass=k,
# then per variant, chip and shape the median over passes of new / old.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.device}
old=${OLD_BIN:?OLD_BIN=DIR names the build to compare against}
chips=${CHIPS:-${ATTN_GPU_CHIP:-sm_90}}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for pass in $(seq "${PASSES:-3}"); do
  for chip in $chips; do
    for side in old new; do
      dir=$bin lowering=
      [ "$side" = new ] || dir=$old lowering=${OLD_LOWERING:-}
      env ${lowering:+ATTN_GPU_LOWERING=$lowering} ATTN_GPU_CHIP=$chip \
        TAG=_${chip}_$side PEERS=0 PASSES=1 VARIANTS=${VARIANTS:-plain} \
        "$root/bench/gpu_bench.sh" "$dir" |
        grep '^ATTN' | sed "s/\$/ pass=$pass/" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import re, sys, statistics, collections
t = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    m = dict(re.findall(r'(\w+)=(\S+)', line))
    if 'ms' not in m:
        continue
    v, side = m['name'].rsplit('_', 1)
    t[(v, m['D'], m['T'])].setdefault(m['pass'], {})[side] = float(m['ms'])
print('| variant_chip | D | T | old ms (median) | new ms (median) | new / old (median of passes) |')
print('| --- | --- | --- | --- | --- | --- |')
for (v, d, T), passes in sorted(t.items(), key=lambda k: (k[0][0], int(k[0][1]), int(k[0][2]))):
    both = [p for p in passes.values() if 'old' in p and 'new' in p]
    if not both:
        continue
    om = statistics.median(p['old'] for p in both)
    nm = statistics.median(p['new'] for p in both)
    r = statistics.median(p['new'] / p['old'] for p in both)
    print(f'| {v} | {d} | {T} | {om:.3f} | {nm:.3f} | {r:.3f} |')
PY
