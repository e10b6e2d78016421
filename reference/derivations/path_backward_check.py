#!/usr/bin/env python3
"""fp64 check of PaTH's backward as docs/path-backward.md derives it.

The forward is the brute-force walk of spec/path_fox.md section 1.4 (each
query carried through H_j = I - beta_j w_j w_j^T key by key), independent of
chunks. The backward is the derived algorithm, chunk for chunk:

  - per chunk of C positions the UT transform T = (I + A)^-1, U = T B W,
    the chunk-local q^, k^, the diagonal block's logits, and P_c = I - W^T U;
  - the cross-chunk pairs by the dyadic tree: pair (a, b) of chunks meets at
    the boundary m of its lowest common dyadic node, queries X = q^ P..P and
    keys Y = k^ P^T..P^T carried there through at most log2(N) node
    products, their adjoints carried back down the tree, the nodes'
    gradients pushed down to the chunks;
  - the local adjoint per chunk, with d(I + A)^-1 = -T^T (.) T^T by
    16 x 16 (here C/4) blocks.

Checks, for T = 1..130 (chunks of 64 and of 8, so the tree is 0 to 5
levels deep), two beta ranges, GQA (2 query heads per KV head), FoX with the
gate scaled and unscaled:
  1. the tree's logits equal the walk's (the forward identity);
  2. every gradient elementwise against the walk's own adjoint (the
     oracle's algorithm, reference/OracleGrad.cpp, vectorised over rows);
  3. every gradient against central finite differences of the walk's
     forward along random directions, and elementwise for small T.
Usage: python3 reference/derivations/path_backward_check.py [--quick]
"""

import sys
import numpy as np

# --------------------------------------------------------------------------
# The forward: the walk (spec/path_fox.md 1.4), vectorised over query rows.


def walk_logits(q, k, w, beta):
    """[T, T] of q_i^T H_i ... H_{j+1} k_j for j <= i (-inf above), and the
    states R[t] = every row's r before H_t is applied (for the adjoint)."""
    T, d = q.shape
    R = q.copy()
    S = np.full((T, T), -np.inf)
    states = np.zeros((T, T, d))
    for t in range(T - 1, -1, -1):
        S[t:, t] = R[t:] @ k[t]
        states[t] = R
        if w is not None:
            R[t:] -= beta[t] * np.outer(R[t:] @ w[t], w[t])
    return S, states


def forward(x, scale, gamma):
    """o [B, Hq, T, Dv], lse [B, Hq, T] (natural log), logits."""
    q, k, v, w, beta, g = (x[n] for n in ("q", "k", "v", "w", "beta", "g"))
    B, Hq, T, _ = q.shape
    grp = Hq // k.shape[1]
    o = np.zeros(q.shape[:3] + (v.shape[3],))
    lse = np.zeros(q.shape[:3])
    logits = np.zeros((B, Hq, T, T))
    for b in range(B):
        for h in range(Hq):
            hk = h // grp
            S, _ = walk_logits(q[b, h], k[b, hk],
                               None if w is None else w[b, hk],
                               None if beta is None else beta[b, hk])
            S = scale * S
            if g is not None:
                G = np.cumsum(g[b, h])
                S = S + gamma * (G[:, None] - G[None, :])
            m = S.max(1, keepdims=True)
            P = np.exp(S - m)
            l = P.sum(1, keepdims=True)
            lse[b, h] = (m + np.log(l))[:, 0]
            o[b, h] = (P / l) @ v[b, hk]
            logits[b, h] = S
    return o, lse, logits


def loss(x, dO, scale, gamma):
    return float((forward(x, scale, gamma)[0] * dO).sum())


# --------------------------------------------------------------------------
# The reference adjoint: the walk run backwards (reference/OracleGrad.cpp's
# scoresRowGrad, all rows at once).


