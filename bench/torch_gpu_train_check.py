"""attn.torch training on CUDA tensors: gradients and torch.compile on the GPU.

Run on a GPU machine with libattn.so packaged (scripts/gpu-package.sh with
ATTN_GPU_TARGETS including `attn`):
    ATTN_LIBRARY=.device/libattn.so PYTHONPATH=python python3 bench/torch_gpu_train_check.py

1. attn.torch.attention (causal) and forgetting_attention on bf16 CUDA
   tensors in fla's [B, T, H, D] layout, GQA: the output and every gradient
   (through torch.autograd on attn's fused GPU backward) vs the float64
   torch re-statement of test/host/test_torch.py (ref_attention, on the
   host) of the same rounded inputs; relative RMS <= 8e-3 (dg 2e-2).
2. The same with packed sequences (cu_seqlens, random cuts, int32 and
   int64 offsets): attention with RoPE and forgetting_attention, against
   the re-statement run on each sequence alone (test_torch.packed).
3. A two-layer model step under torch.compile(fullgraph=True) on CUDA:
   the loss and the gradients match the eager step's (relative 1e-2,
   RMS 2e-2: inductor rounds the other ops its own way).
4. torch.library.opcheck of the three custom ops on CUDA tensors (plain and
   FoX programs, bf16).
Env: ATTN_SEED. Exit status 1 when a check fails.
"""

import os
import sys

import torch
import torch.nn.functional as F

import attn.torch as at

failures = []


def load_test_torch():
    """test/host/test_torch.py as a module: its fp64 re-statement of the
    math (ref_attention) and rel_rms."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "test", "host", "test_torch.py")
    spec = importlib.util.spec_from_file_location("test_torch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = load_test_torch()


def check(name, got, want, bound):
    err = ref.rel_rms(got.cpu(), want)
    ok = err <= bound  # inf where got has a non-finite value
    print(f"{'ok  ' if ok else 'FAIL'} {name}: relative RMS {err:.3e} (bound {bound:.0e})")
    if not ok:
        failures.append(name)


def gradients(seed, fox, B=2, T=1000, H=4, Hk=2, D=64, packed=False):
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def rnd(*shape, dtype=torch.bfloat16):
        return torch.randn(*shape, generator=gen, device="cuda").to(dtype).requires_grad_(True)
    q, k, v = rnd(B, T, H, D), rnd(B, T, Hk, D), rnd(B, T, Hk, D)
    g = None
    if fox:
        g = F.logsigmoid(torch.randn(B, T, H, generator=gen, device="cuda") + 3).requires_grad_(True)
    dO = torch.randn(B, T, H, D, generator=gen, device="cuda").to(torch.bfloat16)
    ins = [q, k, v] + ([g] if fox else [])
    kw, ref_kw, reference = {}, {}, ref.ref_attention
    if packed:
        # 3 random cuts (empty sequences possible), int64 offsets for FoX
        # as fla passes them, int32 otherwise; RoPE on the plain case.
        cuts = torch.randint(0, T + 1, (3,), generator=gen, device="cuda")
        cu = torch.cat([torch.tensor([0], device="cuda"), cuts.sort().values,
                        torch.tensor([T], device="cuda")])
        kw["cu_seqlens"] = cu if fox else cu.to(torch.int32)
        ref_kw["cu_seqlens"] = cu.cpu()
        if not fox:
            kw["rope_theta"] = ref_kw["rope_theta"] = 10000.0
        reference = ref.packed(ref.ref_attention)
    o = at.forgetting_attention(q, k, v, g, **kw) if fox else at.attention(q, k, v, **kw)
    grads = torch.autograd.grad(o, ins, dO)
    # The fp64 reference on the host, on the same rounded values.
    ref_ins = [x.detach().cpu().double().requires_grad_(True) for x in ins]
    names = ["q", "k", "v", "g"]
    want = reference(**dict(zip(names, ref_ins)), **ref_kw)
    ref_grads = torch.autograd.grad(want, ref_ins, dO.cpu().double())
    what = (f"{'fox' if fox else 'plain'}{' packed' if packed else ''} B={B} T={T} "
            f"H={H} Hk={Hk} D={D} seed {seed}")
    if packed:
        what += f" cu_seqlens {cu.tolist()}"
    check(what + " o", o, want, 5e-3)
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
    worst = max(ref.rel_rms(b, a) for a, b in zip(eager_grads, comp_grads))
    ok = abs(comp_loss - eager_loss) <= 1e-2 * abs(eager_loss) and worst <= 2e-2
    print(f"{'ok  ' if ok else 'FAIL'} torch.compile(fullgraph=True) step on CUDA: "
          f"loss {comp_loss:.6f} (eager {eager_loss:.6f}), gradients' worst "
          f"relative RMS difference {worst:.2e}")
    if not ok:
        failures.append("compiled step")


def opcheck_cuda(seed):
    """torch.library.opcheck of attn's custom ops on CUDA tensors."""
    torch.manual_seed(seed)
    B, T, H, D = 1, 70, 2, 64
    acts = [torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16)
            for _ in range(3)]
    g = F.logsigmoid(torch.randn(B, H, T, device="cuda") + 3)
    programs = {"plain": (at._attention_program("bf16", D, D), acts),
                "fox": (at._attention_program("bf16", D, D, gate=True),
                        acts + [g])}
    for name, (program, args) in programs.items():
        for what, op, call in ref.opcheck_calls(name, program, args):
            try:
                torch.library.opcheck(op, call)
                print(f"ok   opcheck {what} on CUDA")
            except Exception as e:  # report every failing op, then go on
                print(f"FAIL opcheck {what} on CUDA: {type(e).__name__}: {e}")
                failures.append(f"opcheck {what}")


def main():
    seed = int(os.environ.get("ATTN_SEED", "0")) or int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}, {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for fox in (False, True):
        gradients(seed, fox)
        gradients(seed + 1, fox, B=1, T=130, H=2, Hk=2, D=128)
        gradients(seed + 2, fox, B=1, T=1000, H=4, Hk=2, D=64, packed=True)
        gradients(seed + 3, fox, B=1, T=300, H=2, Hk=1, D=128, packed=True)
    compiled_step(seed)
    opcheck_cuda(seed)
    print("FAILED: " + ", ".join(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
