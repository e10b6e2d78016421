"""The Python module (python/attn over libattn.so) on PyTorch CUDA tensors.

Run on a GPU machine (scripts/gpu-run.sh does, when libattn.so was packaged):
    ATTN_LIBRARY=.device/libattn.so PYTHONPATH=python python3 bench/python_gpu_check.py

1. Correctness, tensors staying on the device: plain causal attention vs
   torch.nn.functional.scaled_dot_product_attention and a FoX program vs a
   torch fp64 reference, bf16, BHSD and BSHD (transposed views) inputs and
   outputs, launched on torch's current stream; relative RMS error vs fp64
   <= 5e-3 (SDPA's own error printed beside). The output is NaN-poisoned.
2. Timing: the Python call (DLPack export + attn_launch) vs SDPA, per call
   (CUDA events around N back-to-back calls) and the host time per call,
   at small and large T.
Env: ATTN_SEED, TS (default "16,1024,4096,16384"), REPS (default 50).
Exit status 1 when a check fails.
"""

import os
import sys
import time

import torch
import torch.nn.functional as F

import attn

failures = []


def program(variant, D):
    t = f"tensor<?x?x?x{D}xbf16>"
    gate = variant == "fox"
    g = "tensor<?x?x?xf32>"
    args = f"%q: {t}, %k: {t}, %v: {t}" + (f", %g: {g}" if gate else "")
    types = f"{t}, {t}, {t}" + (f", {g}" if gate else "")
    return (f"func.func @main({args}) -> {t} {{\n"
            f"  %o = attn.attention %q, %k, %v{' gate(%g)' if gate else ''}"
            f" : ({types}) -> {t}\n  return %o : {t}\n}}\n")


def reference(q, k, v, g=None):
    """fp64 causal attention; FoX adds G_i - G_j (G: cumsum of log f)."""
    q, k, v = q.double(), k.double(), v.double()
    T, D = q.shape[2], q.shape[3]
    s = q @ k.transpose(-1, -2) / D ** 0.5
    if g is not None:
        G = torch.cumsum(g.double(), dim=2)
        s = s + G[..., :, None] - G[..., None, :]
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def rel_rms(got, want):
    got = got.double()
    if not torch.isfinite(got).all():
        return float("inf")
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def tensors(gen, B, H, T, D, layout, fox):
    def act():
        if layout == "bshd":
            return torch.randn(B, T, H, D, generator=gen, device="cuda",
                               dtype=torch.bfloat16).transpose(1, 2)
        return torch.randn(B, H, T, D, generator=gen, device="cuda",
                           dtype=torch.bfloat16)
    xs = [act(), act(), act()]
    if fox:
        f = torch.rand(B, H, T, generator=gen, device="cuda") * 0.1 + 0.9
        xs.append(torch.log(f))
    return xs


def poisoned_out(B, H, T, D, layout):
    if layout == "bshd":
        return torch.full((B, T, H, D), float("nan"), device="cuda",
                          dtype=torch.bfloat16).transpose(1, 2)
    return torch.full((B, H, T, D), float("nan"), device="cuda",
                      dtype=torch.bfloat16)


def correctness(engine, gen, seed):
    stream = torch.cuda.current_stream().cuda_stream
    for variant in ("plain", "fox"):
        for D in (64, 128):
            kernel = engine.compile(program(variant, D))
            if kernel.device != "cuda":
                failures.append(f"{variant} D={D} runs on {kernel.device}")
                continue
            for (B, H, T) in ((1, 4, 1), (2, 8, 1000), (1, 16, 4096)):
                for layout in ("bhsd", "bshd"):
                    xs = tensors(gen, B, H, T, D, layout, variant == "fox")
                    out = poisoned_out(B, H, T, D, layout)
                    kernel(*xs, out=out, stream=stream)
                    want = reference(*xs)
                    err = rel_rms(out, want)
                    line = (f"{variant} D={D} B={B} H={H} T={T} {layout}: "
                            f"attn rel RMS {err:.2e}")
                    if variant == "plain":
                        sdpa = F.scaled_dot_product_attention(*xs[:3],
                                                              is_causal=True)
                        line += f", SDPA {rel_rms(sdpa, want):.2e}"
                        line += (", attn vs SDPA "
                                 f"{rel_rms(out, sdpa.double()):.2e}")
                    print(line)
                    if not err <= 5e-3:
                        failures.append(f"{line} (seed {seed})")


def timing(engine, gen, Ts, reps):
    stream = torch.cuda.current_stream().cuda_stream
    B, H, D = 1, 16, 128
    for variant in ("plain", "fox"):
        kernel = engine.compile(program(variant, D))
        for T in Ts:
            xs = tensors(gen, B, H, T, D, "bhsd", variant == "fox")
            out = torch.empty_like(xs[0])

            def ours():
                kernel(*xs, out=out, stream=stream)

            def sdpa():
                F.scaled_dot_product_attention(*xs[:3], is_causal=True)

            row = []
            for name, fn in (("attn (Python)", ours), ("SDPA", sdpa)):
                for _ in range(5):
                    fn()
                torch.cuda.synchronize()
                start = torch.cuda.Event(enable_timing=True)
                stop = torch.cuda.Event(enable_timing=True)
                h0 = time.perf_counter()
                start.record()
                for _ in range(reps):
                    fn()
                stop.record()
                host_us = (time.perf_counter() - h0) / reps * 1e6
                torch.cuda.synchronize()
                ms = start.elapsed_time(stop) / reps
                row.append(f"{name} {ms:.4f} ms/call (host {host_us:.1f} us)")
            print(f"timing {variant} B={B} H={H} T={T} D={D} bf16: "
                  + "; ".join(row))


def main():
    seed = int(os.environ.get("ATTN_SEED", time.time_ns() % 2**31))
    print("seed", seed, "GPU", torch.cuda.get_device_name())
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    engine = attn.Engine("cuda")
    correctness(engine, gen, seed)
    Ts = [int(t) for t in os.environ.get("TS", "16,1024,4096,16384").split(",")]
    timing(engine, gen, Ts, int(os.environ.get("REPS", "50")))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("python GPU check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