def walk_backward(x, dO, scale, gamma):
    q, k, v, w, beta, g = (x[n] for n in ("q", "k", "v", "w", "beta", "g"))
    B, Hq, T, d = q.shape
    grp = Hq // k.shape[1]
    o, lse, logits = forward(x, scale, gamma)
    gr = {n: (None if x[n] is None else np.zeros_like(x[n])) for n in x}
    for b in range(B):
        for h in range(Hq):
            hk = h // grp
            wk = None if w is None else w[b, hk]
            _, states = walk_logits(q[b, h], k[b, hk], wk,
                                    None if w is None else beta[b, hk])
            P = np.exp(logits[b, h] - lse[b, h][:, None])
            dP = dO[b, h] @ v[b, hk].T
            dS = P * (dP - (dO[b, h] * o[b, h]).sum(1)[:, None])
            gr["v"][b, hk] += P.T @ dO[b, h]
            if g is not None:
                dG = gamma * (dS.sum(1) - dS.sum(0))
                gr["g"][b, h] = np.cumsum(dG[::-1])[::-1]
            E = scale * dS
            a = np.zeros((T, d))  # dL / dr, every row
            for t in range(T):
                rows = slice(t, T)
                r = states[t][rows]
                if wk is not None:
                    wr, wa = r @ wk[t], a[rows] @ wk[t]
                    gr["beta"][b, hk, t] -= wr @ wa
                    gr["w"][b, hk, t] -= beta[b, hk, t] * (wa @ r + wr @ a[rows])
                    a[rows] -= beta[b, hk, t] * np.outer(wa, wk[t])
                a[rows] += np.outer(E[rows, t], k[b, hk, t])
                gr["k"][b, hk, t] += E[rows, t] @ r
            gr["q"][b, h] = a
    return gr


# --------------------------------------------------------------------------
# The derived algorithm.


def ut(W, be):
    """The UT transform of one chunk: Gram W W^T, T = (I + A)^-1 with
    A = stril(B W W^T), Gam = T B (what the kernels store as "T"), U."""
    C = W.shape[0]
    Gm = W @ W.T
    A = np.tril(be[:, None] * Gm, -1)
    # The kernels invert by 16-row blocks (invertUnitLower); any exact
    # inverse serves the check.
    Tm = np.linalg.solve(np.eye(C) + A, np.eye(C))
    Gam = Tm * be[None, :]
    return Gm, Tm, Gam, Gam @ W


def inverse_adjoint(Tm, dT, nb=4):
    """stril(-T^T dT T^T) on an nb x nb grid of blocks, only the blocks that
    T's lower-triangular structure leaves nonzero: M = dT T^T for blocks
    K >= J (sum over L <= J), then -T^T M for blocks I >= J (sum over
    K >= I)."""
    C = Tm.shape[0]
    s = C // nb if C % nb == 0 and C >= nb else C
    nb = C // s
    blk = lambda X, I, J: X[I * s:(I + 1) * s, J * s:(J + 1) * s]
    dTl = np.tril(dT)
    M = {}
    for K in range(nb):
        for J in range(K + 1):
            M[K, J] = sum(blk(dTl, K, L) @ blk(Tm, J, L).T for L in range(J + 1))
    dA = np.zeros_like(Tm)
    for I in range(nb):
        for J in range(I + 1):
            dA[I * s:(I + 1) * s, J * s:(J + 1) * s] = -sum(
                blk(Tm, K, I).T @ M[K, J] for K in range(I, nb))
    return np.tril(dA, -1)


def x_node(a, lvl):
    """The node (height, index) that carries query chunk a's X from level
    lvl - 1 to lvl, or None (bit lvl - 2 of a clear: same boundary)."""
    h = lvl - 2
    return (h, (a >> h) - 1) if (a >> h) & 1 else None


def y_node(b, lvl):
    h = lvl - 2
    return None if (b >> h) & 1 else (h, (b >> h) + 1)


