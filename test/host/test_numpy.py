"""The Python module (python/attn, ctypes over libattn.so) on NumPy arrays.

Plain and FoX attention, f32, on fresh random inputs (the seed is printed)
in BHSD and BSHD layouts (transposed views: DLPack strides), the output
poisoned with NaN or allocated by the module, one kernel at several shapes,
compared with an fp64 NumPy loop; a kernel with three results (a tuple of
arrays, allocated or passed as out=); a training pair (compile_training)
against fp64 NumPy gradients; bad inputs raise attn.Error naming the
argument. Exit status 1 on any failure.
"""

import os
import sys
import time

import numpy as np

import attn

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def program(variant, D):
    t = f"tensor<?x?x?x{D}xf32>"
    gate = variant == "fox"
    g = "tensor<?x?x?xf32>"
    args = f"%q: {t}, %k: {t}, %v: {t}" + (f", %g: {g}" if gate else "")
    types = f"{t}, {t}, {t}" + (f", {g}" if gate else "")
    return (f"func.func @main({args}) -> {t} {{\n"
            f"  %o = attn.attention %q, %k, %v{' gate(%g)' if gate else ''}"
            f" : ({types}) -> {t}\n  return %o : {t}\n}}\n")


def three_results(D):
    """Attention, attention with q and k swapped, and q itself."""
    t = f"tensor<?x?x?x{D}xf32>"
    att = f"({t}, {t}, {t}) -> {t}"
    return (f"func.func @main(%q: {t}, %k: {t}, %v: {t}) -> "
            f"({t}, {t}, {t}) {{\n"
            f"  %o = attn.attention %q, %k, %v : {att}\n"
            f"  %o2 = attn.attention %k, %q, %v : {att}\n"
            f"  return %o, %o2, %q : {t}, {t}, {t}\n}}\n")


def check_three_results(engine, rng, D, raises):
    kernel = engine.compile(three_results(D))
    check(len(kernel.results) == 3 and kernel.result == kernel.results[0],
          f"three results: {kernel.results}")
    q, k, v = inputs(rng, "plain", 2, 2, 11, D, "bshd")
    wants = [reference(q, k, v), reference(k, q, v), q]
    check(kernel.result_shapes(q, k, v) == [(2, 2, 11, D)] * 3,
          f"result_shapes {kernel.result_shapes(q, k, v)}")
    got = kernel(q, k, v)
    check(isinstance(got, tuple) and len(got) == 3, "three results: a tuple")
    for i, (g, w) in enumerate(zip(got, wants)):
        err = rel_error(g, w)
        check(err <= 1e-5, f"allocated result {i}: error {err:.3e} > 1e-5")
    # Caller-owned outputs, poisoned; the second a BSHD view.
    outs = [np.full((2, 2, 11, D), np.nan, np.float32),
            np.full((2, 11, 2, D), np.nan, np.float32).transpose(0, 2, 1, 3),
            np.full((2, 2, 11, D), np.nan, np.float32)]
    back = kernel(q, k, v, out=tuple(outs))
    check(all(a is b for a, b in zip(back, outs)), "out= returned as given")
    for i, (g, w) in enumerate(zip(outs, wants)):
        err = rel_error(g, w)
        print(f"python three results, output {i}: max relative error "
              f"{err:.3e}")
        check(err <= 1e-5, f"out= result {i}: error {err:.3e} > 1e-5")
    raises(lambda: kernel(q, k, v, out=outs[0]),
           "pass out= as a tuple of arrays")
    raises(lambda: kernel(q, k, v, out=tuple(outs[:2])),
           "@main returns 3 results, got 2 outputs")
    raises(lambda: kernel(q, k, v, out=(outs[0], outs[1].astype(np.float64),
                                        outs[2])),
           "output 1 (tensor<?x?x?x32xf32>): element type f64")
    raises(lambda: kernel(q, k, v, out=(outs[0], outs[1], outs[1])),
           "outputs 1 and 2 overlap in memory")
    raises(lambda: kernel.result_shape(q, k, v),
           "use attn_kernel_result_shape_at")


