#!/usr/bin/env python3
"""Time MTA's peers on the GPU machine (bf16, causal, forward, B = 1).

Peers (issue 17, spec/mta.md section 5.1):
  official_full  an official-style PyTorch MTA of the released configuration:
                 RoPE on q and k, S = q k^T / sqrt(d) materialised [B, H, T, T]
                 in bf16, Mask_0 (masked_fill), F.pad + F.conv2d(groups=H)
                 with the 6x11 pre kernel, the pre head mix (Linear over
                 heads), Mask_-inf, softmax in f32 cast back to bf16, the post
                 conv (pad + conv2d) and its Mask_0, the post head mix over
                 all heads (a Python loop over head groups, as the official
                 code), P V, then the per-head RMS norm (f32, gamma shared by
                 heads) and the scalar gate sigmoid(w . o + b)
  official_pre   the same with only the pre conv (no RoPE, mix, post, norm)
  sdpa_flash     torch SDPA (flash backend) on plain causal attention of the
                 same shape
Each is timed with CUDA events around each call (median of --reps after
--warmup calls) and its peak memory is torch.cuda.max_memory_allocated()
over one call (inputs included), reset before it.

Output, one line each:
  HEADER gpu=<name> torch=<v> cuda=<v> date=<iso>
  PEER name=<..> B=1 H= T= D= ms=<median> peak_mb=<..> status=ok
  PEER name=<..> ... status=unavailable reason="..."

Usage: python3 bench/mta_peers.py [--T 2048 4096 8192] [--H 16] [--D 128]
           [--reps 20] [--warmup 3] [--only NAME ...]
"""

import argparse
import datetime
import math
import statistics
import sys


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--T", type=int, nargs="+", default=[2048, 4096, 8192])
    p.add_argument("--H", type=int, default=16)
    p.add_argument("--D", type=int, default=128)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--only", nargs="+", default=None)
    return p.parse_args()


def main():
    args = parse_args()
    import torch
    import torch.nn.functional as F

    dev = torch.device("cuda")
    bf = torch.bfloat16
    print("HEADER gpu=%s torch=%s cuda=%s date=%s" % (
        torch.cuda.get_device_name(0).replace(" ", "_"), torch.__version__,
        torch.version.cuda,
        datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")))
    cq, ck = 6, 11
    p_, c_ = cq - 1, (ck - 1) // 2

    def rope(x, theta=10000.0):
        t, d = x.shape[-2], x.shape[-1]
        inv = theta ** (-torch.arange(0, d, 2, device=dev, dtype=torch.float64) / d)
        ang = torch.arange(t, device=dev, dtype=torch.float64)[:, None] * inv[None]
        cos, sin = ang.cos().float(), ang.sin().float()
        x1, x2 = x[..., : d // 2].float(), x[..., d // 2:].float()
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).to(x.dtype)

    def conv(s, theta, h):
        s = F.pad(s, (c_, c_, p_, 0))
        return F.conv2d(s, theta[:, None], groups=h)

    def official(q, k, v, w, full):
        b, h, t, d = q.shape
        mask = torch.ones(t, t, device=dev, dtype=torch.bool).tril()
        if full:
            q, k = rope(q), rope(k)
        s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
        s = s.masked_fill(~mask, 0.0)
        s = conv(s, w["theta_pre"], h)
        if full:
            s = torch.einsum("bgij,hg->bhij", s, w["w_pre"])
        s = s.masked_fill(~mask, float("-inf"))
        pr = torch.softmax(s.float(), dim=-1).to(bf)
        if full:
            pr = conv(pr, w["theta_post"], h).masked_fill(~mask, 0.0)
            ch = h  # head_kernel_size = 16 = H: one group
            groups = []
            for g in range(h // ch):
                blk = pr[:, g * ch:(g + 1) * ch]
                groups.append(torch.einsum("bgij,gh->bhij", blk, w["w_post"][g]))
            pr = torch.cat(groups, 1)
        o = pr @ v
        if full:
            of = o.float()
            of = of * torch.rsqrt(of.pow(2).mean(-1, keepdim=True) + 1e-5) * w["gamma"]
            gate = torch.sigmoid(of @ w["gate_w"] + w["gate_b"])
            o = (of * gate[..., None]).to(bf)
        return o

    def sdpa(q, k, v, w, full):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    peers = [("official_full", official, True), ("official_pre", official, False),
             ("sdpa_flash", sdpa, False)]
    h, d = args.H, args.D
    torch.manual_seed(0)
    for t in args.T:
        q = torch.randn(1, h, t, d, device=dev, dtype=bf)
        k = torch.randn(1, h, t, d, device=dev, dtype=bf)
        v = torch.randn(1, h, t, d, device=dev, dtype=bf)
        eye = torch.zeros(h, cq, ck, device=dev, dtype=bf)
        eye[:, cq - 1, c_] = 1.0
        w = {"theta_pre": eye + 0.01 * torch.randn_like(eye),
             "theta_post": eye + 0.01 * torch.randn_like(eye),
             "w_pre": (torch.eye(h, device=dev) + 0.01 * torch.randn(h, h, device=dev)).to(bf),
             "w_post": (torch.eye(h, device=dev) + 0.01 * torch.randn(h, h, device=dev)).to(bf)[None],
             "gamma": torch.ones(d, device=dev), "gate_w": 0.01 * torch.randn(d, device=dev),
             "gate_b": torch.zeros((), device=dev)}
        for name, fn, full in peers:
            if args.only and name not in args.only:
                continue
            tag = "name=%s B=1 H=%d T=%d D=%d" % (name, h, t, d)
            try:
                with torch.no_grad():
                    for _ in range(args.warmup):
                        fn(q, k, v, w, full)
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    fn(q, k, v, w, full)
                    torch.cuda.synchronize()
                    peak = torch.cuda.max_memory_allocated() / 2**20
                    times = []
                    for _ in range(args.reps):
                        a = torch.cuda.Event(enable_timing=True)
                        b = torch.cuda.Event(enable_timing=True)
                        a.record()
                        fn(q, k, v, w, full)
                        b.record()
                        times.append((a, b))
                    torch.cuda.synchronize()
                ms = statistics.median(a.elapsed_time(b) for a, b in times)
                print("PEER %s ms=%.4f peak_mb=%.0f status=ok" % (tag, ms, peak), flush=True)
            except Exception as e:  # noqa: BLE001 - report and go on
                msg = str(e).splitlines()[0][:200].replace('"', "'") if str(e) else type(e).__name__
                print('PEER %s ms=nan peak_mb=nan status=unavailable reason="%s"' % (tag, msg), flush=True)
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
