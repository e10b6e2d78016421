#!/usr/bin/env python3
"""fp64 check of MTA's fused backward as docs/mta-backward.md derives it.

The forward is attn.attention with MTA pieces exactly as the ops define it
(dialect/include/attn/Dialect/AttnOps.td, reference/Oracle.cpp): RoPE,
scores (scale, FoX gate, causal mask, T <= S, cu_seqlens), kq_conv pre
(Mask_0 on each source, the output row's sequence start bounding the source
keys), head_mix pre, softmax, kq_conv post, head_mix post, weighted_sum
(GQA), head_norm (gamma, sigmoid gate). Two backwards are compared:

  - the dense VJP: every op's adjoint in reverse on materialised T x S maps,
    the formulas of reference/OracleGrad.cpp (attentionGrad);
  - the tiled algorithm of the page: query tiles of BM rows and key tiles
    of BN keys, nothing T x S kept, each tile's maps recomputed from q, k,
    v, the saved LSE and the row terms, with the halos the page states:
      sweep 0 (norm only): O recomputed as the forward's output pass, the
        norm's adjoint -> dO', per-program partials of dgamma and the gate;
      sweep R (post pieces only): D_r = sum_j P[r, j] dP[r, j];
      sweep Q: dS on each tile from dC on the rows below, dQ, FoX row sums,
        per-program partials of dtheta_pre and dW_pre;
      sweep K: dS and P3 on each tile, dK, dV, FoX column sums, per-program
        partials of dtheta_post and dW_post;
      the partials summed in program order (the deterministic second stage).

Checks: tiled vs dense elementwise; both vs central finite differences of
the forward along random directions, and elementwise at tiny sizes; identity
kernels and mixing give plain attention's gradients; dO of rows < t0 leaves
dq, dk, dv of positions >= t0 bitwise unchanged; a head permutation permutes
the gradients.
Usage: python3 reference/derivations/mta_backward_check.py [--quick]
"""

import sys
import time
from math import gcd

import numpy as np

NEG = -np.inf
ARGS = ("q", "k", "v", "g", "theta_pre", "w_pre", "theta_post", "w_post",
        "gamma", "gate_w", "gate_b")


def lcm(a, b):
    return a * b // gcd(a, b)


# --------------------------------------------------------------------------
# Programs and their inputs.


