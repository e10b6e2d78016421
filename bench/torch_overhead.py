"""Per-call host time of attn.torch's ops on CUDA (issue 47 item 7).

For plain causal attention and FoX, bf16, [B, T, H, D] = [1, T, 16, 64],
T in --T (1 is a decode-sized call), on the current CUDA stream:
  torch_op  attn.torch.attention / forgetting_attention (the custom op,
            its checks, layout views and output allocation)
  capi      the compiled kernel called directly through the C API
            (attn.Kernel.__call__ on pre-made views and a pre-made output)
  capi_dense  the same on contiguous [B, H, T, D] tensors (no packing of
            strided views in the runtime)
  fla       fla's parallel_forgetting_attn (FoX only; --peers DIR)
  sdpa      torch's scaled_dot_product_attention (plain only)
Each figure is the median over --rounds rounds of the host time of --calls
back-to-back calls divided by the count (no synchronisation inside a round;
the GPU is idle at each round's start). Device time per call is printed
beside it: where it exceeds the host time, the launch queue, not the host,
bounds the loop.

Usage: ATTN_LIBRARY=.../libattn.so PYTHONPATH=python \
           python3 bench/torch_overhead.py [--T 1 16 128] [--peers .peers]
Prints one line per measurement:
  OVERHEAD op= variant= T= host_us= device_us=
"""

import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_peers  # noqa: E402  (header, import_fla)

import attn.torch as at  # noqa: E402


def per_call(fn, calls, rounds):
    """(median host µs per call, median device µs per call)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    host, device = [], []
    for _ in range(rounds):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        host.append((t1 - t0) / calls * 1e6)
        device.append(start.elapsed_time(end) / calls * 1e3)
    return statistics.median(host), statistics.median(device)


def direct(q, k, v, g, dense=False):
    """The kernel attn.torch compiled for these inputs, called through the
    C API on pre-made [B, H, T, D] views and output (what the op adds on
    top of this is its own overhead); `dense`: on contiguous copies."""
    B, T, H, _, D, Dv, dt = at._check_qkv(q, k, v)
    program = at._attention_program(dt, D, Dv, gate=g is not None)
    device = q.device.type
    kernel = at._kernel(device, program, "main", False)
    args = [at._view(at._bhtd(x))
            for x in ((q, k, v) if g is None else (q, k, v, g))]
    out = torch.empty((B, T, H, Dv), dtype=q.dtype,
                      device=q.device).transpose(1, 2)
    if dense:
        args = [x.contiguous() for x in args]
        out = out.contiguous()
    stream = at._stream(device)
    return lambda: kernel(*args, out=out, stream=stream)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--T", type=int, nargs="+", default=[1, 16, 128])
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--peers", default=".peers")
    a = p.parse_args()
    gpu_peers.header(torch, a.peers)
    fla_fox, why = gpu_peers.import_fla(a.peers)
    if fla_fox is None:
        print("# fla: " + why)
    H, D = 16, 64
    for T in a.T:
        q, k, v = (torch.randn(1, T, H, D, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        g = F.logsigmoid(torch.randn(1, T, H, device="cuda") + 3)
        cases = [
            ("torch_op", "plain", lambda: at.attention(q, k, v)),
            ("capi", "plain", direct(q, k, v, None)),
            ("capi_dense", "plain", direct(q, k, v, None, dense=True)),
            ("sdpa", "plain", lambda: F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                is_causal=True)),
            ("torch_op", "fox", lambda: at.forgetting_attention(q, k, v, g)),
            ("capi", "fox", direct(q, k, v, g)),
            ("capi_dense", "fox", direct(q, k, v, g, dense=True)),
        ]
        if fla_fox is not None:
            cases.append(("fla", "fox", lambda: fla_fox(q, k, v, g)))
        with torch.no_grad():
            for op, variant, fn in cases:
                host, device = per_call(fn, a.calls, a.rounds)
                print(f"OVERHEAD op={op} variant={variant} T={T} "
                      f"host_us={host:.2f} device_us={device:.2f}", flush=True)


if __name__ == "__main__":
    main()
