#!/usr/bin/env python3
"""Time the peer attention kernels on the GPU machine (bf16, causal, forward).

Peers (DESIGN.md section 7, spec/path_fox.md section 4.2):
  sdpa_flash  torch SDPA, flash backend, [B, H, T, D], is_causal=True
  sdpa_cudnn  torch SDPA, cuDNN backend, same layout ("unavailable" if it errors)
  fla_fox     fla's parallel_forgetting_attn (Triton), [B, T, H, D] q/k/v bf16,
              g = logsigmoid(randn) fp32 [B, T, H] (per-step log forget gate,
              fla takes the inclusive cumsum itself, inside the timed call)
  fla_path    fla's parallel_path_attn (PaTH), q/k/v bf16 [B, T, H, D], w fp32
              L2-normalised rows, beta = 2 sigmoid(randn) fp32 [B, T, H] (fla
              requires w and beta in fp32), g = None; the whole forward is
              timed (chunk preparation, solve_tril, the main kernel)
  fla_path_fox  the same with g = logsigmoid(randn) fp32 [B, T, H] (PaTH-FoX)
  (fla_path and fla_path_fox run only when named in --only)

Shapes: B*T = 16384 tokens, T in --T, B = 16384 / T, D in --D, H = 2048 / D
(H*D = 2048, the convention of spec/path_fox.md section 4.2) unless --heads.
Timing: CUDA events around each call separately, after >= 10 warm-up calls
(they also trigger Triton compilation/autotuning); the median of --reps calls
is reported, with FA-equivalent TFLOP/s = 2*B*H*T^2*D / time (causal fwd).
All calls run under torch.no_grad(). Calls are queued back to back (no
synchronisation between them), so each event pair measures one call's GPU time.

fla is not installed on the GPU machine: it is exported (never committed) into
<repo>/.peers (see .peers/FLA_COMMIT), together with the pure-Python packages it
needs at import time (einops, packaging). --peers points elsewhere.

Output, one line each (whitespace-separated key=value, no spaces in values
except inside reason="..."):
  HEADER gpu=<name> torch=<v> triton=<v> cuda=<v> fla_commit=<hash> date=<iso>
  PEER name=<sdpa_flash|sdpa_cudnn|fla_fox> B= H= T= D= ms=<median> tflops=<..> status=ok
  PEER name=... B= H= T= D= ms=nan tflops=nan status=unavailable reason="..."
  CHECK name=fla_fox B= H= T= D= max_abs_err= rel_rms_err=     (with --check)

Usage: python3 bench/gpu_peers.py [--T 2048 4096 8192 16384] [--D 64 128]
           [--reps 50] [--warmup 10] [--heads H] [--peers DIR] [--check]
"""

import argparse
import datetime
import math
import os
import statistics
import sys

TOKENS = 16384
HD = 2048  # H * D, as in spec/path_fox.md section 4.2

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--T", type=int, nargs="+", default=[2048, 4096, 8192, 16384],
                   help="sequence lengths (B = %d / T)" % TOKENS)
    p.add_argument("--D", type=int, nargs="+", default=[64, 128], help="head dims")
    p.add_argument("--heads", type=int, default=None,
                   help="number of heads H (default: %d / D)" % HD)
    p.add_argument("--reps", type=int, default=50, help="timed calls (median reported)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up calls (at least 10)")
    p.add_argument("--peers", default=os.path.join(REPO, ".peers"),
                   help="directory holding the exported fla package (default <repo>/.peers)")
    p.add_argument("--only", nargs="+", default=None,
                   choices=["sdpa_flash", "sdpa_cudnn", "fla_fox", "fla_path", "fla_path_fox"],
                   help="run only these peers")
    p.add_argument("--check", action="store_true",
                   help="also compare fla FoX (and SDPA) against a naive fp32 reference at T=256")
    return p.parse_args()


