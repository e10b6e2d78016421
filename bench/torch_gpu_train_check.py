"""attn.torch training on CUDA tensors: gradients and torch.compile on the GPU.

Run on a GPU machine with libattn.so packaged (scripts/gpu-package.sh with
ATTN_GPU_TARGETS including `attn`):
    ATTN_LIBRARY=.device/libattn.so PYTHONPATH=python python3 bench/torch_gpu_train_check.py

1. attn.torch.attention (causal) and forgetting_attention on bf16 CUDA
   tensors in fla's [B, T, H, D] layout, GQA: the output and every gradient
   (through torch.autograd on attn's fused GPU backward) vs a float64 torch
   reference of the same rounded inputs; relative RMS <= 8e-3 (dg 2e-2).
2. A two-layer model step under torch.compile(fullgraph=True) on CUDA:
   the loss and the gradients match the eager step's (relative 1e-2,
   RMS 2e-2: inductor rounds the other ops its own way).
Env: ATTN_SEED. Exit status 1 when a check fails.
"""

import os
import sys

import torch
import torch.nn.functional as F

import attn.torch as at

failures = []


def rel_rms(got, ref):
    got, ref = got.double(), ref.double()
    return ((got - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def reference(q, k, v, g=None):
    """fp64 causal (FoX) attention on [B, T, H, D], GQA by head counts."""
    q, k, v = (x.double().transpose(1, 2) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = (x.repeat_interleave(group, dim=1) for x in (k, v))
    T = q.shape[2]
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if g is not None:
        c = g.double().transpose(1, 2).cumsum(-1)  # [B, H, T]
        s = s + c[..., :, None] - c[..., None, :]
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    s = s.masked_fill(~mask, float("-inf"))
    return (s.softmax(-1) @ v).transpose(1, 2)


def check(name, got, ref, bound):
    err = rel_rms(got, ref)
    ok = torch.isfinite(got).all().item() and err <= bound
    print(f"{'ok  ' if ok else 'FAIL'} {name}: relative RMS {err:.3e} (bound {bound:.0e})")
    if not ok:
        failures.append(name)


def gradients(seed, fox, B=2, T=1000, H=4, Hk=2, D=64):
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def rnd(*shape, dtype=torch.bfloat16):
        return torch.randn(*shape, generator=gen, device="cuda").to(dtype).requires_grad_(True)
    q, k, v = rnd(B, T, H, D), rnd(B, T, Hk, D), rnd(B, T, Hk, D)
    g = None
    if fox:
        g = F.logsigmoid(torch.randn(B, T, H, generator=gen, device="cuda") + 3).requires_grad_(True)
    dO = torch.randn(B, T, H, D, generator=gen, device="cuda").to(torch.bfloat16)
    ins = [q, k, v] + ([g] if fox else [])
    o = at.forgetting_attention(q, k, v, g) if fox else at.attention(q, k, v)
    grads = torch.autograd.grad(o, ins, dO)
    ref_ins = [x.detach().double().requires_grad_(True) for x in ins]
    ref = reference(*ref_ins)
    ref_grads = torch.autograd.grad(ref, ref_ins, dO.double())
    what = f"{'fox' if fox else 'plain'} B={B} T={T} H={H} Hk={Hk} D={D} seed {seed}"
    check(what + " o", o, ref, 5e-3)
    for n, got, want in zip("qkvg", grads, ref_grads):
        check(f"{what} d{n}", got, want, 2e-2 if n == "g" else 8e-3)


class Layer(torch.nn.Module):
    def __init__(self, d_model=128, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d_model, 3 * d_model, bias=False)
        self.gate = torch.nn.Linear(d_model, heads)
        self.out = torch.nn.Linear(d_model, d_model, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).unbind(2)
        g = F.logsigmoid(self.gate(x).float())
        o = at.forgetting_attention(q, k, v, g)
        return x + self.out(o.reshape(B, T, C))


def compiled_step(seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(Layer(), Layer()).cuda().to(torch.bfloat16)
    x = torch.randn(2, 256, 128, device="cuda", dtype=torch.bfloat16)

    def step(m):
        m.zero_grad()
        loss = m(x).float().pow(2).mean()
        loss.backward()
        return loss.item(), [p.grad.detach().clone() for p in m.parameters()]
    eager_loss, eager_grads = step(model)
    comp = torch.compile(model, fullgraph=True)
    comp_loss, comp_grads = step(comp)
    # Inductor fuses the model's other ops its own way: bf16 rounding, not
    # equality, separates the two.
    worst = max(rel_rms(b, a) for a, b in zip(eager_grads, comp_grads))
    ok = abs(comp_loss - eager_loss) <= 1e-2 * abs(eager_loss) and worst <= 2e-2
    print(f"{'ok  ' if ok else 'FAIL'} torch.compile(fullgraph=True) step on CUDA: "
          f"loss {comp_loss:.6f} (eager {eager_loss:.6f}), gradients' worst "
          f"relative RMS difference {worst:.2e}")
    if not ok:
        failures.append("compiled step")


def main():
    seed = int(os.environ.get("ATTN_SEED", "0")) or int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}, {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for fox in (False, True):
        gradients(seed, fox)
        gradients(seed + 1, fox, B=1, T=130, H=2, Hk=2, D=128)
    compiled_step(seed)
    print("FAILED: " + ", ".join(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
