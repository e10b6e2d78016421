#!/usr/bin/env bash
# PaTH and PaTH-FoX on the GPU against fla's parallel_path_attn in one run
# (issue 16 item 5): bf16, causal, B*T = 16384 tokens, T in $TS, D in $DS,
# H = 2048 / D (examples/path_bf16.mlir and path_fox_bf16.mlir with the head
# dim substituted).
#   attn: bin/attn-run --time (device time of all of a run's kernels: the
#     chunk kernel, the attention kernel and, for PaTH-FoX, the gate prefix;
#     CUDA events, median of $REPS runs), once per transport in $TRANSPORTS
#     (ATTN_GPU_PATH_TRANSPORT: f16, split) and chip in $CHIPS
#     (ATTN_GPU_CHIP: sm_90a's kernels in wgmma form, sm_90's in mma.sync;
#     `default` is attn-run's own choice for the GPU), and chunk-kernel form
#     in $CHUNK_WGMMA (ATTN_GPU_PATH_CHUNK_WGMMA: 1 the wgmma form, 0
#     mma.sync, `default` attn-run's choice; 1 needs an sm_90a chip), and
#     attention-kernel form in $ATTENTION_WGMMA (ATTN_GPU_PATH_ATTENTION_WGMMA,
#     the same values; 1 also needs ptxas 13.3 or newer under CUDA_HOME)
#   fla: bench/gpu_peers.py --only fla_path fla_path_fox (fla exported into
#     .peers, never committed)
#   the chunk (preparation) kernel alone: with NCU=1, `ncu` on one run per
#     shape (gpu__time_duration of path_chunk_kernel)
# Each pass times every attn shape, then every peer shape; PASSES=N repeats
# that, and the summary takes per shape the median over passes of each
# time and of each ratio fla / attn within a pass, so that drift of the
# GPU's speed cancels out of the ratios.
# Usage (on the GPU machine, from the repository root):
#   bench/path_gpu_bench.sh [BIN_DIR]     (default .device)
# Env: TS, DS, REPS (10), PASSES (2), TRANSPORTS ("f16 split"), CHIPS
# ("default"), CHUNK_WGMMA ("default"), ATTENTION_WGMMA ("default"), PEERS=0
# skips fla, NCU=1 times the chunk kernel (per chip and chunk-kernel form).
# Prints one line per measurement (ATTN / PEER / PREP), then (also when a
# `timeout` stops it: TERM) a summary table of what was measured and,
# when ATTENTION_WGMMA (CHUNK_WGMMA) has both 0 and 1, the attention (chunk)
# kernel's wgmma form against its mma.sync form, the other kernel's form
# fixed (median over passes of the per-pass ratio).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.device}
TS=${TS:-"2048 4096 8192 16384"}
DS=${DS:-"64 128"}
REPS=${REPS:-10}
PASSES=${PASSES:-2}
TRANSPORTS=${TRANSPORTS:-"f16 split"}
CHIPS=${CHIPS:-default}
CHUNK_WGMMA=${CHUNK_WGMMA:-default}
ATTENTION_WGMMA=${ATTENTION_WGMMA:-default}
tmp=$(mktemp -d)
export ATTN_CACHE_DIR=${ATTN_CACHE_DIR:-$tmp/cache}
log=$tmp/lines
: >"$log"
# The summary tables of what was measured, also when the run is cut short
# (a `timeout` on the GPU machine's call sends TERM): the lines so far.
summarize() {
  python3 - "$log" <<'EOF'
import re, statistics as st, sys
rows = [dict(re.findall(r"(\w+)=(\S+)", l)) | {"kind": l.split()[0]}
        for l in open(sys.argv[1]) if l.split() and l.split()[0] in ("ATTN", "PEER")]
def ms(r):
    try: return float(r["ms"])
    except (KeyError, ValueError): return float("nan")
attn = {}; fla = {}
for r in rows:
    p = r.get("pass")
    if r["kind"] == "ATTN":
        form = r["transport"] + " " + r.get("chip", "default")
        for k in ("chunk_wgmma", "attention_wgmma"):
            if r.get(k, "default") != "default":
                form += " " + k.replace("_", "-") + "=" + r[k]
        attn.setdefault((r["variant"], form, r["D"], r["T"]), {})[p] = ms(r)
    elif r.get("name") in ("fla_path", "fla_path_fox") and r.get("status") == "ok":
        v = "path" if r["name"] == "fla_path" else "path_fox"
        fla.setdefault((v, r["D"], r["T"]), {})[p] = ms(r)
med = lambda xs: st.median(xs) if xs else float("nan")
print("| variant | transport, chip, chunk form | D | T | attn ms | fla ms | fla / attn (median of passes) |")
print("|---|---|---|---|---|---|---|")
for (v, tr, d, t), byp in sorted(attn.items(), key=lambda k: (k[0][0], k[0][1], int(k[0][2]), int(k[0][3]))):
    f = fla.get((v, d, t), {})
    ratios = [f[p] / a for p, a in byp.items() if p in f and a == a and a > 0]
    print("| %s | %s | %s | %s | %.3f | %.3f | %.2f |" % (
        v, tr, d, t, med(list(byp.values())), med(list(f.values())), med(ratios)))
for kind in ("attention", "chunk"):
    on, off = kind + "-wgmma=1", kind + "-wgmma=0"
    pairs = [(k, k[1].replace(on, off)) for k in attn if on in k[1]
             and (k[0], k[1].replace(on, off), k[2], k[3]) in attn]
    if not pairs:
        continue
    print()
    print("| variant | transport, chip, other form | D | T | mma.sync %s ms | wgmma %s ms | mma.sync / wgmma (median of passes) |" % (kind, kind))
    print("|---|---|---|---|---|---|---|")
    for k, base in sorted(pairs, key=lambda kb: (kb[0][0], kb[0][1], int(kb[0][2]), int(kb[0][3]))):
        w = attn[k]; m = attn.get((k[0], base, k[2], k[3]), {})
        ratios = [m[p] / a for p, a in w.items() if p in m and a == a and a > 0]
        print("| %s | %s | %s | %s | %.3f | %.3f | %.2f |" % (
            k[0], base.replace(" " + off, ""), k[2], k[3],
            med(list(m.values())), med(list(w.values())), med(ratios)))
EOF
}
trap 'summarize; rm -rf "$tmp"' EXIT
trap 'echo "path_gpu_bench.sh: stopped; the tables cover what was measured"; exit 143' TERM INT