class Cfg:
    def __init__(self, T, S=None, B=1, Hq=4, Hk=None, D=4, Dv=3, pre=None,
                 mix_pre=None, post=None, mix_post=None, norm=False,
                 gate=False, fox=False, scaled=False, rope=False, cu=None,
                 eps=1e-5):
        self.T, self.S = T, T if S is None else S
        self.B, self.Hq, self.Hk = B, Hq, Hq if Hk is None else Hk
        self.D, self.Dv = D, Dv
        self.pre, self.mix_pre, self.post, self.mix_post = pre, mix_pre, post, mix_post
        self.norm, self.gate, self.fox, self.scaled, self.rope = norm, gate, fox, scaled, rope
        self.cu, self.eps = cu, eps
        self.scale = 1 / np.sqrt(D)
        self.gm = self.scale if scaled else 1.0          # FoX's gamma
        self.off = self.S - self.T
        self.hm = np.arange(Hq) // (Hq // self.Hk)       # query head -> KV head
        # The first key each row sees (its packed sequence's start), and the
        # end of each key's sequence; attn.kq_conv needs T == S when packed.
        self.start = np.zeros(self.T, dtype=int)
        self.seq_end = np.full(self.S, self.S)
        if cu is not None:
            assert self.T == self.S
            for n in range(len(cu) - 1):
                self.start[cu[n]:cu[n + 1]] = cu[n]
                self.seq_end[cu[n]:cu[n + 1]] = cu[n + 1]
        self.p, self.c = (pre[0] - 1, (pre[1] - 1) // 2) if pre else (0, 0)
        self.pp, self.cp = (post[0] - 1, (post[1] - 1) // 2) if post else (0, 0)

    def vis(self, rows, cols):
        """Visible (row, key) cells: causal, in range, the row's sequence."""
        rin = (rows >= 0) & (rows < self.T)
        cin = (cols >= 0) & (cols < self.S)
        st = self.start[np.clip(rows, 0, self.T - 1)]
        return (rin[:, None] & cin[None, :] & (cols[None, :] <= rows[:, None] + self.off)
                & (cols[None, :] >= st[:, None]))

    def describe(self):
        parts = []
        if self.pre:
            parts.append(f"pre {self.pre[0]}x{self.pre[1]}")
        if self.mix_pre:
            parts.append(f"mix_pre c_h={self.mix_pre}")
        if self.post:
            parts.append(f"post {self.post[0]}x{self.post[1]}")
        if self.mix_post:
            parts.append(f"mix_post c_h={self.mix_post}")
        if self.norm:
            parts.append("norm+gate" if self.gate else "norm")
        if self.fox:
            parts.append("FoX scaled" if self.scaled else "FoX")
        if self.rope:
            parts.append("RoPE")
        if self.Hk != self.Hq:
            parts.append(f"GQA {self.Hq}:{self.Hk}")
        if self.cu is not None:
            parts.append(f"cu_seqlens {[int(v) for v in self.cu]}")
        if self.off:
            parts.append(f"S = T + {self.off}")
        return ", ".join(parts)


def make_inputs(cfg, rng, identity=False):
    B, Hq, Hk, T, S, D, Dv = cfg.B, cfg.Hq, cfg.Hk, cfg.T, cfg.S, cfg.D, cfg.Dv
    x = dict.fromkeys(ARGS)
    x["q"] = rng.standard_normal((B, Hq, T, D))
    x["k"] = rng.standard_normal((B, Hk, S, D))
    x["v"] = rng.standard_normal((B, Hk, S, Dv))
    if cfg.fox:
        x["g"] = np.log(rng.uniform(0.8, 1.0, (B, Hq, S)))

    def kernel(shape):
        cq, ck = shape
        th = np.zeros((Hq, cq, ck))
        th[:, cq - 1, (ck - 1) // 2] = 1.0
        if not identity:
            th += rng.standard_normal((Hq, cq, ck)) / np.sqrt(cq * ck)
        return th

    def mix(ch):
        w = np.zeros((Hq, ch))
        for h in range(Hq):
            w[h, h % ch] = 1.0
        if not identity:
            w += 0.5 * rng.standard_normal((Hq, ch)) / np.sqrt(ch)
        return w

    if cfg.pre:
        x["theta_pre"] = kernel(cfg.pre)
    if cfg.mix_pre:
        x["w_pre"] = mix(cfg.mix_pre)
    if cfg.post:
        x["theta_post"] = kernel(cfg.post)
    if cfg.mix_post:
        x["w_post"] = mix(cfg.mix_post)
    if cfg.norm:
        x["gamma"] = 1.0 + 0.3 * rng.standard_normal(Dv)
        if cfg.gate:
            x["gate_w"] = 0.5 * rng.standard_normal(Dv)
            x["gate_b"] = 0.3 * rng.standard_normal(1)
    return x


def mix_matrix(w, H):
    """[H, c_h] weights as the block-diagonal [H, H] map out = M @ in."""
    M = np.zeros((H, H))
    if w is None:
        return np.eye(H)
    ch = w.shape[1]
    for h in range(H):
        g0 = h // ch * ch
        M[h, g0:g0 + ch] = w[h]
    return M


# --------------------------------------------------------------------------
# RoPE (half style, rotary_dim = D).


def positions(cfg):
    if cfg.cu is None:
        return cfg.off + np.arange(cfg.T), np.arange(cfg.S)
    pos = np.arange(cfg.S) - np.repeat(cfg.cu[:-1], np.diff(cfg.cu))
    return pos, pos


def rotate(x, pos, sign, theta=10000.0):
    R = x.shape[-1]
    half = R // 2
    ang = sign * pos[:, None] * theta ** (-2.0 * np.arange(half) / R)[None, :]
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)


def rotated(cfg, x):
    if not cfg.rope:
        return x["q"], x["k"]
    qp, kp = positions(cfg)
    return rotate(x["q"], qp, 1), rotate(x["k"], kp, 1)


# --------------------------------------------------------------------------
# The forward, op by op on T x S maps (Oracle.cpp's loops, vectorised over
# cells; each tap of a convolution a shifted copy of the padded map).


def scores(cfg, qr, kr, g):
    rows, cols = np.arange(cfg.T), np.arange(cfg.S)
    s = cfg.scale * np.einsum("bhid,bhjd->bhij", qr, kr[:, cfg.hm])
    if g is not None:
        G = np.cumsum(g, axis=-1)
        s = s + cfg.gm * (G[:, :, cfg.off + rows][..., None] - G[:, :, None, :])
    return np.where(cfg.vis(rows, cols), s, NEG)


def conv_taps(cfg, th):
    """Per tap (a, b): the source mask of attn.kq_conv (source in range, on
    or left of its own diagonal, not before the *output* row's sequence
    start) as a [T, S] bool map, and the slice of the padded map it reads."""
    T, S, off = cfg.T, cfg.S, cfg.off
    cq, ck = th.shape[1:]
    p, c = cq - 1, (ck - 1) // 2
    rows, cols = np.arange(T), np.arange(S)
    for a in range(cq):
        for b in range(ck):
            i2, j2 = rows - p + a, cols - c + b
            m = ((i2 >= 0)[:, None] & ((j2 >= 0) & (j2 < S))[None, :]
                 & (j2[None, :] <= i2[:, None] + off) & (j2[None, :] >= cfg.start[:, None]))
            yield a, b, m, (Ellipsis, slice(a, a + T), slice(b, b + S))


def pad(cfg, x0, th):
    cq, ck = th.shape[1:]
    p, c = cq - 1, (ck - 1) // 2
    xp = np.zeros(x0.shape[:2] + (cfg.T + p, cfg.S + 2 * c))
    xp[..., p:, c:c + cfg.S] = x0
    return xp, p, c


def kq_conv(cfg, x, th, pre):
    xp, _, _ = pad(cfg, np.where(x == NEG, 0.0, x), th)
    out = np.zeros(x.shape)
    for a, b, m, sl in conv_taps(cfg, th):
        out += th[None, :, a, b, None, None] * np.where(m, xp[sl], 0.0)
    return np.where(cfg.vis(np.arange(cfg.T), np.arange(cfg.S)), out, NEG if pre else 0.0)


def head_mix(cfg, x, w, pre):
    out = np.einsum("hg,bgij->bhij", mix_matrix(w, cfg.Hq), np.where(x == NEG, 0.0, x))
    return np.where(cfg.vis(np.arange(cfg.T), np.arange(cfg.S)), out, NEG if pre else 0.0)


def softmax_lse(x):
    m = x.max(-1, keepdims=True)
    e = np.exp(x - m)
    l = e.sum(-1, keepdims=True)
    return e / l, (m + np.log(l))[..., 0]


def head_norm(o, gamma, gw, gb, eps):
    inv = 1 / np.sqrt((o * o).mean(-1, keepdims=True) + eps)
    y = o * inv * gamma
    if gw is not None:
        y = y * sigmoid(y @ gw + gb[0])[..., None]
    return y


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def forward(cfg, x):
    """out, lse, and the input of every step (the dense VJP's tape)."""
    tp = {}
    tp["qr"], tp["kr"] = rotated(cfg, x)
    s = tp["logits"] = scores(cfg, tp["qr"], tp["kr"], x["g"])
    if cfg.pre:
        s = kq_conv(cfg, s, x["theta_pre"], True)
    if cfg.mix_pre:
        tp["pre_mix_in"] = s
        s = head_mix(cfg, s, x["w_pre"], True)
    tp["softmax_in"] = s
    P, lse = softmax_lse(s)
    if cfg.post:
        tp["post_conv_in"] = P
        P = kq_conv(cfg, P, x["theta_post"], False)
    if cfg.mix_post:
        tp["post_mix_in"] = P
        P = head_mix(cfg, P, x["w_post"], False)
    tp["probs"] = P
    o = tp["o"] = np.einsum("bhij,bhjd->bhid", P, x["v"][:, cfg.hm])
    if cfg.norm:
        o = head_norm(o, x["gamma"], x["gate_w"], x["gate_b"], cfg.eps)
    return o, lse, tp


def loss(cfg, x, dO):
    return float((forward(cfg, x)[0] * dO).sum())


# --------------------------------------------------------------------------
# The dense VJP: each op's adjoint (OracleGrad.cpp) in reverse.


def head_norm_grad(dy, o, gamma, gw, gb, eps):
    Dv = o.shape[-1]
    inv = 1 / np.sqrt((o * o).mean(-1, keepdims=True) + eps)
    n = o * inv
    u = n * gamma
    du, dgw, dgb = dy, None, None
    if gw is not None:
        s = sigmoid(u @ gw + gb[0])[..., None]
        dz = (dy * u).sum(-1, keepdims=True) * s * (1 - s)
        dgb = np.array([dz.sum()])
        dgw = (dz * u).reshape(-1, Dv).sum(0)
        du = dy * s + dz * gw
    dgamma = (du * n).reshape(-1, Dv).sum(0)
    do = inv * du * gamma - inv ** 3 * o * (du * gamma * o).sum(-1, keepdims=True) / Dv
    return do, dgamma, dgw, dgb


def kq_conv_grad(cfg, dy, x, th):
    dyv = np.where(cfg.vis(np.arange(cfg.T), np.arange(cfg.S)), dy, 0.0)
    xp, p, c = pad(cfg, np.where(x == NEG, 0.0, x), th)
    dxp = np.zeros_like(xp)
    dth = np.zeros_like(th)
    for a, b, m, sl in conv_taps(cfg, th):
        dth[:, a, b] = (dyv * np.where(m, xp[sl], 0.0)).sum((0, 2, 3))
        dxp[sl] += th[None, :, a, b, None, None] * np.where(m, dyv, 0.0)
    dx = dxp[..., p:, c:c + cfg.S]
    return np.where(x == NEG, 0.0, dx), dth


def head_mix_grad(cfg, dy, x, w):
    dyv = np.where(cfg.vis(np.arange(cfg.T), np.arange(cfg.S)), dy, 0.0)
    x0 = np.where(x == NEG, 0.0, x)
    M = mix_matrix(w, cfg.Hq)
    dx = np.where(x == NEG, 0.0, np.einsum("hg,bhij->bgij", M, dyv))
    dM = np.einsum("bhij,bgij->hg", dyv, x0)
    return dx, block_to_w(dM, w.shape[1])


def block_to_w(dM, ch):
    H = dM.shape[0]
    return np.stack([dM[h, h // ch * ch:h // ch * ch + ch] for h in range(H)])


def dense_backward(cfg, x, dO):
    o, lse, tp = forward(cfg, x)
    gr = dict.fromkeys(ARGS)
    dx = dO
    if cfg.norm:
        dx, gr["gamma"], gr["gate_w"], gr["gate_b"] = head_norm_grad(
            dx, tp["o"], x["gamma"], x["gate_w"], x["gate_b"], cfg.eps)
    gr["v"] = np.zeros_like(x["v"])
    for h in range(cfg.Hq):
        gr["v"][:, cfg.hm[h]] += np.einsum("bij,bid->bjd", tp["probs"][:, h], dx[:, h])
    dx = np.einsum("bhid,bhjd->bhij", dx, x["v"][:, cfg.hm])
    if cfg.mix_post:
        dx, gr["w_post"] = head_mix_grad(cfg, dx, tp["post_mix_in"], x["w_post"])
    if cfg.post:
        dx, gr["theta_post"] = kq_conv_grad(cfg, dx, tp["post_conv_in"], x["theta_post"])
    y = softmax_lse(tp["softmax_in"])[0]
    dx = y * (dx - (y * dx).sum(-1, keepdims=True))
    if cfg.mix_pre:
        dx, gr["w_pre"] = head_mix_grad(cfg, dx, tp["pre_mix_in"], x["w_pre"])
    if cfg.pre:
        dx, gr["theta_pre"] = kq_conv_grad(cfg, dx, tp["logits"], x["theta_pre"])
    dS = np.where(cfg.vis(np.arange(cfg.T), np.arange(cfg.S)), dx, 0.0)
    dqr = cfg.scale * np.einsum("bhij,bhjd->bhid", dS, tp["kr"][:, cfg.hm])
    dkr = np.zeros_like(x["k"])
    for h in range(cfg.Hq):
        dkr[:, cfg.hm[h]] += cfg.scale * np.einsum("bij,bid->bjd", dS[:, h], tp["qr"][:, h])
    if cfg.fox:
        gr["g"] = fox_grad(cfg, dS.sum(-1), dS.sum(-2))
    gr["q"], gr["k"] = unrotate(cfg, dqr, dkr)
    return gr, o, lse


def fox_grad(cfg, R, C):
    """dg_t = gamma sum_{u >= t} (R_u - C_u), R at the query's position."""
    dG = -cfg.gm * C
    dG[..., cfg.off:] += cfg.gm * R
    return np.cumsum(dG[..., ::-1], axis=-1)[..., ::-1]


def unrotate(cfg, dqr, dkr):
    if not cfg.rope:
        return dqr, dkr
    qp, kp = positions(cfg)
    return rotate(dqr, qp, -1), rotate(dkr, kp, -1)


# --------------------------------------------------------------------------
# The tiled backward.


class Tiled:
    """One program = (batch, head block, tile); its tile maps are computed
    from q, k, v, lse, D and dO' only, on boxes of absolute (row, key)
    coordinates: rows [r0, r1) x keys [c0, c1)."""

    def __init__(self, cfg, x, out, lse, dO, BM, BN):
        self.cfg, self.x, self.BM, self.BN = cfg, x, BM, BN
        self.out, self.lse, self.dO = out, lse, dO
        self.qr, self.kr = rotated(cfg, x)
        self.G = None if x["g"] is None else np.cumsum(x["g"], axis=-1)
        self.Mpre = mix_matrix(x["w_pre"], cfg.Hq)
        self.Mpost = mix_matrix(x["w_post"], cfg.Hq)
        ch = [w.shape[1] for w in (x["w_pre"], x["w_post"]) if w is not None]
        self.Gm = lcm(*ch) if len(ch) == 2 else (ch[0] if ch else 1)
        self.Gk = lcm(self.Gm, cfg.Hq // cfg.Hk)

    # ---- boxes of the forward's maps

    def S0(self, b, hs, r0, r1, c0, c1):
        """Logits (scale, FoX) with Mask_0 on each source cell."""
        cfg = self.cfg
        rows, cols = np.arange(r0, r1), np.arange(c0, c1)
        rc, cc = np.clip(rows, 0, cfg.T - 1), np.clip(cols, 0, cfg.S - 1)
        s = cfg.scale * self.qr[b, hs][:, rc] @ self.kr[b, cfg.hm[hs]][:, cc].transpose(0, 2, 1)
        if self.G is not None:
            G = self.G[b, hs]
            s = s + cfg.gm * (G[:, cfg.off + rc][:, :, None] - G[:, cc][:, None, :])
        return np.where(cfg.vis(rows, cols), s, 0.0)

    def stencil(self, X, xr0, xc0, th, r0, r1, c0, c1):
        """sum_{a,b} th[a, b] X0[i - p + a, j - c + b] on [r0, r1) x [c0, c1)
        from the box X at (xr0, xc0); a source key before the output row's
        sequence start reads 0."""
        cfg = self.cfg
        cq, ck = th.shape[1:]
        p, c = cq - 1, (ck - 1) // 2
        rows, cols = np.arange(r0, r1), np.arange(c0, c1)
        st = cfg.start[np.clip(rows, 0, cfg.T - 1)]
        out = np.zeros((X.shape[0], r1 - r0, c1 - c0))
        for a in range(cq):
            rr = rows - p + a - xr0
            for b in range(ck):
                src = X[:, rr][:, :, cols - c + b - xc0]
                if cfg.cu is not None:
                    src = np.where((cols - c + b)[None, :] >= st[:, None], src, 0.0)
                out += th[:, a, b, None, None] * src
        return out

    def stencil_T(self, dY, yr0, yc0, th, r0, r1, c0, c1):
        """The transposed stencil onto source cells [r0, r1) x [c0, c1):
        sum_{a,b} th[a, b] dY[i' + p - a, j' + c - b] (output rows below,
        keys on both sides), then Mask_0 on the source."""
        cfg = self.cfg
        cq, ck = th.shape[1:]
        p, c = cq - 1, (ck - 1) // 2
        rows, cols = np.arange(r0, r1), np.arange(c0, c1)
        out = np.zeros((dY.shape[0], r1 - r0, c1 - c0))
        for a in range(cq):
            orow = rows + p - a
            st = cfg.start[np.clip(orow, 0, cfg.T - 1)]
            for b in range(ck):
                g = dY[:, orow - yr0][:, :, cols + c - b - yc0]
                if cfg.cu is not None:
                    g = np.where(cols[None, :] >= st[:, None], g, 0.0)
                out += th[:, a, b, None, None] * g
        return np.where(cfg.vis(rows, cols), out, 0.0)

    def stencil_grad(self, dY, X, xr0, xc0, th, r0, r1, c0, c1):
        """dtheta[a, b] of the cells [r0, r1) x [c0, c1) (dY on exactly
        them, zero where not visible): sum dY[i, j] X0[i - p + a, j - c + b]."""
        cfg = self.cfg
        cq, ck = th.shape[1:]
        p, c = cq - 1, (ck - 1) // 2
        rows, cols = np.arange(r0, r1), np.arange(c0, c1)
        st = cfg.start[np.clip(rows, 0, cfg.T - 1)]
        dth = np.zeros((X.shape[0], cq, ck))
        for a in range(cq):
            rr = rows - p + a - xr0
            for b in range(ck):
                src = X[:, rr][:, :, cols - c + b - xc0]
                if cfg.cu is not None:
                    src = np.where((cols - c + b)[None, :] >= st[:, None], src, 0.0)
                dth[:, a, b] = (dY * src).sum((1, 2))
        return dth

    def softmax_in(self, b, hs, r0, r1, c0, c1):
        """L (the softmax's input) on the box, with the pre convolution's
        halo: S0 on rows [r0 - p, r1) x keys [c0 - c, c1 + c). Returns L and
        (S0 box, C) for the parameter partials."""
        cfg, x = self.cfg, self.x
        p, c = cfg.p, cfg.c
        vis = cfg.vis(np.arange(r0, r1), np.arange(c0, c1))
        X = self.S0(b, hs, r0 - p, r1, c0 - c, c1 + c)
        if cfg.pre:
            C = np.where(vis, self.stencil(X, r0 - p, c0 - c, x["theta_pre"][hs],
                                           r0, r1, c0, c1), 0.0)
        else:
            C = X
        L = np.einsum("hg,gij->hij", self.Mpre[np.ix_(hs, hs)], C) if cfg.mix_pre else C
        return np.where(vis, L, NEG), X, C

    def probs(self, b, hs, L, r0, r1):
        rows = np.clip(np.arange(r0, r1), 0, self.cfg.T - 1)
        return np.exp(L - self.lse[b, hs][:, rows][:, :, None])

    def dP3(self, b, hs, r0, r1, c0, c1):
        """dO' . v on the box, visible cells only."""
        cfg = self.cfg
        rows, cols = np.arange(r0, r1), np.arange(c0, c1)
        rc, cc = np.clip(rows, 0, cfg.T - 1), np.clip(cols, 0, cfg.S - 1)
        d = self.dOp[b, hs][:, rc] @ self.x["v"][b, cfg.hm[hs]][:, cc].transpose(0, 2, 1)
        return np.where(cfg.vis(rows, cols), d, 0.0)

    def dprobs(self, b, hs, r0, r1, c0, c1):
        """dP (the softmax output's cotangent) on source cells [r0, r1) x
        [c0, c1): dP3 = dO' v^T on rows [r0, r1 + p') x keys
        [c0 - c', c1 + c'), the post mix transposed, the post stencil
        transposed. Returns dP and the (dP3, dP2) box at (r0, c0 - c')."""
        cfg, x = self.cfg, self.x
        pp, cp = cfg.pp, cfg.cp
        d3 = self.dP3(b, hs, r0, r1 + pp, c0 - cp, c1 + cp)
        d2 = np.einsum("hg,hij->gij", self.Mpost[np.ix_(hs, hs)], d3) if cfg.mix_post else d3
        if cfg.post:
            dP = self.stencil_T(d2, r0, c0 - cp, x["theta_post"][hs], r0, r1, c0, c1)
        else:
            dP = d2
        return dP, d3, d2

    # ---- the sweeps

    def q_tiles(self):
        return range(0, self.cfg.T, self.BM)

    def key_tiles_of(self, i0):
        """Key tiles a query tile walks: from its first row's sequence start
        to its last row's diagonal."""
        cfg = self.cfg
        i1 = min(i0 + self.BM, cfg.T)
        lo = cfg.start[i0] // self.BN * self.BN
        return range(lo, min(i1 - 1 + cfg.off, cfg.S - 1) + 1, self.BN)

    def query_tiles_of(self, j0):
        """Query tiles that see key tile j0: from the diagonal to the end of
        its last key's sequence."""
        cfg = self.cfg
        j1 = min(j0 + self.BN, cfg.S)
        first = max(j0 - cfg.off, 0) // self.BM * self.BM
        end = min(cfg.seq_end[j1 - 1] - cfg.off, cfg.T)
        return range(first, end, self.BM)

    def blocks(self, size):
        return [np.arange(h, h + size) for h in range(0, self.cfg.Hq, size)]

    def P3_tile(self, b, hs, i0, i1, j0, j1, U=None):
        """P, P2, P3 of the forward on the tile; P with the post halo
        (rows [i0 - p', i1) x keys [j0 - c', j1 + c')), from U = (L, r0, c0)
        when a larger box of L is at hand."""
        cfg, x = self.cfg, self.x
        pp, cp = cfg.pp, cfg.cp
        if U is None:
            L, _, _ = self.softmax_in(b, hs, i0 - pp, i1, j0 - cp, j1 + cp)
        else:
            Lu, ur0, uc0 = U
            L = Lu[:, i0 - pp - ur0:i1 - ur0, j0 - cp - uc0:j1 + cp - uc0]
        P = self.probs(b, hs, L, i0 - pp, i1)
        vis = cfg.vis(np.arange(i0, i1), np.arange(j0, j1))
        if cfg.post:
            P2 = np.where(vis, self.stencil(P, i0 - pp, j0 - cp, x["theta_post"][hs],
                                            i0, i1, j0, j1), 0.0)
        else:
            P2 = P[:, pp:, cp:cp + j1 - j0]
        P3 = np.where(vis, np.einsum("hg,gij->hij", self.Mpost[np.ix_(hs, hs)], P2), 0.0) \
            if cfg.mix_post else P2
        return P, P2, P3

    def sweep0(self):
        """The norm: O recomputed (the forward's output pass, a plain sum
        with the saved LSE), then its adjoint per row -> dO'."""
        cfg, x = self.cfg, self.x
        self.dOp = np.zeros_like(self.dO)
        self.O = np.zeros_like(self.dO)
        parts = []
        for b in range(cfg.B):
            for hs in self.blocks(self.Gm):
                for i0 in self.q_tiles():
                    i1 = min(i0 + self.BM, cfg.T)
                    O = np.zeros((len(hs), i1 - i0, cfg.Dv))
                    for j0 in self.key_tiles_of(i0):
                        j1 = min(j0 + self.BN, cfg.S)
                        P3 = self.P3_tile(b, hs, i0, i1, j0, j1)[2]
                        O += P3 @ x["v"][b, cfg.hm[hs]][:, j0:j1]
                    do, dga, dgw, dgb = head_norm_grad(self.dO[b, hs, i0:i1], O, x["gamma"],
                                                       x["gate_w"], x["gate_b"], cfg.eps)
                    self.O[b, hs, i0:i1] = O
                    self.dOp[b, hs, i0:i1] = do
                    parts.append((dga, dgw, dgb))
        return parts

    def sweepR(self):
        """D_r = sum_j P[r, j] dP[r, j], per query tile."""
        cfg = self.cfg
        D = np.zeros((cfg.B, cfg.Hq, cfg.T))
        for b in range(cfg.B):
            for hs in self.blocks(self.Gm):
                for i0 in self.q_tiles():
                    i1 = min(i0 + self.BM, cfg.T)
                    acc = np.zeros((len(hs), i1 - i0))
                    for j0 in self.key_tiles_of(i0):
                        j1 = min(j0 + self.BN, cfg.S)
                        L, _, _ = self.softmax_in(b, hs, i0, i1, j0, j1)
                        P = self.probs(b, hs, L, i0, i1)
                        dP = self.dprobs(b, hs, i0, i1, j0, j1)[0]
                        acc += (P * dP).sum(-1)
                    D[b, hs, i0:i1] = acc
        return D

    def dS_tile(self, b, hs, i0, i1, j0, j1, U):
        """dS on the tile [i0, i1) x [j0, j1): dL, dC on the box E = rows
        [i0, i1 + p) x keys [j0 - c, j1 + c) (the pre stencil's transpose
        reaches p rows below and c keys each side), from L on U."""
        cfg = self.cfg
        p, c = cfg.p, cfg.c
        Lu, ur0, uc0 = U
        er0, er1, ec0, ec1 = i0, i1 + p, j0 - c, j1 + c
        L = Lu[:, er0 - ur0:er1 - ur0, ec0 - uc0:ec1 - uc0]
        P = self.probs(b, hs, L, er0, er1)
        dP, d3, d2 = self.dprobs(b, hs, er0, er1, ec0, ec1)
        rows = np.clip(np.arange(er0, er1), 0, cfg.T - 1)
        dL = P * (dP - self.D[b, hs][:, rows][:, :, None])
        dC = np.where(cfg.vis(np.arange(er0, er1), np.arange(ec0, ec1)),
                      np.einsum("hg,hij->gij", self.Mpre[np.ix_(hs, hs)], dL), 0.0) \
            if cfg.mix_pre else dL
        if cfg.pre:
            dS = self.stencil_T(dC, er0, ec0, self.x["theta_pre"][hs], i0, i1, j0, j1)
        else:
            dS = dC
        return dS, dL, dC, d3, d2

    def sweepQ(self):
        cfg, x = self.cfg, self.x
        p, c = cfg.p, cfg.c
        dq = np.zeros_like(self.qr)
        R = np.zeros((cfg.B, cfg.Hq, cfg.T))
        parts = []
        for b in range(cfg.B):
            for hs in self.blocks(self.Gm):
                for i0 in self.q_tiles():
                    i1 = min(i0 + self.BM, cfg.T)
                    acc = np.zeros((len(hs), i1 - i0, cfg.D))
                    dth = np.zeros((len(hs),) + x["theta_pre"].shape[1:]) if cfg.pre else None
                    dM = np.zeros((len(hs), len(hs))) if cfg.mix_pre else None
                    for j0 in self.key_tiles_of(i0):
                        j1 = min(j0 + self.BN, cfg.S)
                        # L on rows [i0, i1 + p) x keys [j0 - c, j1 + c); S0 from
                        # rows [i0 - p, i1 + p) x keys [j0 - 2c, j1 + 2c).
                        L, X, C = self.softmax_in(b, hs, i0, i1 + p, j0 - c, j1 + c)
                        dS, dL, dC, _, _ = self.dS_tile(b, hs, i0, i1, j0, j1, (L, i0, j0 - c))
                        acc += cfg.scale * dS @ self.kr[b, cfg.hm[hs]][:, j0:j1]
                        R[b, hs, i0:i1] += dS.sum(-1)
                        # Owned output cells: the tile itself.
                        own = (slice(None), slice(0, i1 - i0), slice(c, c + j1 - j0))
                        if cfg.pre:
                            dth += self.stencil_grad(dC[own], X, i0 - p, j0 - 2 * c,
                                                     x["theta_pre"][hs], i0, i1, j0, j1)
                        if cfg.mix_pre:
                            dM += np.einsum("hij,gij->hg", dL[own], C[own])
                    dq[b, hs, i0:i1] = acc
                    parts.append((hs, dth, dM))
        return dq, R, parts

    def sweepK(self):
        cfg, x = self.cfg, self.x
        p, c, pp, cp = cfg.p, cfg.c, cfg.pp, cfg.cp
        cu = max(c, cp)
        dk = np.zeros_like(self.kr)
        dv = np.zeros_like(x["v"])
        C = np.zeros((cfg.B, cfg.Hq, cfg.S))
        parts = []
        for b in range(cfg.B):
            for hs in self.blocks(self.Gk):
                kvs = np.unique(cfg.hm[hs])
                for j0 in range(0, cfg.S, self.BN):
                    j1 = min(j0 + self.BN, cfg.S)
                    accK = np.zeros((len(kvs), j1 - j0, cfg.D))
                    accV = np.zeros((len(kvs), j1 - j0, cfg.Dv))
                    dth = np.zeros((len(hs),) + x["theta_post"].shape[1:]) if cfg.post else None
                    dM = np.zeros((len(hs), len(hs))) if cfg.mix_post else None
                    for i0 in self.query_tiles_of(j0):
                        i1 = min(i0 + self.BM, cfg.T)
                        # One box of L for both sides: rows [i0 - p', i1 + p) x
                        # keys [j0 - max(c, c'), j1 + max(c, c')).
                        U = (self.softmax_in(b, hs, i0 - pp, i1 + p, j0 - cu, j1 + cu)[0],
                             i0 - pp, j0 - cu)
                        dS, _, _, d3, d2 = self.dS_tile(b, hs, i0, i1, j0, j1, U)
                        P, P2, P3 = self.P3_tile(b, hs, i0, i1, j0, j1, U)
                        C[b, hs, j0:j1] += dS.sum(-2)
                        for n, kh in enumerate(kvs):
                            sel = cfg.hm[hs] == kh
                            accK[n] += cfg.scale * np.einsum("hij,hid->jd", dS[sel],
                                                             self.qr[b, hs[sel], i0:i1])
                            accV[n] += np.einsum("hij,hid->jd", P3[sel],
                                                 self.dOp[b, hs[sel], i0:i1])
                        # Owned output cells: the tile; dP3, dP2 boxes start
                        # at (i0, j0 - c - c').
                        own = (slice(None), slice(0, i1 - i0), slice(c + cp, c + cp + j1 - j0))
                        if cfg.post:
                            dth += self.stencil_grad(d2[own], P, i0 - pp, j0 - cp,
                                                     x["theta_post"][hs], i0, i1, j0, j1)
                        if cfg.mix_post:
                            dM += np.einsum("hij,gij->hg", d3[own], P2)
                    dk[b, kvs, j0:j1] = accK
                    dv[b, kvs, j0:j1] = accV
                    parts.append((hs, dth, dM))
        return dk, dv, C, parts

    def run(self):
        cfg, x = self.cfg, self.x
        gr = dict.fromkeys(ARGS)
        if cfg.norm:
            nparts = self.sweep0()
            for name, n in (("gamma", 0), ("gate_w", 1), ("gate_b", 2)):
                if x[name] is not None:
                    gr[name] = second_stage([part[n] for part in nparts])
        else:
            self.dOp, self.O = self.dO, self.out
        if cfg.post or cfg.mix_post:
            self.D = self.sweepR()
        else:
            self.D = (self.dOp * self.O).sum(-1)        # grad_delta
        dqr, R, qparts = self.sweepQ()
        dkr, gr["v"], C, kparts = self.sweepK()
        gr["q"], gr["k"] = unrotate(cfg, dqr, dkr)
        if cfg.fox:
            gr["g"] = fox_grad(cfg, R, C)
        for name, parts, n, w in (("theta_pre", qparts, 1, None), ("w_pre", qparts, 2, "w_pre"),
                                  ("theta_post", kparts, 1, None), ("w_post", kparts, 2, "w_post")):
            if x[name] is None:
                continue
            full = []
            for hs, dth, dM in parts:
                if w is None:
                    f = np.zeros_like(x[name])
                    f[hs] = dth
                else:
                    F = np.zeros((cfg.Hq, cfg.Hq))
                    F[np.ix_(hs, hs)] = dM
                    f = block_to_w(F, x[w].shape[1])
                full.append(f)
            gr[name] = second_stage(full)
        return gr


def second_stage(parts):
    """The deterministic sum of per-program partials: program order."""
    total = np.zeros_like(parts[0])
    for part in parts:
        total = total + part
    return total


def tiled_backward(cfg, x, dO, BM=8, BN=8):
    out, lse, _ = forward(cfg, x)
    t = Tiled(cfg, x, out, lse, dO, BM, BN)
    return t.run(), t


# --------------------------------------------------------------------------
# Comparisons.


def rel(a, b):
    """max |a - b| / max |b|; absolute where b is zero in exact arithmetic
    (dq at T = 1: one key, dS = P (dP - D) = 0 up to rounding)."""
    m = np.abs(b).max()
    return np.abs(a - b).max() / (m if m > 1e-12 else 1.0)


def present(x):
    return [n for n in ARGS if x[n] is not None]


def directional_fd(cfg, x, gr, dO, rng, eps=1e-4):
    """|fd - <grad, u>| / max(|grad| |u|, 1) per argument, u ~ N(0, 1);
    central differences at eps and eps/2 combined (Richardson), so that the
    truncation error is O(eps^4): the mixing weights and the post kernels
    have large third derivatives along a random direction."""
    def central(n, u, e):
        xp = dict(x); xp[n] = x[n] + e * u
        xm = dict(x); xm[n] = x[n] - e * u
        return (loss(cfg, xp, dO) - loss(cfg, xm, dO)) / (2 * e)
    worst = {}
    for n in present(x):
        u = rng.standard_normal(x[n].shape)
        fd = (4 * central(n, u, eps / 2) - central(n, u, eps)) / 3
        an = float((gr[n] * u).sum())
        worst[n] = abs(fd - an) / max(np.linalg.norm(gr[n]) * np.linalg.norm(u), 1.0)
    return worst


def elementwise_fd(cfg, x, gr, dO, eps=1e-6):
    worst = 0.0
    for n in present(x):
        fd = np.zeros_like(x[n])
        for idx in np.ndindex(x[n].shape):
            xp = dict(x); xp[n] = x[n].copy(); xp[n][idx] += eps
            xm = dict(x); xm[n] = x[n].copy(); xm[n][idx] -= eps
            fd[idx] = (loss(cfg, xp, dO) - loss(cfg, xm, dO)) / (2 * eps)
        worst = max(worst, np.abs(fd - gr[n]).max() / max(np.abs(fd).max(), 1.0))
    return worst


SHORT = {"q": "dq", "k": "dk", "v": "dv", "g": "dg", "theta_pre": "dth_pre",
         "w_pre": "dW_pre", "theta_post": "dth_post", "w_post": "dW_post",
         "gamma": "dgamma", "gate_w": "dgate_w", "gate_b": "dgate_b"}


def fmt(d):
    return "  ".join(f"{SHORT[n]} {e:.0e}" for n, e in d.items())


def plain_attention_grads(cfg, x, dO):
    """FlashAttention's backward on dense maps, D_i = dO_i . o_i."""
    qr, kr = rotated(cfg, x)
    s = scores(cfg, qr, kr, x["g"])
    P, _ = softmax_lse(s)
    v = x["v"][:, cfg.hm]
    o = P @ v
    dP = dO @ v.transpose(0, 1, 3, 2)
    dS = P * (dP - (dO * o).sum(-1)[..., None])
    dqr = cfg.scale * dS @ kr[:, cfg.hm]
    dkr, dv = np.zeros_like(x["k"]), np.zeros_like(x["v"])
    for h in range(cfg.Hq):
        dkr[:, cfg.hm[h]] += cfg.scale * dS[:, h].transpose(0, 2, 1) @ qr[:, h]
        dv[:, cfg.hm[h]] += P[:, h].transpose(0, 2, 1) @ dO[:, h]
    gr = {"v": dv}
    gr["q"], gr["k"] = unrotate(cfg, dqr, dkr)
    if cfg.fox:
        gr["g"] = fox_grad(cfg, dS.sum(-1), dS.sum(-2))
    return o, gr


def main():
    quick = "--quick" in sys.argv
    t_start = time.time()
    H = 4
    Ts = (1, 5, 9, 23, 40) if quick else (1, 5, 8, 9, 17, 23, 40, 64)
    configs = [
        ("pre-only", dict(pre=(1, 1))),
        ("pre-only", dict(pre=(2, 3), mix_pre=2)),
        ("pre-only", dict(pre=(3, 5), mix_pre=H, fox=True, scaled=True)),
        ("pre-only", dict(pre=(6, 11), mix_pre=1, norm=True, gate=True, rope=True)),
        ("pre-only", dict(mix_pre=H, norm=True, fox=True)),
        ("two-pass", dict(post=(3, 5))),
        ("two-pass", dict(mix_post=2, fox=True)),
        ("two-pass", dict(pre=(2, 3), mix_pre=1, post=(3, 5), mix_post=H, norm=True, gate=True)),
        ("two-pass", dict(pre=(6, 11), mix_pre=H, post=(6, 11), mix_post=H, norm=True,
                          gate=True, rope=True, fox=True, scaled=True)),
        ("two-pass", dict(pre=(3, 5), mix_pre=2, post=(2, 3), mix_post=H, Hk=2, fox=True)),
        ("two-pass", dict(pre=(3, 5), mix_pre=H, post=(6, 11), mix_post=2, Hk=1,
                          norm=True, gate=True, rope=True)),
    ]
    print("MTA backward, fp64: the tiled sweeps vs the dense VJP (D = 4, Dv = 3, H = 4, "
          "tiles 8 x 8 unless stated)")
    print(f"T in {Ts}; errors are max |tiled - dense| / max |dense| per gradient, and "
          "|fd - <grad, u>| / max(|grad| |u|, 1) along a random u")
    rng = np.random.default_rng(46)
    for kind, kw in configs:
        worst_ref, worst_fd = {}, {}
        cfg = None
        for T in Ts:
            cfg = Cfg(T, Hq=H, **kw)
            x = make_inputs(cfg, rng)
            dO = rng.standard_normal((cfg.B, cfg.Hq, cfg.T, cfg.Dv))
            ref = dense_backward(cfg, x, dO)[0]
            gr = tiled_backward(cfg, x, dO)[0]
            for n in present(x):
                worst_ref[n] = max(worst_ref.get(n, 0.0), rel(gr[n], ref[n]))
            for n, e in directional_fd(cfg, x, gr, dO, rng).items():
                worst_fd[n] = max(worst_fd.get(n, 0.0), e)
        print(f"{kind}: {cfg.describe()}")
        print("  vs dense VJP  " + fmt(worst_ref))
        print("  vs fd (dirs)  " + fmt(worst_fd))

    # Shapes the loop above does not reach: batch 2, T < S, packed
    # sequences, tiles other than 8 x 8 (halos wider than a tile).
    print("other shapes (each vs dense VJP, then fd along random directions):")
    extra = [
        ("B = 2, T = 29, S = 37, tiles 8 x 4",
         dict(T=29, S=37, B=2, pre=(3, 5), mix_pre=H, post=(2, 3), mix_post=2, fox=True,
              rope=True, norm=True, gate=True), (8, 4)),
        ("tiles 4 x 8, 6x11 both",
         dict(T=33, pre=(6, 11), mix_pre=2, post=(6, 11), mix_post=H, fox=True), (4, 8)),
        ("tiles 16 x 16, T = 70",
         dict(T=70, pre=(6, 11), mix_pre=H, post=(6, 11), mix_post=H, norm=True, gate=True,
              rope=True, fox=True, scaled=True), (16, 16)),
        ("packed, pre-only",
         dict(T=40, pre=(3, 5), mix_pre=2, fox=True, rope=True, cu=np.array([0, 7, 8, 23, 40])),
         (8, 8)),
        ("packed, two-pass",
         dict(T=40, pre=(6, 11), mix_pre=H, post=(3, 5), mix_post=H, norm=True, gate=True,
              fox=True, scaled=True, rope=True, Hk=2, cu=np.array([0, 3, 3, 20, 29, 40])),
         (8, 8)),
    ]
    for name, kw, (BM, BN) in extra:
        cfg = Cfg(**kw)
        x = make_inputs(cfg, rng)
        dO = rng.standard_normal((cfg.B, cfg.Hq, cfg.T, cfg.Dv))
        ref = dense_backward(cfg, x, dO)[0]
        gr = tiled_backward(cfg, x, dO, BM, BN)[0]
        print(f"  {name}: {cfg.describe()}")
        print("    " + fmt({n: rel(gr[n], ref[n]) for n in present(x)}))
        print("    " + fmt(directional_fd(cfg, x, gr, dO, rng)))

    cases = ((1, dict(pre=(2, 3), mix_pre=2, post=(2, 3), mix_post=H, norm=True, gate=True,
                      fox=True, rope=True, Hk=2)),
             (6, dict(pre=(2, 3), mix_pre=2, post=(2, 3), mix_post=H, norm=True, gate=True,
                      fox=True, rope=True, Hk=2)),
             (7, dict(pre=(3, 5), mix_pre=H, post=(3, 3), mix_post=1, norm=True, fox=True,
                      scaled=True, cu=np.array([0, 3, 7]))))
    for T, kw in (cases[:2] if quick else cases):
        cfg = Cfg(T, Hq=H, **kw)
        x = make_inputs(cfg, rng)
        dO = rng.standard_normal((cfg.B, cfg.Hq, cfg.T, cfg.Dv))
        gr = tiled_backward(cfg, x, dO, 4, 4)[0]
        print(f"elementwise fd, T = {T}, tiles 4 x 4 ({cfg.describe()}): "
              f"max abs err / max(max abs grad, 1) = {elementwise_fd(cfg, x, gr, dO):.1e}")

    # Identity kernels and mixing: plain attention's gradients.
    cfg = Cfg(40, Hq=H, pre=(6, 11), mix_pre=H, post=(6, 11), mix_post=H, fox=True, rope=True)
    x = make_inputs(cfg, rng, identity=True)
    dO = rng.standard_normal((cfg.B, cfg.Hq, cfg.T, cfg.Dv))
    gr, t = tiled_backward(cfg, x, dO)
    o, pl = plain_attention_grads(cfg, x, dO)
    print("identity 6x11 kernels and mixing (FoX, RoPE, T = 40) vs plain attention: "
          f"out {rel(t.out, o):.0e}  " + fmt({n: rel(gr[n], pl[n]) for n in pl}))

    # Causality backwards: dO of rows < t0 does not reach dq, dk, dv >= t0.
    cfg = Cfg(40, Hq=H, pre=(6, 11), mix_pre=H, post=(6, 11), mix_post=H, norm=True, gate=True,
              fox=True, rope=True, Hk=2)
    x = make_inputs(cfg, rng)
    dO = rng.standard_normal((cfg.B, cfg.Hq, cfg.T, cfg.Dv))
    t0 = 17
    dO2 = dO.copy()
    dO2[:, :, :t0] = rng.standard_normal(dO2[:, :, :t0].shape)
    g1, g2 = tiled_backward(cfg, x, dO)[0], tiled_backward(cfg, x, dO2)[0]
    diff = max(np.abs(g1[n][:, :, t0:] - g2[n][:, :, t0:]).max() for n in ("q", "k", "v"))
    print(f"causality: dO of rows < {t0} changed, max |change| of dq, dk, dv at positions "
          f">= {t0}: {diff:.1e} (rows < {t0}: {np.abs(g1['q'] - g2['q']).max():.1e})")

    # Head permutation: permuting heads (and the mixing maps) permutes the
    # gradients.
    cfg = Cfg(23, Hq=H, pre=(3, 5), mix_pre=H, post=(3, 5), mix_post=H, norm=True, gate=True,
              fox=True)
    x = make_inputs(cfg, rng)
    dO = rng.standard_normal((cfg.B, cfg.Hq, cfg.T, cfg.Dv))
    pi = np.array([2, 0, 3, 1])
    xp = dict(x)
    for n in ("q", "k", "v", "g", "theta_pre", "theta_post"):
        xp[n] = x[n][:, pi] if x[n].ndim == 4 or n == "g" else x[n][pi]
    for n in ("w_pre", "w_post"):
        xp[n] = x[n][np.ix_(pi, pi)]
    g1 = tiled_backward(cfg, x, dO)[0]
    g2 = tiled_backward(cfg, xp, dO[:, pi])[0]
    worst = 0.0
    for n in present(x):
        if n in ("q", "k", "v", "g"):
            a = g1[n][:, pi]
        elif n in ("w_pre", "w_post"):
            a = g1[n][np.ix_(pi, pi)]
        elif n.startswith("theta"):
            a = g1[n][pi]
        else:
            a = g1[n]
        worst = max(worst, rel(g2[n], a))
    print(f"head permutation {[int(v) for v in pi]} (full mixing, norm + gate, FoX): max rel {worst:.0e}")
    print(f"({time.time() - t_start:.1f} s)")


if __name__ == "__main__":
    main()