def reference(q, k, v, g=None):
    """Causal softmax attention in fp64, scale 1/sqrt(D); FoX adds
    G_i - G_j with G the inclusive cumsum of the log forget gate g."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    T, D = q.shape[2], q.shape[3]
    s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(D)
    if g is not None:
        G = np.cumsum(np.asarray(g, dtype=np.float64), axis=2)
        s = s + G[:, :, :, None] - G[:, :, None, :]
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", p, v)


def reference_grads(q, k, v, g, dO):
    """FoX attention's (o, row log-sum-exp, dq, dk, dv, dg) in fp64 given
    dO: the softmax's VJP ds = p * (dp - rowsum(dO * o)); the bias
    G_i - G_j passes ds's row sums minus its column sums to G, and the
    inclusive cumsum's VJP is a reverse cumsum."""
    q, k, v, g, dO = (np.asarray(x, dtype=np.float64)
                      for x in (q, k, v, g, dO))
    T, D = q.shape[2], q.shape[3]
    G = np.cumsum(g, axis=2)
    s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(D)
    s = s + G[:, :, :, None] - G[:, :, None, :]
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    lse = (m + np.log(p.sum(axis=-1, keepdims=True)))[..., 0]
    p /= p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhij,bhjd->bhid", p, v)
    dv = np.einsum("bhij,bhid->bhjd", p, dO)
    dp = np.einsum("bhid,bhjd->bhij", dO, v)
    ds = p * (dp - (dO * o).sum(axis=-1, keepdims=True))
    dq = np.einsum("bhij,bhjd->bhid", ds, k) / np.sqrt(D)
    dk = np.einsum("bhij,bhid->bhjd", ds, q) / np.sqrt(D)
    dG = ds.sum(axis=-1) - ds.sum(axis=-2)
    dg = np.flip(np.cumsum(np.flip(dG, axis=2), axis=2), axis=2)
    return o, lse, dq, dk, dv, dg


def check_training(engine, rng, D, raises):
    """The FoX training pair on BSHD views: the forward's output and saved
    log-sum-exp, then every gradient, against reference_grads."""
    train = engine.compile_training(program("fox", D))
    check(train.grad_args == [0, 1, 2, 3], f"grad_args {train.grad_args}")
    B, H, T = 2, 3, 21
    q, k, v, g = inputs(rng, "fox", B, H, T, D, "bshd")
    dO = rng.standard_normal((B, T, H, D), np.float32).transpose(0, 2, 1, 3)
    want = reference_grads(q, k, v, g, dO)
    o, saved = train.forward(q, k, v, g)
    check(len(saved) == 1 and saved[0].shape == (B, H, T) and
          saved[0].dtype == np.float32, f"saved {[x.shape for x in saved]}")
    grads = train.backward(q, k, v, g, o, *saved, dO)
    check(len(grads) == 4, f"{len(grads)} gradients")
    names = ("o", "lse", "dq", "dk", "dv", "dg")
    for name, got, w in zip(names, (o, *saved, *grads), want):
        err = rel_error(got, w)
        print(f"python training fox B={B} H={H} T={T}, {name}: max relative "
              f"error {err:.3e}")
        check(err <= 1e-5, f"training {name}: error {err:.3e} > 1e-5")
    raises(lambda: train.backward(q, k, v, g, *saved, dO), "takes 7 inputs, got 6")
    raises(lambda: engine.compile_training(three_results(D)),
           "must return one float tensor")
    raises(lambda: engine.compile_training(program("fox", D), entry="nope"),
           "no function @nope")


def rel_error(got, want):
    got = np.asarray(got, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return np.inf
    return np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)


def inputs(rng, variant, B, H, T, D, layout):
    def act():
        if layout == "bshd":  # a [B, S, H, D] buffer seen as [B, H, S, D]
            return rng.standard_normal((B, T, H, D), np.float32).transpose(
                0, 2, 1, 3)
        return rng.standard_normal((B, H, T, D), np.float32)
    xs = [act(), act(), act()]
    if variant == "fox":
        xs.append(np.log(rng.uniform(0.9, 1.0, (B, H, T))).astype(np.float32))
    return xs