def one_line(msg):
    return " ".join(str(msg).split()).replace('"', "'")[:300]


def header(torch, peers_dir):
    try:
        import triton
        triton_v = triton.__version__
    except Exception as e:  # noqa: BLE001
        triton_v = "none(%s)" % type(e).__name__
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    commit = "none"
    try:
        with open(os.path.join(peers_dir, "FLA_COMMIT")) as f:
            commit = f.read().strip() or "none"
    except OSError:
        pass
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print("HEADER gpu=%s torch=%s triton=%s cuda=%s fla_commit=%s date=%s" % (
        gpu.replace(" ", "_"), torch.__version__, triton_v, torch.version.cuda, commit, date),
        flush=True)


def import_fla(peers_dir, module="fla.ops.forgetting_attn.parallel",
               name="parallel_forgetting_attn"):
    """Returns (the fla function `name` of `module`, None) or (None, reason)."""
    if os.path.isdir(peers_dir) and peers_dir not in sys.path:
        sys.path.insert(0, peers_dir)
    try:
        import importlib
        return getattr(importlib.import_module(module), name), None
    except Exception as e:  # noqa: BLE001
        return None, "import failed (peers=%s): %s: %s" % (peers_dir, type(e).__name__, e)


def path_inputs(torch, F, B, T, H, D, gate):
    """fla's PaTH inputs ([B, T, H, D]; w, beta, g fp32, as fla requires)."""
    q, k, v = (torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    w = F.normalize(torch.randn(B, T, H, D, device="cuda", dtype=torch.float32), dim=-1)
    beta = 2 * torch.sigmoid(torch.randn(B, T, H, device="cuda", dtype=torch.float32))
    g = F.logsigmoid(torch.randn(B, T, H, device="cuda", dtype=torch.float32)) if gate else None
    return q, k, v, w, beta, g


def time_calls(torch, fn, warmup, reps):
    """Median ms of `reps` individually event-timed calls after `warmup` calls."""
    for _ in range(max(10, warmup)):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def make_sdpa(torch, backend_name, q, k, v):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    backend = getattr(SDPBackend, backend_name)  # AttributeError -> unavailable

    def fn():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return fn


def naive_fox(torch, q, k, v, g, scale):
    """fp32 reference, [B, T, H, D]: softmax_j(q_i.k_j*scale + G_i - G_j), j <= i, G = cumsum(g)."""
    T = q.shape[1]
    G = g.float().cumsum(1)  # [B, T, H], inclusive
    s = torch.einsum("bqhd,bkhd->bhqk", q.float(), k.float()) * scale
    s = s + G.permute(0, 2, 1)[:, :, :, None] - G.permute(0, 2, 1)[:, :, None, :]
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    s = s.masked_fill(~mask, float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, dim=-1), v.float())


def err_fields(torch, ref, out):
    d = out.float() - ref
    return "max_abs_err=%.3e rel_rms_err=%.3e" % (
        d.abs().max().item(), (d.pow(2).mean().sqrt() / ref.pow(2).mean().sqrt()).item())


