"""Moves the GPU-form kernels of a printed module into a gpu.module.

attn-to-block{target=sm_*} leaves its kernels (private func.func with
attn_block.kernel and attn_block.num_warps) beside the host function;
attn-block-to-gpu lowers the kernels of a gpu.module. This filter (stdin to
stdout) keeps the attribute aliases and wraps those kernels, and only them,
in `gpu.module @kernels`, so that a lit test can take attn-to-block's GPU
form through attn-block-to-gpu. It relies on attn-opt's printed layout: a
kernel starts with `  func.func private @` and ends at the next line `  }`.
"""
import re
import sys

lines = sys.stdin.read().split("\n")
aliases = [l for l in lines if l.startswith("#")]
kernels, current = [], None
for line in lines:
    if current is None:
        if re.match(r"  func\.func private @\w+\(.*attn_block\.num_warps", line):
            current = [line]
        continue
    current.append(line)
    if line == "  }":
        kernels.append("\n".join(current))
        current = None
if not kernels:
    sys.exit("gpu-module-of-kernels.py: no GPU-form kernel in the input")
print("\n".join(aliases))
print("module {\n  gpu.module @kernels {")
print("\n".join(kernels))
print("  }\n}")
