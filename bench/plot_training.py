#!/usr/bin/env python3
"""Plot a training benchmark log (bench/gpu_train_bench.sh's output).

Per head dim, fwd+bwd time against T for attn's plain and FoX and the
peers (SDPA cuDNN and flash, fla's FoX), log-log.

Usage: python3 bench/plot_training.py LOG OUT.png
"""

import collections
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    """{(name, D): {T: fwd+bwd ms}} from the ATTN and PEER lines."""
    series = collections.defaultdict(dict)
    for line in open(path):
        words = line.split()
        if not words or words[0] not in ("ATTN", "PEER"):
            continue
        f = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if f.get("status", "ok") != "ok" or "fwdbwd_ms" not in f:
            continue
        series[(f["name"], int(f["D"]))][int(f["T"])] = float(f["fwdbwd_ms"])
    return series


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    series = read(sys.argv[1])
    dims = sorted({d for _, d in series})
    fig, axes = plt.subplots(1, len(dims), figsize=(5 * len(dims), 3.8))
    for ax, d in zip(axes if len(dims) > 1 else [axes], dims):
        for (name, dd), pts in sorted(series.items()):
            if dd != d:
                continue
            ts = sorted(pts)
            style = "-o" if name.startswith("attn") else "--s"
            ax.plot(ts, [pts[t] for t in ts], style, label=name, markersize=4)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (B·T = 16384, H·D = 2048)")
        ax.set_ylabel("forward + backward, ms")
        ax.set_title(f"bf16, causal, D = {d}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print("wrote " + sys.argv[2])


if __name__ == "__main__":
    main()
