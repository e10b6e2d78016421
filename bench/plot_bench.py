#!/usr/bin/env python3
"""Plot GPU benchmark logs: time (and memory) against T for attn and each peer.

  --kind mta   LOG from bench/mta_gpu_bench.sh: "TIME name=attn_<v> ... T= D=
               peak_mb= ... run <ms> ms (median of N)" and bench/mta_peers.py's
               "PEER name= ... T= D= ms= peak_mb=" lines; two panels: time
               and peak device memory, log scales.
  --kind path  LOG with "TIME path_bf16|path_fox_bf16 d= T= ...: ... run <ms>
               ms" lines (attn-run --time) or bench/path_gpu_bench.sh's "ATTN
               variant= transport= [chip=] T= D= ms=" lines, and bench/gpu_peers.py's "PEER
               name=fla_path|fla_path_fox ... T= D= ms=" lines; one panel per
               head dim.
Several passes of one shape give several lines: the median is plotted.
Usage: python3 bench/plot_bench.py --kind mta|path LOG OUT.png [--title T]
"""

import argparse
import collections
import re
import statistics
import sys


def fields(line):
    return dict(re.findall(r"(\w+)=([^\s]+)", line))


def run_ms(line):
    m = re.search(r"run ([0-9.]+) ms", line)
    return float(m.group(1)) if m else None


def parse(path, kind):
    times = collections.defaultdict(list)  # (panel, name, T) -> [ms]
    mem = collections.defaultdict(list)
    for line in open(path, errors="replace"):
        line = line.strip()
        if line.startswith("PEER") and "status=ok" in line:
            f = fields(line)
            panel = "D=%s" % f.get("D")
            times[(panel, f["name"], int(f["T"]))].append(float(f["ms"]))
            if "peak_mb" in f and f["peak_mb"] != "nan":
                mem[(panel, f["name"], int(f["T"]))].append(float(f["peak_mb"]))
        elif line.startswith("ATTN") and kind == "path":
            # bench/path_gpu_bench.sh: ATTN variant= transport= ... D= ms=
            f = fields(line)
            if f.get("ms", "nan") == "nan":
                continue
            name = "attn_%s_%s" % (f["variant"], f["transport"])
            if f.get("chip", "default") != "default":
                name += "_" + f["chip"]
            for k in ("chunk_wgmma", "attention_wgmma"):
                if f.get(k, "default") != "default":
                    name += " %s=%s" % (k.split("_")[0],
                                        "wgmma" if f[k] == "1" else "mma.sync")
            times[("D=%s" % f["D"], name, int(f["T"]))].append(float(f["ms"]))
        elif line.startswith("TIME"):
            ms = run_ms(line)
            if ms is None:
                continue
            f = fields(line)
            if kind == "mta":
                panel, name = "D=%s" % f.get("D"), f["name"]
                if "peak_mb" in f and float(f["peak_mb"]) > 0:
                    mem[(panel, name, int(f["T"]))].append(float(f["peak_mb"]))
            else:
                name = "attn_" + line.split()[1].replace("_bf16", "")
                panel = "D=%s" % f["d"]
            times[(panel, name, int(f["T"]))].append(ms)
    return times, mem


def series(table):
    out = collections.defaultdict(dict)
    for (panel, name, t), v in table.items():
        out[(panel, name)][t] = statistics.median(v)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", choices=["mta", "path"], required=True)
    p.add_argument("log")
    p.add_argument("out")
    p.add_argument("--title", default="")
    a = p.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    times, mem = parse(a.log, a.kind)
    ts, ms = series(times), series(mem)
    panels = sorted({k[0] for k in ts})
    if a.kind == "mta":
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for (panel, name), pts in sorted(ts.items()):
            xs = sorted(pts)
            axes[0].plot(xs, [pts[x] for x in xs], marker="o", label=name)
        for (panel, name), pts in sorted(ms.items()):
            xs = sorted(pts)
            axes[1].plot(xs, [pts[x] / 1024 for x in xs], marker="o", label=name)
        axes[0].set_ylabel("ms (median)")
        axes[1].set_ylabel("peak device memory, GiB")
        for ax in axes:
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("T")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    else:
        fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2))
        if len(panels) == 1:
            axes = [axes]
        for ax, panel in zip(axes, panels):
            for (pn, name), pts in sorted(ts.items()):
                if pn != panel:
                    continue
                xs = sorted(pts)
                ax.plot(xs, [pts[x] for x in xs], marker="o", label=name)
            ax.set_title(panel)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("T (B*T = 16384, H*D = 2048)")
            ax.set_ylabel("ms (median)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
