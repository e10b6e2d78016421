#!/usr/bin/env bash
# Spill bytes of the flash backward's dK/dV kernel as ptxas assembles it, for
# plain and FoX attention (bf16, causal, GQA 4:2), D = 64 and 128, each chip
# and each grad-dq form: what the register budget of one walk costs, without
# a GPU. Usage: bench/ptxas_grad_kernels.sh [build/bin/attn-opt] [ptxas]
set -euo pipefail
opt=${1:-build/bin/attn-opt}
ptxas=${2:-/usr/local/cuda/bin/ptxas}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ptxas" --version | tail -1
program() { # D, with FoX's gate
  local t="tensor<?x4x?x$1xbf16>" kv="tensor<?x2x?x$1xbf16>" g="" gt="" ga=""
  if [ "$2" = fox ]; then g=", %g: tensor<?x4x?xf32>"; gt=", tensor<?x4x?xf32>"; ga=" gate(%g)"; fi
  printf 'func.func @f(%%q: %s, %%k: %s, %%v: %s%s) -> %s {\n  %%o = attn.attention %%q, %%k, %%v%s mask causal : (%s, %s, %s%s) -> %s\n  return %%o : %s\n}\n' \
    "$t" "$kv" "$kv" "$g" "$t" "$ga" "$t" "$kv" "$kv" "$gt" "$t" "$t"
}
printf 'variant\tD\tchip\tgrad-dq\tdkdv spill stores (bytes)\n'
for variant in plain fox; do for d in 64 128; do
  program "$d" "$variant" > "$work/p.mlir"
  for chip in sm_90a sm_90 sm_80; do for form in walk reduce; do
    "$opt" "$work/p.mlir" --attn-grad \
      --attn-to-gpu="chip=$chip format=isa grad-dq=$form" \
      --attn-dump-ptx="$work/all.ptx" -o /dev/null
    # One PTX module per gpu.module; the dK/dV kernel's is assembled alone.
    awk -v dir="$work" '/^\/\/ gpu.module/{n++} {print > (dir "/mod_" n ".ptx")}' "$work/all.ptx"
    for m in "$work"/mod_*.ptx; do
      grep -q "grad_dkdv" "$m" || continue
      spill=$("$ptxas" -arch=$chip -v "$m" -o /dev/null 2>&1 |
        grep -A2 "entry function 'f_grad_grad_dkdv'" | grep -oE "[0-9]+ bytes spill stores" | grep -oE "^[0-9]+" || true)
      printf '%s\t%s\t%s\t%s\t%s\n' "$variant" "$d" "$chip" "$form" "$spill"
    done
    rm -f "$work"/mod_*.ptx
  done; done
done; done
