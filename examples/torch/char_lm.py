"""A small character-level decoder LM whose attention is attn's PaTH-FoX
(or MTA), trained on the CPU through attn.torch.

    PYTHONPATH=python python3 examples/torch/char_lm.py --steps 200
    PYTHONPATH=python python3 examples/torch/char_lm.py --attention mta
    PYTHONPATH=python torchrun --nproc_per_node=2 examples/torch/char_lm.py

The corpus is generated here from a seeded toy grammar (no download), so a
run is reproducible. Each block: RMSNorm, attention, RMSNorm, a SwiGLU MLP.
PaTH-FoX computes its inputs as fla's PaTH layer does: w L2-normalised per
head, beta = 2 sigmoid(.), the log forget gate g = logsigmoid(.). The MTA
variant uses the released configuration's pieces (RoPE, 6x11 key-query
convolutions and full head mixes before and after the softmax, the gated
per-head norm), initialised to the identity. Under torchrun each process
trains a DistributedDataParallel replica (gloo, CPU) on batches of its own
and rank 0 prints the mean loss. --check (the test) exits 1 unless every
loss is finite and the last is below the first.
"""

import argparse
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

import attn.torch as at


def corpus(n_chars, seed=0):
    """Sentences from a toy grammar: enough structure to learn quickly."""
    rng = random.Random(seed)
    subjects = ["the cat", "a dog", "the old fox", "my friend", "the bird",
                "a small robot", "the teacher", "our neighbour"]
    verbs = ["sees", "likes", "follows", "paints", "finds", "remembers"]
    objects = ["the river", "a red ball", "the moon", "an apple",
               "the quiet house", "two green trees", "the long road"]
    ends = [".", "!", " today.", " again.", " at night."]
    out, size = [], 0
    while size < n_chars:
        s = (f"{rng.choice(subjects)} {rng.choice(verbs)} "
             f"{rng.choice(objects)}{rng.choice(ends)} ")
        out.append(s)
        size += len(s)
    return "".join(out)[:n_chars]


class RMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) \
            * self.weight


class PathFoxAttention(torch.nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.h, self.d = heads, d_model // heads
        self.qkvw = torch.nn.Linear(d_model, 4 * d_model, bias=False)
        self.beta = torch.nn.Linear(d_model, heads)
        self.gate = torch.nn.Linear(d_model, heads)
        self.out = torch.nn.Linear(d_model, d_model, bias=False)

    def inputs(self, x):
        """q, k, v [B, T, H, D] and w, beta, g as fla's PaTH layer makes
        them (f32)."""
        B, T, _ = x.shape
        q, k, v, w = self.qkvw(x).view(B, T, 4, self.h, self.d).unbind(2)
        w = F.normalize(w.float(), dim=-1)
        beta = 2 * torch.sigmoid(self.beta(x).float())
        g = F.logsigmoid(self.gate(x).float())
        return q, k, v, w, beta, g

    def forward(self, x):
        B, T, _ = x.shape
        o = at.path_attention(*self.inputs(x))
        return self.out(o.reshape(B, T, -1))


class MtaAttention(torch.nn.Module):
    def __init__(self, d_model, heads, cq=6, ck=11):
        super().__init__()
        self.h, self.d = heads, d_model // heads
        self.qkv = torch.nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = torch.nn.Linear(d_model, d_model, bias=False)

        def identity_conv():
            # Row cq - 1 is the current query, column (ck - 1) / 2 the
            # same key: a delta there passes the score map through.
            t = torch.zeros(heads, cq, ck)
            t[:, cq - 1, (ck - 1) // 2] = 1
            return torch.nn.Parameter(t)
        self.conv_pre, self.conv_post = identity_conv(), identity_conv()
        self.mix_pre = torch.nn.Parameter(torch.eye(heads))
        self.mix_post = torch.nn.Parameter(torch.eye(heads))
        self.norm = torch.nn.Parameter(torch.ones(self.d))
        self.gate_w = torch.nn.Parameter(torch.zeros(self.d))
        self.gate_b = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.d).unbind(2)
        o = at.mta_attention(q, k, v, kq_conv_pre=self.conv_pre,
                             head_mix_pre=self.mix_pre,
                             kq_conv_post=self.conv_post,
                             head_mix_post=self.mix_post, norm=self.norm,
                             norm_gate_w=self.gate_w,
                             norm_gate_b=self.gate_b, rope_theta=1e4)
        return self.out(o.reshape(B, T, -1))


class Block(torch.nn.Module):
    def __init__(self, d_model, heads, attention):
        super().__init__()
        self.n1, self.n2 = RMSNorm(d_model), RMSNorm(d_model)
        self.attn = (MtaAttention if attention == "mta" else
                     PathFoxAttention)(d_model, heads)
        self.up = torch.nn.Linear(d_model, 4 * d_model, bias=False)
        self.down = torch.nn.Linear(2 * d_model, d_model, bias=False)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        a, b = self.up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(a) * b)


class CharLM(torch.nn.Module):
    def __init__(self, vocab, d_model=64, heads=4, layers=2,
                 attention="path-fox"):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d_model)
        self.blocks = torch.nn.ModuleList(
            Block(d_model, heads, attention) for _ in range(layers))
        self.norm = RMSNorm(d_model)
        self.head = torch.nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--attention", choices=["path-fox", "mta"],
                   default="path-fox")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile(fullgraph=True) the model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless the losses are finite and fall")
    args = p.parse_args(argv)

    # torchrun sets WORLD_SIZE: one DDP replica per process, gloo.
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = 0
    if world > 1:
        import torch.distributed as dist
        dist.init_process_group("gloo")
        rank = dist.get_rank()
    torch.manual_seed(args.seed)  # the same initial weights everywhere
    text = corpus(200_000, args.seed)
    chars = sorted(set(text))
    data = torch.tensor([chars.index(c) for c in text], dtype=torch.long)
    model = CharLM(len(chars), layers=args.layers, attention=args.attention)
    step_fn = model
    if world > 1:
        step_fn = torch.nn.parallel.DistributedDataParallel(model)
    if args.compile:
        step_fn = torch.compile(step_fn, fullgraph=world == 1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr,
                            weight_decay=0.01)
    gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    log = print if rank == 0 else (lambda *a, **k: None)
    log(f"char LM: {len(chars)} symbols, {args.layers} layers, "
        f"{args.attention} attention, "
        f"{sum(p.numel() for p in model.parameters())} parameters, "
        f"{world} process(es); uniform loss {math.log(len(chars)):.3f}")
    losses = []
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        starts = torch.randint(0, len(data) - args.seq - 1, (args.batch,),
                               generator=gen)
        batch = torch.stack([data[s:s + args.seq + 1] for s in starts])
        logits = step_fn(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        mean = loss.detach()
        if world > 1:
            dist.all_reduce(mean)
            mean /= world
        losses.append(mean.item())
        if step == 1 or step % 10 == 0 or step == args.steps:
            log(f"step {step:4d}  loss {losses[-1]:.4f}  "
                f"{time.perf_counter() - t0:.1f} s")
    ok = all(math.isfinite(x) for x in losses) and losses[-1] < losses[0]
    if args.check:
        log("check: " + ("losses finite and falling" if ok else
                         f"FAILED: losses {losses}"))
    if world > 1:
        dist.destroy_process_group()
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
