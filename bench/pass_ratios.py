#!/usr/bin/env python3
"""Summary of a `PASSES=N bench/gpu_bench.sh` run (its ATTN lines on stdin).

Per shape (D, T): the median time of each variant over the passes, and for
each variant other than plain the median over passes of its time divided by
plain's time in the same pass. Variants of one pass run back to back, so a
drift of the GPU's speed between passes (clocks, temperature) cancels out of
the per-pass ratios, not out of the medians of the times.
"""
import re
import statistics
import sys
from collections import defaultdict

times = defaultdict(dict)  # (D, T) -> {(variant, pass): ms}
for line in sys.stdin:
    if not line.startswith("ATTN ") or " ms=" not in line:
        continue
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    variant = f["name"].removeprefix("attn_")
    times[(int(f["D"]), int(f["T"]))][(variant, int(f.get("pass", 1)))] = float(
        f["ms"]
    )

for (d, t), runs in sorted(times.items()):
    variants = sorted({v for v, _ in runs})
    passes = sorted({p for _, p in runs})
    parts = []
    for v in variants:
        ms = [runs[(v, p)] for p in passes if (v, p) in runs]
        parts.append(f"{v} {statistics.median(ms):.3f} ms")
    base = next((v for v in variants if v.startswith("plain")), None)
    for v in variants:
        if base is None or v == base:
            continue
        r = [runs[(v, p)] / runs[(base, p)] for p in passes
             if (v, p) in runs and (base, p) in runs]
        if r:
            parts.append(
                f"{v}/{base} median {statistics.median(r):.4f} "
                f"(min {min(r):.4f}, max {max(r):.4f}, {len(r)} passes)")
    print(f"PASSES D={d} T={t}: " + "; ".join(parts))
