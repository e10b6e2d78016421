#!/usr/bin/env python3
"""Time the peers' training steps on the GPU machine (bf16, causal).

Peers (issue 43 item 6; shapes and conventions of bench/gpu_peers.py):
  sdpa_flash  torch SDPA, flash backend, [B, H, T, D]
  sdpa_cudnn  torch SDPA, cuDNN backend ("unavailable" if it errors)
  fla_fox     fla's parallel_forgetting_attn, [B, T, H, D], g = logsigmoid
              (randn) fp32 [B, T, H]
  foxrepo_fox the FoX repo's forgetting_attention (--peers DIR/foxrepo/
              forgetting_attention.py, zhixuan-lin/forgetting-transformer's
              src/forgetting_transformer/ops/forgetting_attention.py), the
              same inputs, no adaptive pruning
For each: fwd+bwd (the forward with autograd recording, then the gradients
of every input for dO) and bwd alone (the gradients through a graph
recorded before the timed calls, retained so that it can be replayed).
Timing: CUDA events around each call, the median of --reps after warm-up.

Output, one line each:
  PEER name= B= H= T= D= fwdbwd_ms= bwd_ms= status=ok
  PEER name= ... status=unavailable reason="..."

Usage: python3 bench/gpu_train_peers.py [--T ...] [--D ...] [--reps 30]
           [--peers DIR] [--only NAME ...]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_peers  # noqa: E402  (header, import_fla, time_calls, one_line)

TOKENS, HD = gpu_peers.TOKENS, gpu_peers.HD


def import_fox_repo(peers_dir):
    """(the FoX repo's forgetting_attention, None) or (None, reason)."""
    path = os.path.join(peers_dir, "foxrepo", "forgetting_attention.py")
    try:
        import importlib.util
        spec = importlib.util.spec_from_file_location("foxrepo_forgetting_attention", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.forgetting_attention, None
    except Exception as e:  # noqa: BLE001
        return None, "import failed (%s): %s: %s" % (path, type(e).__name__, e)


def step_fns(torch, forward, inputs, dO):
    """(fwd+bwd, bwd alone) callables of `forward` on leaf tensors `inputs`:
    torch.autograd.grad, so that no call adds into a .grad."""
    def fwdbwd():
        return torch.autograd.grad(forward(*inputs), inputs, dO)

    out = forward(*inputs)  # recorded outside the timed calls

    def bwd():
        return torch.autograd.grad(out, inputs, dO, retain_graph=True)
    return fwdbwd, bwd


def sdpa(torch, backend_name):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    backend = getattr(SDPBackend, backend_name)

    def fn(q, k, v):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return fn


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--T", type=int, nargs="+", default=[2048, 4096, 8192, 16384])
    p.add_argument("--D", type=int, nargs="+", default=[64, 128])
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--peers", default=os.path.join(gpu_peers.REPO, ".peers"))
    p.add_argument("--only", nargs="+", default=["sdpa_flash", "sdpa_cudnn", "fla_fox", "foxrepo_fox"])
    args = p.parse_args()
    import torch
    import torch.nn.functional as F
    gpu_peers.header(torch, args.peers)
    fox, why = gpu_peers.import_fla(args.peers)
    repo, repo_why = import_fox_repo(args.peers)
    for D in args.D:
        H = HD // D
        for T in args.T:
            B = TOKENS // T
            shape = "B=%d H=%d T=%d D=%d" % (B, H, T, D)
            for name in args.only:
                try:
                    if name.startswith("sdpa"):
                        fwd = sdpa(torch, {"sdpa_flash": "FLASH_ATTENTION",
                                           "sdpa_cudnn": "CUDNN_ATTENTION"}[name])
                        ins = [torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16,
                                           requires_grad=True) for _ in range(3)]
                    else:
                        fwd, fwd_why = (fox, why) if name == "fla_fox" else (repo, repo_why)
                        if fwd is None:
                            raise RuntimeError(fwd_why)
                        ins = [torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16,
                                           requires_grad=True) for _ in range(3)]
                        ins.append(F.logsigmoid(torch.randn(B, T, H, device="cuda"))
                                   .requires_grad_(True))
                    dO = torch.randn_like(ins[0])
                    fb, b = step_fns(torch, fwd, ins, dO)
                    fb_ms = gpu_peers.time_calls(torch, fb, args.warmup, args.reps)
                    b_ms = gpu_peers.time_calls(torch, b, args.warmup, args.reps)
                    print("PEER name=%s %s fwdbwd_ms=%.4f bwd_ms=%.4f status=ok"
                          % (name, shape, fb_ms, b_ms), flush=True)
                except Exception as e:  # noqa: BLE001
                    print('PEER name=%s %s fwdbwd_ms=nan bwd_ms=nan status=unavailable '
                          'reason="%s"' % (name, shape, gpu_peers.one_line(e)), flush=True)
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