program() { # program VARIANT D -> a bf16 PaTH program with head dim D
  local f="$tmp/$1_$2.mlir"
  sed "s/x64x/x${2}x/g" "$root/examples/$1_bf16.mlir" >"$f"
  echo "$f"
}
on_chip() { # on_chip CHIP CW AW CMD... -> CMD with ATTN_GPU_CHIP=CHIP,
  # ATTN_GPU_PATH_CHUNK_WGMMA=CW, ATTN_GPU_PATH_ATTENTION_WGMMA=AW (each
  # unless `default`)
  local chip=$1 cw=$2 aw=$3
  shift 3
  local env=()
  [ "$chip" = default ] || env+=("ATTN_GPU_CHIP=$chip")
  [ "$cw" = default ] || env+=("ATTN_GPU_PATH_CHUNK_WGMMA=$cw")
  [ "$aw" = default ] || env+=("ATTN_GPU_PATH_ATTENTION_WGMMA=$aw")
  env "${env[@]}" "$@"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
echo "DATE $(date -u +%Y-%m-%dT%H:%M:%SZ)"
for pass in $(seq "$PASSES"); do
  for d in $DS; do
    h=$((2048 / d))
    for t in $TS; do
      b=$((16384 / t))
      for v in path path_fox; do
        for tr in $TRANSPORTS; do
          for chip in $CHIPS; do
            for cw in $CHUNK_WGMMA; do
              for aw in $ATTENTION_WGMMA; do
                out=$(ATTN_GPU_PATH_TRANSPORT=$tr on_chip "$chip" "$cw" "$aw" \
                  "$bin/attn-run" "$(program $v "$d")" --device=cuda \
                  --random="${b}x${h}x${t}" --seed=1 --time --repeat="$REPS" \
                  2>&1 || true)
                ms=$(sed -n 's/.*run \([0-9.]*\) ms.*/\1/p' <<<"$out" | head -1)
                echo "ATTN variant=$v transport=$tr chip=$chip chunk_wgmma=$cw" \
                  "attention_wgmma=$aw B=$b H=$h T=$t D=$d ms=${ms:-nan}" \
                  "pass=$pass" | tee -a "$log"
                [ -n "$ms" ] || echo "  attn-run: $(tail -3 <<<"$out")"
              done
            done
          done
        done
      done
    done
  done
  if [ "${PEERS:-1}" = 1 ]; then
    python3 "$root/bench/gpu_peers.py" --T $TS --D $DS --reps "$REPS" \
      --only fla_path fla_path_fox 2>&1 | sed "s/\$/ pass=$pass/" |
      tee -a "$log"
  fi
done
if [ "${NCU:-0}" = 1 ]; then
  for chip in $CHIPS; do
    for cw in $CHUNK_WGMMA; do
      for d in $DS; do
        h=$((2048 / d))
        for t in $TS; do
          b=$((16384 / t))
          us=$(on_chip "$chip" "$cw" default ncu --metrics gpu__time_duration.sum \
            -k regex:path_chunk_kernel "$bin/attn-run" "$(program path "$d")" \
            --device=cuda --random="${b}x${h}x${t}" --seed=1 2>/dev/null |
            awk '/gpu__time_duration.sum/ {
              u = $(NF-1); f = u ~ /^m/ ? 1000 : u ~ /^n/ ? 0.001 : 1
              print $(NF) * f, "(" u ")" }' | tail -1)
          echo "PREP chip=$chip chunk_wgmma=$cw B=$b H=$h T=$t D=$d" \
            "us=${us:-nan}" | tee -a "$log"
        done
      done
    done
  done
fi