def run_check(torch, args, fox, fox_err):
    import torch.nn.functional as F
    T, B = 256, 2
    for D in args.D:
        H = args.heads or max(1, HD // D)
        H = min(H, 8)
        gen = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16, generator=gen)
                   for _ in range(3))
        g = F.logsigmoid(torch.randn(B, T, H, device="cuda", dtype=torch.float32, generator=gen))
        scale = D ** -0.5
        dims = "B=%d H=%d T=%d D=%d" % (B, H, T, D)
        if fox is None:
            print("CHECK name=fla_fox %s status=unavailable reason=\"%s\"" % (dims, one_line(fox_err)))
        else:
            try:
                with torch.no_grad():
                    out = fox(q, k, v, g, scale=scale)
                    ref = naive_fox(torch, q, k, v, g, scale)
                print("CHECK name=fla_fox %s %s status=ok" % (dims, err_fields(torch, ref, out)))
            except Exception as e:  # noqa: BLE001
                print("CHECK name=fla_fox %s status=error reason=\"%s\"" % (
                    dims, one_line("%s: %s" % (type(e).__name__, e))))
        # SDPA against the same reference with g = 0 (sanity of the reference itself).
        for name, backend in (("sdpa_flash", "FLASH_ATTENTION"), ("sdpa_cudnn", "CUDNN_ATTENTION")):
            try:
                qh, kh, vh = (x.transpose(1, 2).contiguous() for x in (q, k, v))
                with torch.no_grad():
                    out = make_sdpa(torch, backend, qh, kh, vh)().transpose(1, 2)
                    ref = naive_fox(torch, q, k, v, torch.zeros_like(g), scale)
                print("CHECK name=%s %s %s status=ok" % (name, dims, err_fields(torch, ref, out)))
            except Exception as e:  # noqa: BLE001
                print("CHECK name=%s %s status=unavailable reason=\"%s\"" % (
                    name, dims, one_line("%s: %s" % (type(e).__name__, e))))
        sys.stdout.flush()


def main():
    args = parse_args()
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to time", file=sys.stderr)
        return 1
    header(torch, args.peers)
    fox, fox_err = import_fla(args.peers)
    path, path_err = import_fla(args.peers, "fla.ops.path_attn.parallel", "parallel_path_attn")
    peers = args.only or ["sdpa_flash", "sdpa_cudnn", "fla_fox"]

    if args.check:
        run_check(torch, args, fox, fox_err)

    for D in args.D:
        H = args.heads or max(1, HD // D)
        for T in args.T:
            B = max(1, TOKENS // T)
            flops = 2.0 * B * H * T * T * D  # 4*B*H*T^2*D, halved for causal
            dims = "B=%d H=%d T=%d D=%d" % (B, H, T, D)
            for name in peers:
                fn = None
                try:
                    torch.manual_seed(0)
                    if name.startswith("sdpa"):
                        q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16)
                                   for _ in range(3))
                        backend = "FLASH_ATTENTION" if name == "sdpa_flash" else "CUDNN_ATTENTION"
                        fn = make_sdpa(torch, backend, q, k, v)
                    elif name.startswith("fla_path"):
                        if path is None:
                            raise RuntimeError(path_err)
                        q, k, v, w, beta, g = path_inputs(torch, F, B, T, H, D,
                                                          name == "fla_path_fox")
                        scale = D ** -0.5

                        def fn(q=q, k=k, v=v, w=w, beta=beta, g=g, scale=scale):
                            return path(q, k, v, w, beta, g, scale=scale)
                    else:
                        if fox is None:
                            raise RuntimeError(fox_err)
                        q, k, v = (torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16)
                                   for _ in range(3))
                        g = F.logsigmoid(torch.randn(B, T, H, device="cuda", dtype=torch.float32))
                        scale = D ** -0.5

                        def fn(q=q, k=k, v=v, g=g, scale=scale):
                            return fox(q, k, v, g, scale=scale)
                    with torch.no_grad():
                        ms = time_calls(torch, fn, args.warmup, args.reps)
                    print("PEER name=%s %s ms=%.4f tflops=%.1f status=ok" % (
                        name, dims, ms, flops / (ms * 1e-3) / 1e12), flush=True)
                except Exception as e:  # noqa: BLE001
                    status = "unavailable" if fn is None or name == "sdpa_cudnn" else "error"
                    print("PEER name=%s %s ms=nan tflops=nan status=%s reason=\"%s\"" % (
                        name, dims, status, one_line("%s: %s" % (type(e).__name__, e))), flush=True)
                finally:
                    fn = q = k = v = g = w = beta = None  # noqa: F841
                    try:
                        torch.cuda.synchronize()
                    except Exception:  # noqa: BLE001
                        pass
                    torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
