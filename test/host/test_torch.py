"""attn.torch (python/attn/torch.py) on CPU tensors.

Each functional op (plain, RoPE, sliding window, FoX, PaTH, PaTH-FoX, GQA,
MTA pieces) and attn.torch.compile on fresh random f32 inputs (the seed is
printed), outputs poisoned with NaN before every launch
(ATTN_TORCH_POISON=1): the forward against a pure-torch fp64 re-statement
of the math written here (relative RMS <= 1e-5), then every gradient
through the op's autograd (attn's training pair) against the fp64
reference's own autograd. torch.library.opcheck on the three custom ops;
torch.compile(fullgraph=True) of a small module using the ops, forward and
backward, against eager; bad inputs raise attn.Error subclasses naming
the problem.

Exit status 0 when every check passes, 1 on a failure, 77 (ctest: SKIPPED)
when torch cannot be imported, unless ATTN_REQUIRE_TORCH=1 (CI), where
that is a failure.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("ATTN_TORCH_POISON", "1")

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    # ctest starts Debian's python3; torch lives in install-torch.sh's venv.
    # (A venv's python3 is a link to the base interpreter: the marker, not
    # the path, keeps this from running twice.)
    other = os.environ.get("ATTN_TORCH_PYTHON")
    if other and os.path.exists(other) and \
            not os.environ.get("ATTN_TORCH_REEXEC"):
        os.environ["ATTN_TORCH_REEXEC"] = "1"
        os.execv(other, [other, *sys.argv])
    msg = (f"torch is not importable by {sys.executable} ({e}), and "
           f"ATTN_TORCH_PYTHON ({other or 'unset'}) has none either: "
           "scripts/install-torch.sh installs it into "
           "~/.cache/attn/torch-venv, CMake's default ATTN_TORCH_PYTHON")
    if os.environ.get("ATTN_REQUIRE_TORCH") == "1":
        print("FAIL:", msg, file=sys.stderr)
        sys.exit(1)
    print("SKIPPED:", msg)
    sys.exit(77)

import attn  # noqa: E402 (after the torch check: exit 77 without torch)
import attn.torch as at  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def rel_rms(got, want):
    got = got.detach().double()
    want = want.detach().double()
    if not torch.isfinite(got).all():
        return float("inf")
    den = want.pow(2).mean().sqrt().item()
    return (got - want).pow(2).mean().sqrt().item() / max(den, 1e-30)


# --------------------------------------------------------------------------
# The reference math, fp64, fla's [B, T, H, D] layout.


def expand_heads(x, hq):
    """[B, T, H, ...] repeated to [B, T, HQ, ...] (GQA: query head h reads
    key head h // (HQ / H))."""
    return x.repeat_interleave(hq // x.shape[2], dim=2)


def rope_ref(x, theta, style="half"):
    """Rotary embedding at positions 0..T-1 of [B, T, H, D]."""
    T, D = x.shape[1], x.shape[3]
    inv = theta ** (-torch.arange(0, D // 2, dtype=torch.float64) * 2 / D)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]
    if style == "half":
        a, b = x[..., :D // 2], x[..., D // 2:]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos],
                       dim=-1).flatten(-2)


def path_logits(q, k, w, beta):
    """[B, HQ, T, T] q_i^T H_i H_{i-1} ... H_{j+1} k_j for j <= i (else
    0), H_t = I - beta_t w_t w_t^T: u_i starts as q_i and, after the logit
    with key j is read, turns into H_j u_i (H_j is symmetric)."""
    B, T, Hq, D = q.shape
    k, w, beta = (expand_heads(x, Hq) for x in (k, w, beta))
    u = q.clone()
    s = q.new_zeros(B, Hq, T, T)
    for j in range(T - 1, -1, -1):
        rows = slice(j, T)
        s[:, :, rows, j] = torch.einsum("bihd,bhd->bhi", u[:, rows],
                                        k[:, j])
        wj = w[:, j][:, None]                              # [B, 1, H, D]
        u_rows = u[:, rows]
        u = torch.cat([u[:, :j], u_rows - beta[:, j][:, None, :, None] * wj *
                       (u_rows * wj).sum(-1, keepdim=True)], dim=1)
    return s


def softmax_attention(s, v, mask):
    """softmax over keys of [B, HQ, T, T] logits under `mask`, times v
    [B, T, H, DV] -> [B, T, HQ, DV]."""
    Hq = s.shape[1]
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bhij,bjhd->bihd", p, expand_heads(v, Hq))


def causal_mask(T, window=None):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    m = j <= i
    if window is not None:
        m &= j > i - window
    return m


def gate_bias(g):
    """G_i - G_j, [B, HQ, T, T], G the inclusive cumsum of g [B, T, HQ]."""
    G = g.cumsum(1).transpose(1, 2)
    return G[..., :, None] - G[..., None, :]


def ref_attention(q, k, v, scale=None, causal=True, window_size=None,
                  rope_theta=None, rope_style="half", g=None):
    T, Hq, D = q.shape[1], q.shape[2], q.shape[3]
    scale = D ** -0.5 if scale is None else scale
    if rope_theta is not None:
        q, k = rope_ref(q, rope_theta, rope_style), rope_ref(k, rope_theta,
                                                             rope_style)
    s = scale * torch.einsum("bihd,bjhd->bhij", q, expand_heads(k, Hq))
    if g is not None:
        s = s + gate_bias(g)
    mask = causal_mask(T, window_size) if causal or window_size else \
        torch.ones(T, T, dtype=torch.bool)
    return softmax_attention(s, v, mask)


def ref_path(q, k, v, w, beta, g=None, scale=None):
    T, D = q.shape[1], q.shape[3]
    scale = D ** -0.5 if scale is None else scale
    s = path_logits(q, k, w, beta)
    if g is not None:
        s = s + gate_bias(g)
    return softmax_attention(scale * s, v, causal_mask(T))


def kq_conv_ref(x, kernel, stage):
    """MTA's key-query convolution of [B, H, T, T] (spec/mta.md §1.2):
    masked and -inf sources count 0, zero padding c_q - 1 rows above and
    (c_k - 1) / 2 columns each side; outputs right of the diagonal -inf
    (pre) or 0 (post)."""
    H, cq, ck = kernel.shape
    T = x.shape[2]
    mask = causal_mask(T)
    x0 = torch.where(mask & torch.isfinite(x), x, torch.zeros_like(x))
    c = (ck - 1) // 2
    xp = F.pad(x0, (c, c, cq - 1, 0))
    y = F.conv2d(xp, kernel[:, None], groups=H)
    return y.masked_fill(~mask, float("-inf") if stage == "pre" else 0.0)


def head_mix_ref(x, weight, stage):
    """out[h] = sum_m W[h, m] in[g0 + m] over h's group of c_h heads;
    -inf inputs count 0; outputs right of the diagonal -inf (pre) or 0."""
    H, ch = weight.shape
    T = x.shape[2]
    x = torch.where(torch.isfinite(x), x, torch.zeros_like(x))
    xs = x.unflatten(1, (H // ch, ch))                   # [B, G, ch, T, T]
    ws = weight.unflatten(0, (H // ch, ch))              # [G, ch(out), ch]
    y = torch.einsum("gom,bgmij->bgoij", ws, xs).flatten(1, 2)
    return y.masked_fill(~causal_mask(T), float("-inf") if stage == "pre"
                         else 0.0)


def ref_mta(q, k, v, kq_conv_pre=None, head_mix_pre=None, kq_conv_post=None,
            head_mix_post=None, norm=None, norm_gate_w=None, norm_gate_b=None,
            norm_eps=1e-5, rope_theta=None):
    T, Hq, D = q.shape[1], q.shape[2], q.shape[3]
    if rope_theta is not None:
        q, k = rope_ref(q, rope_theta), rope_ref(k, rope_theta)
    mask = causal_mask(T)
    s = D ** -0.5 * torch.einsum("bihd,bjhd->bhij", q, expand_heads(k, Hq))
    s = s.masked_fill(~mask, float("-inf"))
    if kq_conv_pre is not None:
        s = kq_conv_ref(s, kq_conv_pre, "pre")
    if head_mix_pre is not None:
        s = head_mix_ref(s, head_mix_pre, "pre")
    p = torch.softmax(s, dim=-1)
    if kq_conv_post is not None:
        p = kq_conv_ref(p, kq_conv_post, "post")
    if head_mix_post is not None:
        p = head_mix_ref(p, head_mix_post, "post")
    o = torch.einsum("bhij,bjhd->bihd", p, expand_heads(v, Hq))
    if norm is not None:
        o = o / (o.pow(2).mean(-1, keepdim=True) + norm_eps).sqrt() * norm
        if norm_gate_w is not None:
            o = o * torch.sigmoid((o * norm_gate_w).sum(-1, keepdim=True) +
                                  norm_gate_b)
    return o


# --------------------------------------------------------------------------
# Inputs.


def acts(B, T, Hq, Hk, D, Dv=None):
    Dv = D if Dv is None else Dv
    return (torch.randn(B, T, Hq, D), torch.randn(B, T, Hk, D),
            torch.randn(B, T, Hk, Dv))


def log_gate(B, T, H):
    # fla's tests: logsigmoid of N(0, 1) logits, per token and query head.
    return F.logsigmoid(torch.randn(B, T, H))


def path_wb(B, T, Hk, D):
    w = F.normalize(torch.randn(B, T, Hk, D), dim=-1)
    beta = torch.rand(B, T, Hk) * 2   # fla's layer: sigmoid * 2, in [0, 2]
    return w, beta


def mta_pieces(H, Dv, cq=3, ck=5):
    return dict(kq_conv_pre=torch.randn(H, cq, ck) * 0.3,
                head_mix_pre=torch.randn(H, H) * 0.5 + torch.eye(H),
                kq_conv_post=torch.randn(H, cq, ck) * 0.3,
                head_mix_post=torch.randn(H, H) * 0.5 + torch.eye(H),
                norm=torch.rand(Dv) + 0.5, norm_gate_w=torch.randn(Dv) * 0.2,
                norm_gate_b=torch.randn(1) * 0.2)


def packed(ref):
    """`ref` run on each sequence of cu_seqlens alone, laid end to end
    (the meaning of packed sequences; empty ones have no rows). The
    per-token tensors are cut; parameters (MTA's) go whole to each."""
    per_token = ("q", "k", "v", "g", "w", "beta")

    def run(cu_seqlens, **kw):
        tensors = {n: x for n, x in kw.items() if n in per_token}
        other = {n: x for n, x in kw.items() if n not in tensors}
        cu = cu_seqlens.tolist()
        return torch.cat([ref(**{n: x[:, a:b] for n, x in tensors.items()},
                              **other)
                          for a, b in zip(cu[:-1], cu[1:]) if b > a], dim=1)
    return run


def cases():
    """(name, attn.torch op, reference, tensor kwargs, other kwargs,
    tolerances: "o" the output's, a tensor's name its gradient's, "*" every
    other gradient's; 1e-5 where none is given)."""
    B, T = 2, 13
    out = []
    q, k, v = acts(B, T, 4, 2, 16, 8)
    out.append(("plain GQA Dv != D", at.attention, ref_attention,
                dict(q=q, k=k, v=v), {}, {}))
    q, k, v = acts(B, T, 2, 2, 16)
    out.append(("plain scale=0.3 no mask", at.attention, ref_attention,
                dict(q=q, k=k, v=v), dict(scale=0.3, causal=False), {}))
    q, k, v = acts(B, T, 2, 1, 16)
    out.append(("plain window 4", at.attention, ref_attention,
                dict(q=q, k=k, v=v), dict(window_size=4), {}))
    q, k, v = acts(B, T, 2, 2, 16)
    out.append(("rope half", at.attention, ref_attention,
                dict(q=q, k=k, v=v), dict(rope_theta=10000.0), {}))
    q, k, v = acts(B, T, 2, 2, 16)
    out.append(("rope interleaved", at.attention, ref_attention,
                dict(q=q, k=k, v=v),
                dict(rope_theta=500.0, rope_style="interleaved"), {}))
    q, k, v = acts(B, T, 4, 2, 16)
    out.append(("fox GQA", at.forgetting_attention,
                lambda q, k, v, g, **kw: ref_attention(q, k, v, g=g, **kw),
                dict(q=q, k=k, v=v, g=log_gate(B, T, 4)), {}, {}))
    q, k, v = acts(B, T, 2, 2, 16)
    out.append(("fox window 5 scale 0.2", at.forgetting_attention,
                lambda q, k, v, g, **kw: ref_attention(q, k, v, g=g, **kw),
                dict(q=q, k=k, v=v, g=log_gate(B, T, 2)),
                dict(window_size=5, scale=0.2), {}))
    q, k, v = acts(B, T, 2, 2, 16)
    out.append(("path", at.path_attention, ref_path,
                dict(q=q, k=k, v=v, **dict(zip(("w", "beta"),
                                               path_wb(B, T, 2, 16)))),
                {}, {}))
    q, k, v = acts(B, T, 4, 2, 16)
    out.append(("path-fox GQA", at.path_attention, ref_path,
                dict(q=q, k=k, v=v, **dict(zip(("w", "beta"),
                                               path_wb(B, T, 2, 16))),
                     g=log_gate(B, T, 4)), {}, {}))
    # 16-bit activations (w, beta, g stay f32, as fla requires): the
    # whole chain runs in 16 bits, score maps included, so the bound is
    # docs/training.md's for such programs, relative RMS 2e-2.
    for dt in (torch.bfloat16, torch.float16):
        q, k, v = (x.to(dt) for x in acts(B, T, 4, 2, 16))
        out.append((f"path-fox GQA {str(dt)[6:]}", at.path_attention,
                    ref_path,
                    dict(q=q, k=k, v=v, **dict(zip(("w", "beta"),
                                                   path_wb(B, T, 2, 16))),
                         g=log_gate(B, T, 4)), {}, {"o": 2e-2, "*": 2e-2}))
    # Packed sequences: an empty one, a one-token one, longer ones; fla's
    # int64 offsets and FlashAttention's int32 ones.
    cu32 = torch.tensor([0, 3, 3, 4, 9, T], dtype=torch.int32)
    q, k, v = acts(1, T, 4, 2, 16)
    out.append(("packed rope window GQA", at.attention, packed(ref_attention),
                dict(q=q, k=k, v=v),
                dict(cu_seqlens=cu32, rope_theta=100.0, window_size=3), {}))
    out.append(("packed rope no mask", at.attention, packed(ref_attention),
                dict(q=q, k=k, v=v),
                dict(cu_seqlens=cu32.long(), rope_theta=100.0, causal=False),
                {}))
    q, k, v = acts(B, T, 2, 2, 16)
    out.append(("packed fox batch 2", at.forgetting_attention,
                packed(lambda q, k, v, g, **kw: ref_attention(q, k, v, g=g,
                                                              **kw)),
                dict(q=q, k=k, v=v, g=log_gate(B, T, 2)),
                dict(cu_seqlens=cu32), {}))
    q, k, v = acts(1, T, 2, 1, 16)
    out.append(("packed path-fox", at.path_attention, packed(ref_path),
                dict(q=q, k=k, v=v, **dict(zip(("w", "beta"),
                                               path_wb(1, T, 1, 16))),
                     g=log_gate(1, T, 2)),
                dict(cu_seqlens=cu32.long()), {}))
    q, k, v = acts(1, T, 4, 4, 16)
    pieces = mta_pieces(4, 16)
    out.append(("packed mta released pieces + rope", at.mta_attention,
                packed(ref_mta), dict(q=q, k=k, v=v, **pieces),
                dict(cu_seqlens=cu32, rope_theta=10000.0),
                {n: 1e-3 for n in pieces}))
    q, k, v = acts(B, T, 4, 4, 16)
    pieces = mta_pieces(4, 16)
    # MTA's parameter gradients are sums over the score map whose terms
    # cancel: docs/training.md's bound for them (ref::trainingBounds),
    # 1e-3. norm_gate_b's is one scalar, the sum over every output element;
    # seed 223282918 gave 1.2e-4 with the other parameters below 1e-6.
    loose = {n: 1e-3 for n in pieces}
    out.append(("mta released pieces + rope", at.mta_attention, ref_mta,
                dict(q=q, k=k, v=v, **pieces), dict(rope_theta=10000.0),
                loose))
    q, k, v = acts(B, T, 4, 2, 16)
    out.append(("mta pre conv only GQA", at.mta_attention, ref_mta,
                dict(q=q, k=k, v=v,
                     kq_conv_pre=mta_pieces(4, 16, 6, 11)["kq_conv_pre"]),
                {}, {"kq_conv_pre": 1e-3}))
    return out


def run_case(name, op, ref, tensors, kwargs, tols):
    want = ref(**{n: x.double() for n, x in tensors.items()}, **kwargs)
    with torch.no_grad():
        got = op(**tensors, **kwargs)
    err = rel_rms(got, want)
    fwd_tol = tols.get("o", 1e-5)
    print(f"torch {name}: forward relative RMS error {err:.3e}")
    check(got.shape == want.shape and got.dtype == tensors["q"].dtype,
          f"{name}: output {tuple(got.shape)} {got.dtype}")
    check(got.is_contiguous(), f"{name}: output not contiguous")
    check(err <= fwd_tol, f"{name}: forward error {err:.3e} > {fwd_tol}")

    # Gradients: the same op with autograd (attn's training pair) vs the
    # fp64 reference's autograd, for one random cotangent.
    leaves = {n: x.clone().requires_grad_() for n, x in tensors.items()}
    leaves64 = {n: x.double().clone().requires_grad_()
                for n, x in tensors.items()}
    dO = torch.randn(want.shape, dtype=torch.float64)
    o = op(**leaves, **kwargs)
    (o.double() * dO).sum().backward()
    o64 = ref(**leaves64, **kwargs)
    (o64 * dO).sum().backward()
    check(rel_rms(o, o64) <= fwd_tol, f"{name}: training forward error "
          f"{rel_rms(o, o64):.3e}")
    for n in tensors:
        g, w = leaves[n].grad, leaves64[n].grad
        if g is None:
            check(False, f"{name}: no gradient for {n}")
            continue
        err = rel_rms(g, w)
        tol = tols.get(n, tols.get("*", 1e-5))
        print(f"torch {name}: d{n} relative RMS error {err:.3e}")
        check(err <= tol, f"{name}: d{n} error {err:.3e} > {tol}")


# --------------------------------------------------------------------------
# attn.torch.compile on attn's layout, a program from examples/.


def check_compile():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..")
    with open(os.path.join(root, "examples", "fox.mlir")) as f:
        fox = at.compile(f.read())
    check(fox.args[0] == ("float32", (None, None, None, 64)),
          f"compile: args {fox.args}")
    B, H, T = 1, 2, 11
    q, k, v = (torch.randn(B, H, T, 64, requires_grad=True)
               for _ in range(3))
    g = log_gate(B, H, T).requires_grad_()
    o = fox(q, k, v, g)

    def t(x):
        return x.detach().double().transpose(1, 2)

    want = ref_attention(t(q), t(k), t(v), g=g.detach().double()
                         .transpose(1, 2)).transpose(1, 2)
    err = rel_rms(o, want)
    print(f"torch compile(examples/fox.mlir): forward relative RMS error "
          f"{err:.3e}")
    check(err <= 1e-5, f"compile fox: error {err:.3e}")
    o.sum().backward()
    leaves = [x.detach().double().requires_grad_() for x in (q, k, v, g)]
    ref_attention(*(x.transpose(1, 2) for x in leaves[:3]),
                  g=leaves[3].transpose(1, 2)).sum().backward()
    for n, a, b in zip("qkvg", (q, k, v, g), leaves):
        err = rel_rms(a.grad, b.grad)
        print(f"torch compile(examples/fox.mlir): d{n} relative RMS error "
              f"{err:.3e}")
        check(err <= 1e-5, f"compile fox: d{n} error {err:.3e}")
    # A program with an integer argument (RoPE positions): no gradient.
    t32 = "tensor<?x?x?x16xf32>"
    rope = at.compile(
        f"func.func @main(%q: {t32}, %k: {t32}, %v: {t32}, "
        f"%pos: tensor<?xi64>) -> {t32} {{\n"
        f"  %qr = attn.rope %q positions(%pos) theta 1.0e+04 : {t32}, "
        "tensor<?xi64>\n"
        f"  %kr = attn.rope %k positions(%pos) theta 1.0e+04 : {t32}, "
        "tensor<?xi64>\n"
        f"  %o = attn.attention %qr, %kr, %v : ({t32}, {t32}, {t32}) -> "
        f"{t32}\n  return %o : {t32}\n}}\n")
    q, k, v = (torch.randn(1, 2, 7, 16, requires_grad=True)
               for _ in range(3))
    o = rope(q, k, v, torch.arange(7))
    o.sum().backward()
    want = ref_attention(*(x.detach().double().transpose(1, 2)
                           for x in (q, k, v)), rope_theta=1e4)
    err = rel_rms(o.transpose(1, 2), want)
    print(f"torch compile(rope with positions): forward relative RMS error "
          f"{err:.3e}")
    check(err <= 1e-5, f"compile rope: error {err:.3e}")
    check(q.grad is not None and torch.isfinite(q.grad).all(),
          "compile rope: dq")


# --------------------------------------------------------------------------
# torch.library.opcheck on the custom ops; torch.compile fullgraph.


def check_opcheck():
    B, T, H, D = 1, 6, 2, 16
    q, k, v = acts(B, T, H, H, D)
    w, beta = path_wb(B, T, H, D)
    g = log_gate(B, T, H)
    bhtd = [x.transpose(1, 2) for x in (q, k, v, w, beta, g)]
    q, k, v, w, beta, g = bhtd
    mta = mta_pieces(H, D)
    mta_types = [("kq_conv_pre", "tensor<?x3x5xf32>"),
                 ("head_mix_pre", "tensor<?x?xf32>"),
                 ("kq_conv_post", "tensor<?x3x5xf32>"),
                 ("head_mix_post", "tensor<?x?xf32>"),
                 ("norm", f"tensor<{D}xf32>"),
                 ("norm_gate_w", f"tensor<{D}xf32>"),
                 ("norm_gate_b", "tensor<1xf32>")]
    programs = {
        "plain": (at._attention_program("f32", D, D), [q, k, v]),
        "rope": (at._attention_program("f32", D, D,
                                       rope=(1e4, "half", None)),
                 [q, k, v]),
        "fox": (at._attention_program("f32", D, D, gate=True),
                [q, k, v, g]),
        "path-fox": (at._attention_program("f32", D, D, path=True,
                                           gate=True, gate_scaled=True),
                     [q, k, v, w, beta, g]),
        "mta": (at._attention_program("f32", D, D, mta=tuple(mta_types),
                                      norm_eps=1e-5),
                [q, k, v] + [mta[n] for n, _ in mta_types]),
    }
    for name, (program, args) in programs.items():
        for what, op, call in opcheck_calls(name, program, args):
            try:
                torch.library.opcheck(op, call)
                print(f"torch opcheck {what}: passed")
            except Exception as e:  # report every failing op, then go on
                check(False, f"opcheck {what}: {type(e).__name__}: {e}")


def opcheck_calls(name, program, args):
    """(what, op, arguments) of torch.library.opcheck for each of the three
    custom ops on `program`'s @main with `args` (attn's layout)."""
    fwd = torch.ops.attn.forward.default
    train = torch.ops.attn.forward_train.default
    bwd = torch.ops.attn.backward.default
    outputs = train(program, "main", args, False)  # o, then the LSEs
    return [(f"{name} forward", fwd, (program, "main", args, True)),
            (f"{name} forward_train", train,
             (program, "main", [a.clone().requires_grad_() for a in args],
              True)),
            (f"{name} backward", bwd,
             (program, "main", args, outputs, torch.randn_like(outputs[0])))]


def load_char_lm():
    """examples/torch/char_lm.py as a module (its layers)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "examples", "torch", "char_lm.py")
    spec = importlib.util.spec_from_file_location("char_lm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TinyPathFox(load_char_lm().PathFoxAttention):
    """The example's PaTH-FoX layer (fla's w, beta and g from its
    projections), adding FoX attention on the same inputs."""

    def __init__(self, d_model=32, heads=2):
        super().__init__(d_model, heads)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v, w, beta, g = self.inputs(x)
        o = at.path_attention(q, k, v, w, beta, g)
        o = o + at.forgetting_attention(q, k, v, g)
        return self.out(o.reshape(B, T, -1))


def check_torch_compile():
    model = TinyPathFox()
    x = torch.randn(2, 10, 32)
    eager = model(x)
    eager.square().sum().backward()
    want = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    backend = os.environ.get("ATTN_TORCH_COMPILE_BACKEND", "inductor")
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    t0 = time.perf_counter()
    got = compiled(x)
    got.square().sum().backward()
    took = time.perf_counter() - t0
    err = rel_rms(got, eager)
    print(f"torch.compile(fullgraph=True, backend={backend}) PaTH-FoX + FoX "
          f"layer: forward relative RMS error vs eager {err:.3e} "
          f"(first call with compilation {took:.1f} s)")
    check(err <= 1e-5, f"torch.compile forward error {err:.3e}")
    for (n, p), w in zip(model.named_parameters(), want):
        err = rel_rms(p.grad, w)
        check(err <= 1e-5, f"torch.compile d{n} error {err:.3e}")
    # Another length: dynamic shapes, no graph break, no error.
    x2 = torch.randn(2, 7, 32)
    err = rel_rms(compiled(x2), model(x2))
    check(err <= 1e-5, f"torch.compile T=7 error {err:.3e}")


def check_fla_names():
    """parallel_path_attn and parallel_forgetting_attn: fla's names and
    return values ((o, None) for PaTH) over the same ops."""
    B, T, H, D = 2, 7, 2, 16
    q, k, v = acts(B, T, H, H, D)
    w, beta = path_wb(B, T, H, D)
    g = log_gate(B, T, H)
    got = at.parallel_path_attn(q=q, k=k, v=v, w=w, beta=beta, g=g)
    check(isinstance(got, tuple) and len(got) == 2 and got[1] is None,
          "parallel_path_attn: (o, None) expected")
    check(torch.equal(got[0], at.path_attention(q, k, v, w, beta, g)),
          "parallel_path_attn: o differs from path_attention's")
    check(torch.equal(at.parallel_forgetting_attn(q, k, v, g, None, 3),
                      at.forgetting_attention(q, k, v, g, window_size=3)),
          "parallel_forgetting_attn differs from forgetting_attention")


def check_gate_dtype():
    """FoX's g in bf16, as fla takes it: summed in f32, the same output as
    the f32 copy of g, and a bf16 gradient."""
    q, k, v = acts(1, 9, 2, 2, 16)
    g = log_gate(1, 9, 2).bfloat16().requires_grad_()
    o = at.forgetting_attention(q, k, v, g)
    # (o came from the training forward, want from the inference kernel.)
    want = at.forgetting_attention(q, k, v, g.detach().float())
    err = rel_rms(o, want)
    check(err <= 1e-6, f"bf16 g: output differs from f32 g's by {err:.3e}")
    o.sum().backward()
    check(g.grad is not None and g.grad.dtype == torch.bfloat16,
          f"bf16 g: gradient {None if g.grad is None else g.grad.dtype}")


# --------------------------------------------------------------------------
# Errors.


def check_errors():
    B, T, H, D = 1, 5, 2, 16
    q, k, v = acts(B, T, H, H, D)
    g = log_gate(B, T, H)
    w, beta = path_wb(B, T, H, D)

    def raises(fn, kind, needle):
        try:
            fn()
        except attn.Error as e:
            check(isinstance(e, kind), f"'{e}' is {type(e).__name__}, not "
                  f"{kind.__name__}")
            check(needle in str(e), f"'{needle}' not in '{e}'")
            return
        except Exception as e:
            check(False, f"{type(e).__name__} instead of attn.Error for "
                  f"'{needle}': {e}")
            return
        check(False, f"no attn.Error for '{needle}'")

    raises(lambda: at.attention(q.double(), k.double(), v.double()),
           TypeError, "q is float64")
    raises(lambda: at.attention(q, k.half(), v), TypeError,
           "one dtype expected")
    raises(lambda: at.attention(q, k.to("meta"), v), ValueError,
           "all on one device expected")
    raises(lambda: at.attention(q[0], k, v), ValueError,
           "q has shape (5, 2, 16)")
    raises(lambda: at.attention(q, k[:, :4], v), ValueError,
           "k [B, T, H, D]")
    raises(lambda: at.attention(torch.randn(1, 5, 3, D), k, v), ValueError,
           "HQ a multiple of H")
    raises(lambda: at.attention(q, k, v, rope_style="x"), ValueError,
           "rope_style")
    raises(lambda: at.forgetting_attention(q, k, v, g.int()), TypeError,
           "g is int32")
    raises(lambda: at.forgetting_attention(q, k, v, g[:, :4]), ValueError,
           "g has shape (1, 4, 2)")
    raises(lambda: at.forgetting_attention(
        q, k, v, g, cu_seqlens=torch.tensor([0, 2, 4], dtype=torch.int32)),
        attn.Error, "the last offset must be the sequence length 5")
    raises(lambda: at.forgetting_attention(
        q, k, v, g, cu_seqlens=torch.tensor([0, 3, 2, 5], dtype=torch.int32)),
        attn.Error, "never decrease")
    raises(lambda: at.forgetting_attention(
        q, k, v, g, cu_seqlens=torch.tensor([0, 2**33, 5])),
        ValueError, "cu_seqlens holds offsets outside [0, 5]")
    raises(lambda: at.forgetting_attention(
        q, k, v, g, cu_seqlens=torch.tensor([0, 2, 5.0])),
        TypeError, "cu_seqlens is float32")
    raises(lambda: at.parallel_path_attn(q, k, v, w, beta, use_cache=True),
           ValueError, "use_cache")
    raises(lambda: at.path_attention(q, k, v, w.half(), beta), TypeError,
           "w is float16")
    raises(lambda: at.path_attention(q, k, v, w[..., :8], beta), ValueError,
           "w has shape")
    raises(lambda: at.path_attention(q, k, v, w, beta[..., :1]), ValueError,
           "beta has shape")
    raises(lambda: at.path_attention(q, k, v, w, beta * 2 + 0.5), attn.Error,
           "beta")
    raises(lambda: at.mta_attention(
        q, k, v, kq_conv_pre=torch.randn(H, 3, 4)), ValueError, "c_k odd")
    raises(lambda: at.mta_attention(q, k, v, head_mix_pre=torch.randn(H, 3)),
           ValueError, "c_h dividing")
    raises(lambda: at.mta_attention(q, k, v, norm=torch.randn(D),
                                    norm_gate_w=torch.randn(D)),
           ValueError, "go together")
    raises(lambda: at.attention(q, k, "v"), TypeError, "v is a str")
    fox = at.compile(at._attention_program("f32", D, D, gate=True))
    raises(lambda: fox(q, k, v), ValueError, "takes 4 arguments, got 3")
    raises(lambda: fox(*(x.transpose(1, 2) for x in (q, k, v)),
                       g.transpose(1, 2).double()),
           attn.Error, "element type f64")
    raises(lambda: at.compile("func.func @main("), attn.Error,
           "cannot parse")


# --------------------------------------------------------------------------
# pip install python/: the package with libattn.so bundled, imported with
# neither ATTN_LIBRARY nor the source tree on the path.


def check_pip_install():
    lib = os.environ.get("ATTN_LIBRARY")
    if not lib:
        print("pip install python/: skipped (no ATTN_LIBRARY to bundle)")
        return
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "..", "python")
    with tempfile.TemporaryDirectory() as tmp:
        # A copy: pip builds a local directory in place.
        shutil.copytree(src, os.path.join(tmp, "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                      "__pycache__"))
        pip = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps",
             "--no-build-isolation", "--disable-pip-version-check",
             "--target", os.path.join(tmp, "site"),
             os.path.join(tmp, "python")],
            capture_output=True, text=True)
        check(pip.returncode == 0, f"pip install python/: {pip.stderr}")
        if pip.returncode:
            return
        env = {k: v for k, v in os.environ.items()
               if k not in ("ATTN_LIBRARY", "PYTHONPATH")}
        env["PYTHONPATH"] = os.path.join(tmp, "site")
        code = ("import attn, attn.torch as at, torch\n"
                "print(attn._find_library())\n"
                "q = torch.randn(1, 4, 2, 16)\n"
                "print(at.attention(q, q, q).shape)\n")
        run = subprocess.run([sys.executable, "-c", code], env=env,
                             capture_output=True, text=True, cwd=tmp)
        want = os.path.join(tmp, "site", "attn", "libattn.so")
        ok = run.returncode == 0 and run.stdout.split("\n")[:2] == [
            want, "torch.Size([1, 4, 2, 16])"]
        print("pip install python/: " + ("libattn.so bundled, attn.torch "
                                         "runs" if ok else "FAILED"))
        check(ok, f"pip install python/: {run.stdout} {run.stderr}")


def check_import_order():
    """An attn kernel compiled before attn.torch is imported: a clear
    ImportError, not the segfault Triton's load would be (attn/torch.py,
    _load_triton_first)."""
    code = ("import attn\n"
            "attn.Engine('cpu').compile(open('examples/fox.mlir').read())\n"
            "try:\n"
            "    import attn.torch\n"
            "except ImportError as e:\n"
            "    print('ImportError:', e)\n")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..")
    run = subprocess.run([sys.executable, "-c", code], cwd=root,
                         capture_output=True, text=True)
    ok = run.returncode == 0 and "must be imported before" in run.stdout
    print("attn.torch imported after an attn compile: " +
          ("ImportError with a message" if ok else "FAILED"))
    check(ok, f"import order: status {run.returncode}, {run.stdout} "
          f"{run.stderr[-2000:]}")


def check_char_lm():
    """examples/torch/char_lm.py, 3 training steps of the PaTH-FoX LM: the
    losses finite and falling."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..")
    run = subprocess.run([sys.executable,
                          os.path.join(root, "examples", "torch",
                                       "char_lm.py"),
                          "--steps", "3", "--check"],
                         capture_output=True, text=True)
    print("examples/torch/char_lm.py --steps 3: " +
          run.stdout.strip().replace("\n", "; "))
    check(run.returncode == 0, f"char_lm.py: status {run.returncode}, "
          f"{run.stderr[-2000:]}")


def main():
    seed = int(os.environ.get("ATTN_SEED", time.time_ns() % 2**32))
    print("seed", seed)
    torch.manual_seed(seed)
    print(f"torch {torch.__version__}")
    for case in cases():
        run_case(*case)
    check_compile()
    check_fla_names()
    check_gate_dtype()
    check_errors()
    check_opcheck()
    check_torch_compile()
    check_pip_install()
    check_import_order()
    check_char_lm()
    if failures:
        print(f"{len(failures)} checks failed (seed {seed})",
              file=sys.stderr)
        return 1
    print("all attn.torch checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
