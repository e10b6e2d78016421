#!/usr/bin/env bash
# Parity of the GPU backend's lowerings on the GPU machine (issue 15, item
# 6): the block program's whole launch plan (`lowering=NEW`, default
# block-plan, the default lowering: every kernel from attn-block-to-gpu,
# its prologue kernels too; NEW=block: the direct plan with the block
# program's attention kernel) against the C++-built kernels
# (`lowering=direct`), on each chip of CHIPS (default: ATTN_GPU_CHIP, else
# sm_90: mma.sync; sm_90a: wgmma), in one run, interleaved pass by pass
# (every chip and lowering in each pass) so drift of the GPU's clock
# cancels out of the ratios. bf16, causal, B*T = 16384, H*D = 2048
# (bench/gpu_bench.sh's shapes), VARIANTS (default plain; any of plain
# rope fox). OLD_BIN=DIR takes the direct column from DIR/attn-run, another
# commit's build (the commit before a change), so that two builds are
# timed interleaved; OLD_LOWERING (default direct) is the lowering that
# column runs, e.g. block-plan to time one build's default against
# another's.
# Usage: bench/gpu_parity.sh [BIN_DIR]   (default .device)
# Env: TS, DS, REPS (default 30), PASSES (default 3), CHIPS, VARIANTS, NEW
# (default block-plan), OLD_BIN (default BIN_DIR), OLD_LOWERING (default
# direct).
# Prints gpu_bench.sh's lines tagged _<chip>_direct / _<chip>_block and
# pass=k, then per variant, chip and shape the median over passes of
# block / direct.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.device}
chips=${CHIPS:-${ATTN_GPU_CHIP:-sm_90}}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for pass in $(seq "${PASSES:-3}"); do
  for chip in $chips; do
    for side in old new; do
      tag=direct dir=${OLD_BIN:-$bin} lowering=${OLD_LOWERING:-direct}
      [ "$side" = old ] || tag=block dir=$bin lowering=${NEW:-block-plan}
      ATTN_GPU_CHIP=$chip ATTN_GPU_LOWERING=$lowering TAG=_${chip}_$tag \
        PEERS=0 PASSES=1 VARIANTS=${VARIANTS:-plain} \
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
    v, low = m['name'].rsplit('_', 1)
    t[(v, m['D'], m['T'])].setdefault(m['pass'], {})[low] = float(m['ms'])
print('| variant_chip | D | T | direct ms (median) | block ms (median) | block / direct (median of passes) |')
print('| --- | --- | --- | --- | --- | --- |')
for (v, d, T), passes in sorted(t.items(), key=lambda k: (k[0][0], int(k[0][1]), int(k[0][2]))):
    both = [p for p in passes.values() if 'direct' in p and 'block' in p]
    if not both:
        continue
    dm = statistics.median(p['direct'] for p in both)
    bm = statistics.median(p['block'] for p in both)
    r = statistics.median(p['block'] / p['direct'] for p in both)
    print(f'| {v} | {d} | {T} | {dm:.3f} | {bm:.3f} | {r:.3f} |')
PY