def main():
    seed = int(os.environ.get("ATTN_SEED", time.time_ns() % 2**32))
    print("seed", seed)
    rng = np.random.default_rng(seed)
    engine = attn.Engine("cpu")
    check(engine.device == "cpu", "engine device")
    D = 32
    for variant in ("plain", "fox"):
        kernel = engine.compile(program(variant, D))
        n = 4 if variant == "fox" else 3
        check(len(kernel.args) == n, f"{variant}: {len(kernel.args)} args")
        check(kernel.args[0] == ("float32", (None, None, None, D)),
              f"{variant}: argument 0 is {kernel.args[0]}")
        check(kernel.result == ("float32", (None, None, None, D)),
              f"{variant}: result {kernel.result}")
        # One kernel at several shapes (the engine's cache returns it for
        # the same text: no recompilation).
        for (B, H, T) in ((1, 1, 1), (2, 3, 45), (1, 2, 130)):
            for layout in ("bhsd", "bshd"):
                xs = inputs(rng, variant, B, H, T, D, layout)
                want = reference(*xs)
                if layout == "bshd":
                    out = np.full((B, T, H, D), np.nan,
                                  np.float32).transpose(0, 2, 1, 3)
                    got = kernel(*xs, out=out)
                    check(got is out, "out= is returned")
                else:
                    got = kernel(*xs)
                    check(got.shape == (B, H, T, D) and
                          got.dtype == np.float32, f"allocated {got.shape}")
                err = rel_error(got, want)
                print(f"python {variant} {layout} B={B} H={H} T={T}: "
                      f"max relative error {err:.3e}")
                check(err <= 1e-5, f"{variant} {layout} B={B} H={H} T={T}: "
                      f"error {err:.3e} > 1e-5 (seed {seed})")

    # Arbitrary strided views, output written in place: q, k, v sliced out
    # of one packed [B, T, 3, H, D] buffer, the gate every other element of
    # a [B, H, T, 2] array (innermost stride 2), the output a view of a
    # NaN-poisoned padded [B, T, H + 1, D + 8] buffer (and, second, one with
    # innermost stride 2). Every element is checked, and every byte
    # outside the output view must still be NaN.
    for variant in ("plain", "fox"):
        kernel = engine.compile(program(variant, D))
        B, H, T = 2, 3, 37
        qkv = rng.standard_normal((B, T, 3, H, D), np.float32)
        xs = [qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3)]
        if variant == "fox":
            gbuf = np.log(rng.uniform(0.9, 1.0, (B, H, T, 2))).astype(
                np.float32)
            xs.append(gbuf[..., 0])
        want = reference(*xs)
        before = qkv.copy()
        for name, buf, view in (
                ("padded", np.full((B, T, H + 1, D + 8), np.nan, np.float32),
                 lambda b: b[:, :, 1:, 4:4 + D].transpose(0, 2, 1, 3)),
                ("stride-2", np.full((B, H, T, 2 * D), np.nan, np.float32),
                 lambda b: b[..., ::2])):
            out = view(buf)
            got = kernel(*xs, out=out)
            check(got is out, f"{variant} {name}: out= is returned")
            err = rel_error(out, want)
            print(f"python {variant} {name} output view: max relative error "
                  f"{err:.3e}")
            check(err <= 1e-5, f"{variant} {name}: error {err:.3e} > 1e-5 "
                  f"(seed {seed})")
            mask = np.ones(buf.shape, bool)
            view(mask)[...] = False
            check(np.all(np.isnan(buf[mask])),
                  f"{variant} {name}: bytes outside the output view changed")
        check(np.array_equal(qkv, before), f"{variant}: an input changed")

    kernel = engine.compile(program("plain", D))
    q, k, v = inputs(rng, "plain", 1, 2, 8, D, "bhsd")

    def raises(fn, needle):
        try:
            fn()
        except attn.Error as e:
            check(needle in str(e), f"'{needle}' not in '{e}'")
            check(e.status != 0, "status 0 on failure")
            return
        check(False, f"no attn.Error for '{needle}'")

    raises(lambda: kernel(q, k.astype(np.float64), v),
           "input 1 (tensor<?x?x?x32xf32>): element type f64")
    raises(lambda: kernel(q, k), "takes 3 inputs, got 2")
    raises(lambda: kernel(q, k[:, :, :4], v[:, :, :4]), "T <= S")
    raises(lambda: kernel(q, k, v, out=np.empty((1, 2, 8, 16), np.float32)),
           "the output (tensor<?x?x?x32xf32>): got shape")
    raises(lambda: engine.compile("func.func @main("), "cannot parse")
    # The value checks of attn-run hold here too: a log forget gate of
    # -inf is refused, not run into NaN.
    fox = engine.compile(program("fox", D))
    fq, fk, fv, fg = inputs(rng, "fox", 1, 2, 8, D, "bhsd")
    fg[0, 1, 3] = -np.inf
    raises(lambda: fox(fq, fk, fv, fg),
           "input 3 (a log forget gate) holds -inf at element 11")

    # Read-only inputs run where NumPy exports DLPack 1.0 (2.1 or newer),
    # which marks them read-only; an older NumPy refuses to export them, and
    # attn says so. A read-only output is refused either way.
    ro = [x.copy() for x in (q, k, v)]
    for x in ro:
        x.flags.writeable = False
    try:
        np.empty(1).__dlpack__(max_version=(1, 0))
        dlpack1 = True
    except TypeError:
        dlpack1 = False
    if dlpack1:
        got = kernel(*ro)
        err = rel_error(got, reference(*ro))
        check(err <= 1e-5, f"read-only inputs: error {err:.3e} > 1e-5")
    else:
        raises(lambda: kernel(*ro), "NumPy 2.1 or newer exports it")
    frozen = np.empty((1, 2, 8, D), np.float32)
    frozen.flags.writeable = False
    raises(lambda: kernel(q, k, v, out=frozen), "the output is read-only")
    raises(lambda: attn.Engine("tpu"), "unknown device 'tpu'")
    check_three_results(engine, rng, D, raises)
    check_training(engine, rng, D, raises)

    if failures:
        print(f"{len(failures)} checks failed", file=sys.stderr)
        return 1
    print("all Python checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