def tree_backward(x, dO, scale, gamma, C, check_logits=None):
    q, k, v, w, beta, g = (x[n] for n in ("q", "k", "v", "w", "beta", "g"))
    B, Hq, T, d = q.shape
    Hk = k.shape[1]
    grp = Hq // Hk
    o, lse, _ = forward(x, scale, gamma)
    N = -(-T // C)
    Np = 1 << (N - 1).bit_length()  # chunks padded to a power of two
    L = Np.bit_length() - 1  # pair levels 1..L
    Tp = Np * C

    def pad(a):
        z = np.zeros(a.shape[:2] + (Tp - T,) + a.shape[3:])
        return np.concatenate([a, z], axis=2)

    qp, kp, vp, op_, dOp = map(pad, (q, k, v, o, dO))
    wp = pad(w) if w is not None else np.zeros(kp.shape)
    bp = pad(beta) if beta is not None else np.zeros(kp.shape[:3])
    gp = pad(g) if g is not None else None
    lsep = pad(lse)
    Dt = (dOp * op_).sum(-1)
    real = np.arange(Tp) < T
    ch = lambda a, c: a[c * C:(c + 1) * C]
    gr = {n: np.zeros((a.shape[0], a.shape[1], Tp) + a.shape[3:])
          for n, a in (("q", q), ("k", k), ("v", v), ("w", kp), ("beta", bp))}
    gr["g"] = np.zeros((B, Hq, Tp))
    worst_logit = 0.0

    def probs(s, rows):
        """P, dS for logits s of query rows `rows` (global indices)."""
        P = np.exp(s - lsep_h[rows][:, None]) * real[rows][:, None]
        return P

    for b in range(B):
        for hk in range(Hk):
            W, be, K, V = wp[b, hk], bp[b, hk], kp[b, hk], vp[b, hk]
            loc = [ut(ch(W, c), ch(be, c)) for c in range(Np)]
            U = np.concatenate([l[3] for l in loc])
            KW = [np.triu(ch(K, c) @ ch(W, c).T, 1) for c in range(Np)]
            KC = [KW[c] @ loc[c][2].T for c in range(Np)]
            Khat = [ch(K, c) - KC[c] @ ch(W, c) for c in range(Np)]
            # Node products: height 0 the chunks' P_c, then products of
            # sibling pairs (the higher chunk's product on the left).
            nodes = [[np.eye(d) - ch(W, c).T @ ch(U, c) for c in range(Np)]]
            for hgt in range(1, max(L - 1, 1)):
                prev = nodes[-1]
                nodes.append([prev[2 * i + 1] @ prev[2 * i]
                              for i in range(len(prev) // 2)])
            dnodes = [[np.zeros((d, d)) for _ in lv] for lv in nodes]
            node = lambda hi: nodes[hi[0]][hi[1]]
            # Keys carried up to each level's boundary (KV head).
            Y = {1: Khat}
            for lvl in range(2, L + 1):
                Y[lvl] = [Y[lvl - 1][c] if y_node(c, lvl) is None else
                          Y[lvl - 1][c] @ node(y_node(c, lvl)).T
                          for c in range(Np)]
            # Key-side cotangents, summed over the group in the kernels.
            dKhat = [np.zeros((C, d)) for _ in range(Np)]
            dU = [np.zeros((C, d)) for _ in range(Np)]
            dKC = [np.zeros((C, C)) for _ in range(Np)]
            dW = [np.zeros((C, d)) for _ in range(Np)]
            dK = [np.zeros((C, d)) for _ in range(Np)]
            dV = np.zeros(V.shape)
            for h in range(hk * grp, (hk + 1) * grp):
                Q = qp[b, h]
                lsep_h = lsep[b, h]
                Gc = np.cumsum(gp[b, h]) if gp is not None else np.zeros(Tp)
                dGrow = np.zeros(Tp)
                QW = [np.tril(ch(Q, c) @ ch(W, c).T) for c in range(Np)]
                Qhat = [ch(Q, c) - QW[c] @ ch(U, c) for c in range(Np)]
                X = {1: Qhat}
                for lvl in range(2, L + 1):
                    X[lvl] = [X[lvl - 1][c] if x_node(c, lvl) is None else
                              X[lvl - 1][c] @ node(x_node(c, lvl))
                              for c in range(Np)]
                Zx = {lvl: [np.zeros((C, d)) for _ in range(Np)]
                      for lvl in range(1, L + 1)}
                Zy = {lvl: [np.zeros((C, d)) for _ in range(Np)]
                      for lvl in range(1, L + 1)}

                def pair_grads(s, rows, cols, dO_a, V_b):
                    P = probs(s, rows)
                    dS = P * (dO_a @ V_b.T - Dt[b, h][rows][:, None])
                    dGrow[rows] += gamma * dS.sum(1)
                    dGrow[cols] -= gamma * dS.sum(0)
                    return P, dS

                # The pair phase: at level lvl, node n's right half of
                # query chunks against its left half of key chunks.
                for lvl in range(1, L + 1):
                    half = 1 << (lvl - 1)
                    for n in range(Np >> lvl):
                        for a in range(n * 2 * half + half, (n + 1) * 2 * half):
                            for bc in range(n * 2 * half, n * 2 * half + half):
                                rows = np.arange(a * C, (a + 1) * C)
                                cols = np.arange(bc * C, (bc + 1) * C)
                                s = scale * X[lvl][a] @ Y[lvl][bc].T
                                s = s + gamma * (Gc[rows][:, None] - Gc[cols][None, :])
                                if check_logits is not None and a * C < T:
                                    ref = check_logits[b, h][a * C:min((a + 1) * C, T),
                                                             bc * C:(bc + 1) * C]
                                    worst_logit = max(worst_logit, np.abs(
                                        s[:ref.shape[0], :ref.shape[1]] - ref).max())
                                P, dS = pair_grads(s, rows, cols, ch(dOp[b, h], a),
                                                   ch(V, bc))
                                E = scale * dS
                                dV[cols] += P.T @ ch(dOp[b, h], a)
                                Zx[lvl][a] += E @ Y[lvl][bc]
                                Zy[lvl][bc] += E.T @ X[lvl][a]
                # The adjoints carried back down, top level first; each
                # node collects X^T dX (query side) and dY^T Y (key side).
                dX = [np.zeros((C, d)) for _ in range(Np)]
                dY = [np.zeros((C, d)) for _ in range(Np)]
                for lvl in range(L, 0, -1):
                    for c in range(Np):
                        dX[c] += Zx[lvl][c]
                        dY[c] += Zy[lvl][c]
                    if lvl < 2:
                        continue
                    for c in range(Np):
                        nx = x_node(c, lvl)
                        if nx is not None:
                            dnodes[nx[0]][nx[1]] += X[lvl - 1][c].T @ dX[c]
                            dX[c] = dX[c] @ node(nx).T
                        ny = y_node(c, lvl)
                        if ny is not None:
                            dnodes[ny[0]][ny[1]] += dY[c].T @ Y[lvl - 1][c]
                            dY[c] = dY[c] @ node(ny)
                # Diagonal blocks and the query side's local adjoint.
                for c in range(Np):
                    rows = np.arange(c * C, (c + 1) * C)
                    Qc, Kc, Wc = ch(Q, c), ch(K, c), ch(W, c)
                    s = scale * (Qc @ Kc.T - QW[c] @ KC[c].T)
                    s = s + gamma * (Gc[rows][:, None] - Gc[rows][None, :])
                    s = np.where(np.tril(np.ones((C, C))) > 0, s, -np.inf)
                    if check_logits is not None and c * C < T:
                        m = min(C, T - c * C)
                        ref = check_logits[b, h][c * C:c * C + m, c * C:c * C + m]
                        fin = np.isfinite(ref)
                        worst_logit = max(worst_logit, np.abs(
                            s[:m, :m][fin] - ref[fin]).max())
                    P, dS = pair_grads(s, rows, rows, ch(dOp[b, h], c), ch(V, c))
                    E = scale * dS
                    dV[rows] += P.T @ ch(dOp[b, h], c)
                    dQhat = dX[c]
                    dQW = np.tril(-E @ KC[c] - dQhat @ ch(U, c).T)
                    gr["q"][b, h, rows] = dQhat + E @ Kc + dQW @ Wc
                    dK[c] += E.T @ Qc
                    dKC[c] += -E.T @ QW[c]
                    dU[c] += -QW[c].T @ dQhat
                    dW[c] += dQW.T @ Qc
                    dKhat[c] += dY[c]
                gr["g"][b, h] = np.cumsum(dGrow[::-1])[::-1]
            # Node gradients pushed down to the chunks (parent = R L).
            for hgt in range(len(nodes) - 1, 0, -1):
                for i, dN in enumerate(dnodes[hgt]):
                    Rn, Ln = nodes[hgt - 1][2 * i + 1], nodes[hgt - 1][2 * i]
                    dnodes[hgt - 1][2 * i + 1] += dN @ Ln.T
                    dnodes[hgt - 1][2 * i] += Rn.T @ dN
            # The key side's local adjoint and the UT transform's, per chunk.
            for c in range(Np):
                Gm, Tm, Gam, Uc = loc[c]
                Wc, Kc, bc = ch(W, c), ch(K, c), ch(be, c)
                dPc = dnodes[0][c]
                dU[c] += -Wc @ dPc                  # P_c = I - W^T U
                dW[c] += -Uc @ dPc.T
                dK[c] += dKhat[c]                   # K^ = K - KC W
                dKC[c] += -dKhat[c] @ Wc.T
                dW[c] += -KC[c].T @ dKhat[c]
                dKW = np.triu(dKC[c] @ Gam, 1)      # KC = KW Gam^T
                dGam = dKC[c].T @ KW[c]
                dK[c] += dKW @ Wc                   # KW = striu(K W^T)
                dW[c] += dKW.T @ Kc
                dGam += dU[c] @ Wc.T                # U = Gam W
                dW[c] += Gam.T @ dU[c]
                dT = dGam * bc[None, :]             # Gam = T B
                dbeta = (dGam * Tm).sum(0)
                dA = inverse_adjoint(Tm, dT)        # T = (I + A)^-1
                dbeta += (dA * Gm).sum(1)           # A = stril(B W W^T)
                dGm = bc[:, None] * dA
                dW[c] += (dGm + dGm.T) @ Wc
                rows = slice(c * C, (c + 1) * C)
                gr["k"][b, hk, rows] = dK[c]
                gr["w"][b, hk, rows] = dW[c]
                gr["beta"][b, hk, rows] = dbeta
            gr["v"][b, hk] = dV
    out = {n: a[:, :, :T] for n, a in gr.items()}
    if w is None:
        out["w"] = out["beta"] = None
    if g is None:
        out["g"] = None
    return out, worst_logit


# --------------------------------------------------------------------------


def make(rng, T, d=4, dv=3, Hq=2, Hk=1, beta_lo=0.0, gate=True):
    w = rng.standard_normal((1, Hk, T, d))
    w /= np.linalg.norm(w, axis=-1, keepdims=True)
    return {
        "q": rng.standard_normal((1, Hq, T, d)),
        "k": rng.standard_normal((1, Hk, T, d)),
        "v": rng.standard_normal((1, Hk, T, dv)),
        "w": w,
        "beta": rng.uniform(beta_lo, 2.0, (1, Hk, T)),
        "g": np.log(rng.uniform(0.9, 1.0, (1, Hq, T))) if gate else None,
    }


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def directional_fd(x, gr, dO, scale, gamma, rng, eps=1e-5):
    """Worst |fd - <grad, u>| / (|grad| |u|) over the arguments."""
    worst = {}
    for n in x:
        if x[n] is None:
            continue
        u = rng.standard_normal(x[n].shape)
        xp = dict(x); xp[n] = x[n] + eps * u
        xm = dict(x); xm[n] = x[n] - eps * u
        fd = (loss(xp, dO, scale, gamma) - loss(xm, dO, scale, gamma)) / (2 * eps)
        an = float((gr[n] * u).sum())
        worst[n] = abs(fd - an) / max(np.linalg.norm(gr[n]) * np.linalg.norm(u), 1.0)
    return worst


def elementwise_fd(x, gr, dO, scale, gamma, eps=1e-6):
    worst = 0.0
    for n in x:
        if x[n] is None:
            continue
        fd = np.zeros_like(x[n])
        for idx in np.ndindex(x[n].shape):
            xp = dict(x); xp[n] = x[n].copy(); xp[n][idx] += eps
            xm = dict(x); xm[n] = x[n].copy(); xm[n][idx] -= eps
            fd[idx] = (loss(xp, dO, scale, gamma) - loss(xm, dO, scale, gamma)) / (2 * eps)
        worst = max(worst, np.abs(fd - gr[n]).max() / max(np.abs(fd).max(), 1.0))
    return worst


def main():
    quick = "--quick" in sys.argv
    names = ("q", "k", "v", "w", "beta", "g")
    Ts = range(1, 131, 7 if quick else 1)
    print("PaTH backward, fp64: the tree algorithm vs the walk (d = 4, Dv = 3, "
          "GQA 2:1, FoX)")
    for C in (64, 8):
        for beta_lo, gate_scaled in ((0.0, True), (1.5, False)):
            rng = np.random.default_rng(1000 * C + int(10 * beta_lo))
            worst_ref = dict.fromkeys(names, 0.0)
            worst_fd = dict.fromkeys(names, 0.0)
            worst_logit = 0.0
            for T in Ts:
                x = make(rng, T, beta_lo=beta_lo)
                scale, gamma = 0.5, (0.5 if gate_scaled else 1.0)
                dO = rng.standard_normal(x["q"].shape[:3] + (x["v"].shape[3],))
                logits = forward(x, scale, gamma)[2]
                gr, wl = tree_backward(x, dO, scale, gamma, C, check_logits=logits)
                worst_logit = max(worst_logit, wl)
                ref = walk_backward(x, dO, scale, gamma)
                for n in names:
                    worst_ref[n] = max(worst_ref[n], rel(gr[n], ref[n]))
                for n, e in directional_fd(x, gr, dO, scale, gamma, rng).items():
                    worst_fd[n] = max(worst_fd[n], e)
            levels = (-(-max(Ts) // C) - 1).bit_length()
            print(f"C = {C:2d} ({levels} tree levels at T = {max(Ts)}), "
                  f"beta ~ U({beta_lo:g}, 2), gate {'scaled' if gate_scaled else 'unscaled'}, "
                  f"T = 1..{max(Ts)}:")
            print(f"  tree logits vs walk logits, max abs diff  {worst_logit:.1e}")
            print("  vs the walk's adjoint, max rel  " +
                  "  ".join(f"d{n} {worst_ref[n]:.1e}" for n in names))
            print("  vs finite differences (random directions)  " +
                  "  ".join(f"d{n} {worst_fd[n]:.1e}" for n in names))
    rng = np.random.default_rng(7)
    cases = ((4, 1), (4, 5), (4, 9), (4, 17), (8, 33)) if quick else \
        ((4, 1), (4, 5), (4, 9), (4, 17), (8, 33), (64, 65))
    for C, T in cases:
        x = make(rng, T, d=3, dv=2)
        dO = rng.standard_normal(x["q"].shape[:3] + (2,))
        gr, _ = tree_backward(x, dO, 0.7, 0.7, C)
        print(f"elementwise finite differences, C = {C}, T = {T}: "
              f"max abs err / max(max abs grad, 1) = {elementwise_fd(x, gr, dO, 0.7, 0.7):.1e}")
    # beta = 0: plain attention; dw = 0 and dbeta its analytic value.
    x = make(np.random.default_rng(3), 70, gate=False)
    x["beta"][:] = 0.0
    dO = np.random.default_rng(4).standard_normal(x["q"].shape[:3] + (3,))
    gr, _ = tree_backward(x, dO, 0.5, 1.0, 64)
    print(f"beta = 0, T = 70: max |dw| = {np.abs(gr['w']).max():.1e}, dbeta vs the walk's "
          f"{rel(gr['beta'], walk_backward(x, dO, 0.5, 1.0)['beta']):.1e}")


if __name__ == "__main__":
    main()
