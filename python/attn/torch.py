"""attn inside PyTorch: fla-compatible functional ops on [B, T, H, D]
tensors, a differentiable callable for any attn program, and the
torch.library custom ops under both (fake implementations for
torch.compile, autograd through attn's training pair).

    import attn.torch as at
    o = at.path_attention(q, k, v, w, beta, g)  # fla's parallel_path_attn
    o = at.forgetting_attention(q, k, v, g)     # parallel_forgetting_attn
    o = at.attention(q, k, v, rope_theta=1e4)   # plain / RoPE
    o = at.mta_attention(q, k, v, kq_conv_pre=theta, head_mix_pre=w, ...)
    f = at.compile(open("examples/fox.mlir").read())  # attn's [B, H, T, D]
    o = f(q, k, v, g)

Every program is compiled once per (program text, entry, device) and kept
in a dict; the text already names the dtypes and head dims. Tensors go to
the C API as strided views (no copies): q.transpose(1, 2) is attn's
[B, H, T, D] view of fla's [B, T, H, D]. GPU calls enqueue on the current
CUDA stream. Gradients come from Engine.compile_training's backward on the
tensors' device: fused for plain, RoPE and FoX attention (on the GPU in
bf16/f16 with head dims 64 and 128), the CPU's reference lowering for the
rest (correct, O(T^2) memory; no backward for those on the GPU yet);
docs/torch.md says what is supported.
"""

import functools
import os
import sys
import threading

import torch


def _load_triton_first():
    """libattn's CPU JIT (MLIR's ExecutionEngine) loads MLIR's runtime
    libraries (libmlir_c_runner_utils and its kind) with RTLD_GLOBAL, which
    puts Debian's libLLVM.so into the process's global symbol scope.
    Triton's libtriton, with an LLVM of its own inside, then binds to those
    symbols as it loads and crashes (a segfault in its initialisers).
    torch loads Triton on the first custom-op call and in torch.compile, so
    it is loaded here, before attn.torch compiles anything; where an attn
    kernel ran before this import, loading Triton would crash, and the
    import fails with a message instead."""
    if "triton" in sys.modules:
        return
    try:
        with open("/proc/self/maps") as f:
            jit_loaded = "libmlir_c_runner_utils" in f.read()
    except OSError:
        jit_loaded = False
    try:
        import importlib.util
        if importlib.util.find_spec("triton") is None:
            return
    except (ImportError, ValueError):
        return
    if jit_loaded:
        raise ImportError(
            "attn.torch must be imported before any attn kernel is compiled "
            "in this process: attn's CPU JIT has loaded LLVM's shared "
            "libraries globally, and Triton (which torch loads for custom "
            "ops and torch.compile) crashes when it loads after them")
    try:
        import triton  # noqa: F401
    except Exception:  # a broken Triton install: torch copes without it
        pass


_load_triton_first()

from . import Engine, Error  # noqa: E402

__all__ = ["attention", "forgetting_attention", "path_attention",
           "mta_attention", "compile", "Program", "parallel_path_attn",
           "parallel_forgetting_attn", "ArgumentError", "DTypeError",
           "DeviceError"]


class ArgumentError(Error, ValueError):
    """A tensor of the wrong shape, or an option out of range."""

    def __init__(self, message):
        super().__init__(1, message)


class DTypeError(Error, TypeError):
    """A tensor of a dtype the op does not take, or not a tensor."""

    def __init__(self, message):
        super().__init__(1, message)


class DeviceError(Error, ValueError):
    """Tensors on a device attn cannot use, or on several devices."""

    def __init__(self, message):
        super().__init__(2, message)


# --------------------------------------------------------------------------
# Engines and compiled programs, cached.

_lock = threading.Lock()
_engines = {}
_kernels = {}
_signatures = {}


def _engine(device):
    with _lock:
        engine = _engines.get(device)
        if engine is None:
            engine = _engines[device] = Engine(device)
        return engine


def _kernel(device, program, entry, training):
    """The forward Kernel (training=False) or the Training pair of
    `program`'s `entry` on `device` ("cpu" or "cuda"), compiled once."""
    key = (device, program, entry, training)
    kernel = _kernels.get(key)
    if kernel is None:
        engine = _engine(device)
        if training:
            kernel = engine.compile_training(program, entry)
        else:
            kernel = engine.compile(program, entry)
        with _lock:
            kernel = _kernels.setdefault(key, kernel)
    return kernel


class _Signature:
    """What the fake implementations need of a program, device-free: the
    result's dtype and head dim, the saved state of the training forward,
    which argument each gradient belongs to. Read from the CPU engine's
    compilation, or from a kernel at hand: the device's, or the training
    forward, whose first result is the function's (the signature does not
    depend on the device; a training call compiles no inference kernel)."""

    def __init__(self, program, entry, kernel=None, train=None):
        if train is not None:
            kernel = train.forward_kernel
            results = kernel.results[:1]
        else:
            if kernel is None:
                kernel = _kernel("cpu", program, entry, False)
            results = kernel.results
        if len(results) != 1:
            raise ArgumentError(
                f"attn.torch: @{entry} returns {len(results)} "
                "results: one [B, H, T, Dv] tensor expected")
        name, shape = results[0]
        if len(shape) != 4:
            raise ArgumentError(
                f"attn.torch: @{entry} returns a {len(shape)}-D tensor: "
                "[B, H, T, Dv] expected")
        self.dtype = getattr(torch, name)
        self.dv = shape[3]  # None: dynamic, then v's (argument 2) last dim
        self.args = kernel.args
        self._training = None
        self._program, self._entry = program, entry

    def training(self):
        if self._training is None:
            train = _kernel("cpu", self._program, self._entry, True)
            saved = train.forward_kernel.results[1:]
            for name, shape in saved:
                if name != "float32" or len(shape) != 3:
                    raise Error(5, f"attn.torch: saved state {name} "
                                f"{shape}: f32 [B, H, T] expected")
            self._training = (len(saved), list(train.grad_args))
        return self._training


def _signature(program, entry, kernel=None, train=None):
    key = (program, entry)
    sig = _signatures.get(key)
    if sig is None:
        sig = _signatures[key] = _Signature(program, entry, kernel, train)
    return sig


def _device_of(args):
    """"cpu" or "cuda" for the tensors `args`, all on one device."""
    dev = None
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            raise DTypeError(f"attn.torch: argument {i} is a "
                             f"{type(a).__name__}, not a torch.Tensor")
        if dev is None:
            dev = a.device
        elif a.device != dev:
            raise DeviceError(f"attn.torch: tensors on {dev} and {a.device} "
                              f"(argument {i}): all on one device expected")
    if dev is None or dev.type == "meta":
        return "meta"
    if dev.type == "cpu":
        return "cpu"
    if dev.type == "cuda":
        if dev.index not in (None, 0):
            raise DeviceError(f"attn.torch: tensors on {dev}: attn runs on "
                              "CUDA device 0 only")
        return "cuda"
    raise DeviceError(f"attn.torch: tensors on {dev}: cpu or cuda expected")


def _stream(device):
    if device == "cuda":
        return torch.cuda.current_stream(0).cuda_stream
    return None


def _view(x):
    """x as the C API may read it: detached (DLPack refuses tensors that
    require grad), and materialised where a stride is 0 (autograd hands
    expanded cotangents, e.g. of a sum, whose elements alias) or, on the
    GPU, where the innermost stride is not 1 (the kernels read rows as
    vectors; fla's [B, T, H] gate seen as [B, H, T] is such a view)."""
    x = x.detach()
    if any(s == 0 and n > 1 for s, n in zip(x.stride(), x.shape)):
        x = x.contiguous()
    elif x.is_cuda and x.dim() and x.shape[-1] > 1 and x.stride(-1) != 1:
        x = x.contiguous()
    return x


def _out_shape(sig, args):
    q = args[0]
    if q.dim() != 4:
        raise ArgumentError(f"attn.torch: argument 0 has shape "
                            f"{tuple(q.shape)}: [B, H, T, D] expected")
    dv = sig.dv
    if dv is None:
        if len(args) < 3 or args[2].dim() != 4:
            raise ArgumentError("attn.torch: the result's head dim is "
                                "dynamic and argument 2 is not a 4-D v")
        dv = args[2].shape[3]
    return q.shape[0], q.shape[1], q.shape[2], dv


# ATTN_TORCH_POISON=1 (the tests): outputs filled with NaN before each
# launch, so that an element the kernel fails to write shows.
_POISON = os.environ.get("ATTN_TORCH_POISON") == "1"


def _poison(*xs):
    if _POISON:
        for x in xs:
            x.fill_(float("nan"))


def _empty_out(sig, args, bthd):
    """The output, [B, H, T, Dv]; with `bthd` a view of a [B, T, H, Dv]
    buffer, so that the caller's transpose(1, 2) is contiguous."""
    B, H, T, Dv = _out_shape(sig, args)
    q = args[0]
    if bthd:
        return torch.empty((B, T, H, Dv), dtype=sig.dtype,
                           device=q.device).transpose(1, 2)
    return torch.empty((B, H, T, Dv), dtype=sig.dtype, device=q.device)


# --------------------------------------------------------------------------
# The custom ops. `program` is the attn program's text, `args` its
# arguments in attn's layout (strided views are fine); `bthd` lays the
# output out as [B, T, H, Dv] in memory (seen as [B, H, T, Dv]).


@torch.library.custom_op("attn::forward", mutates_args=())
def _forward_op(program: str, entry: str, args: list[torch.Tensor],
                bthd: bool) -> torch.Tensor:
    device = _device_of(args)
    kernel = _kernel(device, program, entry, False)
    out = _empty_out(_signature(program, entry, kernel), args, bthd)
    _poison(out)
    kernel(*[_view(a) for a in args], out=out, stream=_stream(device))
    return out


@_forward_op.register_fake
def _(program, entry, args, bthd):
    return _empty_out(_signature(program, entry), args, bthd)


@torch.library.custom_op("attn::forward_train", mutates_args=())
def _forward_train_op(program: str, entry: str, args: list[torch.Tensor],
                      bthd: bool) -> list[torch.Tensor]:
    device = _device_of(args)
    train = _kernel(device, program, entry, True)
    sig = _signature(program, entry, train=train)
    n_saved, _ = sig.training()
    out = _empty_out(sig, args, bthd)
    B, H, T, _ = out.shape
    saved = [torch.empty((B, H, T), dtype=torch.float32, device=out.device)
             for _ in range(n_saved)]
    _poison(out, *saved)
    train.forward_kernel(*[_view(a) for a in args], out=(out, *saved),
                         stream=_stream(device))
    return [out, *saved]


@_forward_train_op.register_fake
def _(program, entry, args, bthd):
    sig = _signature(program, entry)
    n_saved, _ = sig.training()
    out = _empty_out(sig, args, bthd)
    B, H, T, _ = out.shape
    return [out] + [out.new_empty((B, H, T), dtype=torch.float32)
                    for _ in range(n_saved)]


def _grad_buffers(program, entry, args):
    _, grad_args = _signature(program, entry).training()
    return [torch.empty(args[i].shape, dtype=args[i].dtype,
                        device=args[i].device) for i in grad_args]


@torch.library.custom_op("attn::backward", mutates_args=())
def _backward_op(program: str, entry: str, args: list[torch.Tensor],
                 outputs: list[torch.Tensor], grad: torch.Tensor
                 ) -> list[torch.Tensor]:
    # `outputs`: everything forward_train returned, o then the saved LSEs.
    device = _device_of([*args, *outputs, grad])
    train = _kernel(device, program, entry, True)
    grads = _grad_buffers(program, entry, args)
    _poison(*grads)
    train.backward_kernel(*[_view(a) for a in (*args, *outputs, grad)],
                          out=tuple(grads), stream=_stream(device))
    return grads


@_backward_op.register_fake
def _(program, entry, args, outputs, grad):
    return _grad_buffers(program, entry, args)


def _setup_train(ctx, inputs, output):
    program, entry, args, _ = inputs
    ctx.program, ctx.entry = program, entry
    ctx.n_args = len(args)
    # The backward takes everything the forward returned: o, then the LSEs.
    ctx.save_for_backward(*args, *output)


def _backward_train(ctx, grads):
    saved = ctx.saved_tensors
    args, fwd = list(saved[:ctx.n_args]), list(saved[ctx.n_args:])
    dO = grads[0]
    if dO is None:
        return None, None, [None] * len(args), None
    _, grad_args = _signature(ctx.program, ctx.entry).training()
    dargs = torch.ops.attn.backward(ctx.program, ctx.entry, args, fwd, dO)
    out = [None] * len(args)
    for i, d in zip(grad_args, dargs):
        out[i] = d
    return None, None, out, None


_forward_train_op.register_autograd(_backward_train,
                                    setup_context=_setup_train)


def _setup_forward(ctx, inputs, output):
    pass


def _backward_forward(ctx, grad):
    # _apply takes the training forward wherever autograd needs one, so
    # only a direct call of the inference op records this backward.
    raise Error(2, "attn.torch: attn::forward has no backward: "
                "attn::forward_train (what attn.torch's functions call when "
                "an input requires grad) saves what the backward needs")


_forward_op.register_autograd(_backward_forward,
                              setup_context=_setup_forward)


def _apply(program, entry, args, bthd):
    """Runs `program` on `args` (attn's layout) through the custom ops:
    the training forward where autograd needs it, else the inference
    forward."""
    needs_grad = torch.is_grad_enabled() and any(
        a.requires_grad for a in args)
    if needs_grad:
        return torch.ops.attn.forward_train(program, entry, args, bthd)[0]
    return torch.ops.attn.forward(program, entry, args, bthd)


# --------------------------------------------------------------------------
# attn.torch.compile: any attn program as a differentiable callable.


class Program:
    """A differentiable torch callable of an attn program's `entry`, on
    attn's own layout ([B, H, T, D] activations, [B, H, T] per-token
    gates): call it with the arguments in the function's order; it returns
    the [B, H, T, Dv] result. `args` and `result` are the compiled
    signature ((dtype name, shape) pairs, None for a dynamic dim)."""

    def __init__(self, program, entry="main"):
        if not isinstance(program, str):
            raise ArgumentError("attn.torch.compile: the program is MLIR "
                                f"text, got {type(program).__name__}")
        self.program, self.entry = program, entry
        sig = _signature(program, entry)
        self.args = sig.args
        self.result = (str(sig.dtype).replace("torch.", ""),
                       (None, None, None, sig.dv))

    def __call__(self, *args):
        if len(args) != len(self.args):
            raise ArgumentError(f"attn.torch: @{self.entry} takes "
                                f"{len(self.args)} arguments, got "
                                f"{len(args)}")
        return _apply(self.program, self.entry, list(args), False)


def compile(program, entry="main"):
    """A differentiable torch callable of `program`'s function `entry`
    (MLIR text) on attn's [B, H, T, D] layout (class Program)."""
    return Program(program, entry)


# --------------------------------------------------------------------------
# Program text of the functional ops.

_MLIR_DTYPES = {torch.float32: "f32", torch.float16: "f16",
                torch.bfloat16: "bf16"}


def _act(D, dt):
    return f"tensor<?x?x?x{D}x{dt}>"


@functools.lru_cache(maxsize=1024)  # the text per call costs ~10 us
def _attention_program(dt, D, Dv, *, path=False, gate=False,
                       gate_scaled=False, causal=True, window=None,
                       scale=None, rope=None, mta=(), norm_eps=None,
                       packed=False):
    """One attn.attention op. Arguments in the op's operand order: q, k, v,
    w and beta (`path`), g (`gate`), then the MTA pieces `mta` names, a list
    of (operand name, type) in operand order, then cu_seqlens (`packed`).
    Attributes in the order of the op's assembly format."""
    params = [("q", _act(D, dt)), ("k", _act(D, dt)), ("v", _act(Dv, dt))]
    attrs = []
    if rope is not None:
        theta, style, rotary_dim = rope
        attrs.append(f"rope({float(theta):.17e})")
        if style != "half":
            attrs.append(f"rope_style {style}")
        if rotary_dim is not None:
            attrs.append(f"rope_dim {int(rotary_dim)}")
    if path:
        params += [("w", _act(D, "f32")), ("beta", "tensor<?x?x?xf32>")]
        attrs.append("path(%w, %beta)")
    if gate:
        params.append(("g", "tensor<?x?x?xf32>"))
        attrs.append("gate(%g)")
        if gate_scaled:
            attrs.append("scaled")
    names = [n for n, _ in mta]
    params += list(mta)
    for n in names:
        if n not in ("norm_gate_w", "norm_gate_b"):
            attrs.append(f"{n}(%{n})")
    if "norm_gate_w" in names:
        attrs.append("norm_gate(%norm_gate_w, %norm_gate_b)")
    if norm_eps is not None:
        attrs.append(f"norm_eps {float(norm_eps):.17e}")
    if packed:
        params.append(("cu_seqlens", "tensor<?xi32>"))
        attrs.append("cu_seqlens(%cu_seqlens)")
    if window is not None:
        attrs.append(f"mask sliding_window window {int(window)}")
    elif not causal:
        attrs.append("mask none")
    if scale is not None:
        attrs.append(f"scale {float(scale):.17e}")
    out = _act(Dv, dt)
    sig = ", ".join(f"%{n}: {t}" for n, t in params)
    types = ", ".join(t for _, t in params)
    return (f"func.func @main({sig}) -> {out} {{\n"
            f"  %o = attn.attention %q, %k, %v {' '.join(attrs)}\n"
            f"      : ({types}) -> {out}\n"
            f"  return %o : {out}\n}}\n")


# --------------------------------------------------------------------------
# Argument checks of the functional ops, in fla's layout and names: the
# runtime checks again, but in attn's layout and argument numbers.


def _shape(x):
    return tuple(x.shape)


def _check_tensor(name, x, dims, dtypes=None):
    if not isinstance(x, torch.Tensor):
        raise DTypeError(f"attn.torch: {name} is a {type(x).__name__}, "
                         "not a torch.Tensor")
    if x.dim() != len(dims):
        raise ArgumentError(f"attn.torch: {name} has shape {_shape(x)}: "
                            f"[{', '.join(dims)}] expected")
    if dtypes is not None and x.dtype not in dtypes:
        names = ", ".join(str(d).replace("torch.", "") for d in dtypes)
        raise DTypeError(f"attn.torch: {name} is "
                         f"{str(x.dtype).replace('torch.', '')}: "
                         f"{names} expected")


def _check_qkv(q, k, v):
    """(B, T, Hq, Hk, D, Dv, dtype name) of fla-layout q, k, v."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        _check_tensor(name, x, ("B", "T", "H", "D"),
                      tuple(_MLIR_DTYPES))
    if not (q.dtype == k.dtype == v.dtype):
        raise DTypeError(f"attn.torch: q, k, v are {q.dtype}, {k.dtype}, "
                         f"{v.dtype}: one dtype expected")
    B, T, Hq, D = q.shape
    if k.shape[:2] != (B, T) or v.shape[:2] != (B, T) or \
            k.shape[2] != v.shape[2] or k.shape[3] != D:
        raise ArgumentError(
            f"attn.torch: q {_shape(q)}, k {_shape(k)}, v {_shape(v)}: "
            "q [B, T, HQ, D], k [B, T, H, D], v [B, T, H, DV] expected")
    Hk = k.shape[2]
    if Hk == 0 or Hq % Hk:
        raise ArgumentError(f"attn.torch: {Hq} query heads and {Hk} key "
                            "heads: HQ a multiple of H expected (GQA)")
    if D == 0 or v.shape[3] == 0:
        raise ArgumentError("attn.torch: head dim 0")
    _device_of([q, k, v])
    return B, T, Hq, Hk, D, v.shape[3], _MLIR_DTYPES[q.dtype]


_FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def _check_per_token(name, x, shape, heads_of, dtypes=(torch.float32,)):
    _check_tensor(name, x, ("B", "T", "H"), dtypes)
    if _shape(x) != shape:
        raise ArgumentError(f"attn.torch: {name} has shape {_shape(x)}: "
                            f"{shape} expected ([B, T, {heads_of}])")


def _log_gate(g, shape, heads_of):
    """FoX's g as attn takes it, f32: fla's parallel_forgetting_attn takes
    any float dtype and sums it in f32 (a cast autograd differentiates)."""
    _check_per_token("g", g, shape, heads_of, _FLOATS)
    return g.float()


def _cu_seqlens(cu_seqlens, T):
    """Packed sequences' offsets as attn takes them (int32 [N + 1]): fla
    passes int64, FlashAttention int32. The runtime checks the values
    (0 first, nondecreasing, T last) where they are in host memory."""
    if cu_seqlens is None:
        return []
    _check_tensor("cu_seqlens", cu_seqlens, ("N + 1",),
                  (torch.int32, torch.int64))
    if cu_seqlens.shape[0] < 2:
        raise ArgumentError(f"attn.torch: cu_seqlens has "
                            f"{cu_seqlens.shape[0]} offsets: N + 1 >= 2 "
                            "expected (0, then the end of each sequence)")
    if cu_seqlens.dtype == torch.int64 and cu_seqlens.device.type == "cpu":
        bad = (cu_seqlens < 0) | (cu_seqlens > T)
        if bool(bad.any()):
            raise ArgumentError(f"attn.torch: cu_seqlens holds offsets "
                                f"outside [0, {T}]")
    return [cu_seqlens.to(torch.int32)]


def _bhtd(x):
    """fla's [B, T, H, ...] as attn's [B, H, T, ...]: a view."""
    return x.transpose(1, 2)


def _run_bthd(program, args, cu=()):
    """`args` in fla's layout, then cu_seqlens (`cu`: [] or [offsets])."""
    o = _apply(program, "main", [_bhtd(a) for a in args] + list(cu), True)
    return o.transpose(1, 2)


# --------------------------------------------------------------------------
# The functional ops.


def attention(q, k, v, scale=None, causal=True, window_size=None,
              rope_theta=None, rope_style="half", rope_dim=None,
              cu_seqlens=None):
    """Softmax attention on [B, T, H, D] tensors, optionally with RoPE.

    q [B, T, HQ, D], k [B, T, H, D], v [B, T, H, DV] (f32, f16 or bf16, one
    dtype; HQ a multiple of H: GQA) -> o [B, T, HQ, DV] in q's dtype.
    `scale` defaults to 1/sqrt(D). `causal` (default) masks keys after the
    query; `window_size` W keeps keys i - W < j <= i (causal sliding
    window). `rope_theta`: rotary embedding of q and k at positions
    0..T-1 (`rope_style` "half", GPT-NeoX, or "interleaved", GPT-J;
    `rope_dim` rotated features, default D), as attn.rope.
    `cu_seqlens` (int32 or int64 [N + 1], fla's and FlashAttention's
    offsets): the T tokens are N sequences laid end to end, sequence n at
    [cu_seqlens[n], cu_seqlens[n + 1]); each is computed as if alone (RoPE
    positions restart at 0)."""
    B, T, Hq, Hk, D, Dv, dt = _check_qkv(q, k, v)
    cu = _cu_seqlens(cu_seqlens, T)
    if rope_style not in ("half", "interleaved"):
        raise ArgumentError(f"attn.torch: rope_style '{rope_style}': "
                            "'half' or 'interleaved' expected")
    rope = None if rope_theta is None else (rope_theta, rope_style, rope_dim)
    program = _attention_program(dt, D, Dv, causal=causal,
                                 window=window_size, scale=scale, rope=rope,
                                 packed=bool(cu))
    return _run_bthd(program, [q, k, v], cu)


def forgetting_attention(q, k, v, g, scale=None, window_size=None,
                         cu_seqlens=None):
    """Forgetting attention, fla's parallel_forgetting_attn.

    q [B, T, HQ, D], k [B, T, H, D], v [B, T, H, DV] (f32, f16 or bf16),
    g [B, T, HQ]: the log forget gate (log sigmoid of the gate's logits,
    <= 0) per token and query head, any float dtype, used in f32. Logits
    scale * q_i . k_j + G_i - G_j with G the inclusive cumsum of g over the
    sequence (the gate term is not scaled), causal; `scale` defaults to
    1/sqrt(D); `window_size` W keeps keys i - W < j <= i.
    `cu_seqlens`: packed sequences, as `attention` takes them.
    -> o [B, T, HQ, DV] in q's dtype."""
    B, T, Hq, Hk, D, Dv, dt = _check_qkv(q, k, v)
    cu = _cu_seqlens(cu_seqlens, T)
    g = _log_gate(g, (B, T, Hq), "HQ")
    program = _attention_program(dt, D, Dv, gate=True, window=window_size,
                                 scale=scale, packed=bool(cu))
    return _run_bthd(program, [q, k, v, g], cu)


def path_attention(q, k, v, w, beta, g=None, scale=None, cu_seqlens=None):
    """PaTH attention (with g: PaTH-FoX), fla's parallel_path_attn.

    q [B, T, HQ, D], k [B, T, H, D], v [B, T, H, DV] (f32, f16 or bf16);
    w [B, T, H, D] f32 with unit rows (fla's layer L2-normalises w before
    the op; the op itself, here as in fla, does not); beta [B, T, H] f32
    in [0, 2]; g [B, T, HQ] f32 log forget gate or None. Logits
    scale * (q_i^T H_i ... H_{j+1} k_j + G_i - G_j) with
    H_t = I - beta_t w_t w_t^T and G the inclusive cumsum of g (the gate
    term is scaled too, fla's convention), causal; `scale` defaults to
    1/sqrt(D). -> o [B, T, HQ, DV] in q's dtype (fla returns (o, k_cache);
    this op returns o; `parallel_path_attn` returns (o, None) as fla's).
    `cu_seqlens`: packed sequences, as `attention` takes them."""
    B, T, Hq, Hk, D, Dv, dt = _check_qkv(q, k, v)
    cu = _cu_seqlens(cu_seqlens, T)
    _check_tensor("w", w, ("B", "T", "H", "D"), (torch.float32,))
    if _shape(w) != _shape(k):
        raise ArgumentError(f"attn.torch: w has shape {_shape(w)}: k's "
                            f"{_shape(k)} expected")
    _check_per_token("beta", beta, (B, T, Hk), "H")
    args = [q, k, v, w, beta]
    if g is not None:
        _check_per_token("g", g, (B, T, Hq), "HQ")
        args.append(g)
    program = _attention_program(dt, D, Dv, path=True, gate=g is not None,
                                 gate_scaled=True, scale=scale,
                                 packed=bool(cu))
    return _run_bthd(program, args, cu)


def mta_attention(q, k, v, kq_conv_pre=None, head_mix_pre=None,
                  kq_conv_post=None, head_mix_post=None, norm=None,
                  norm_gate_w=None, norm_gate_b=None, norm_eps=1e-5,
                  rope_theta=None, g=None, scale=None, window_size=None,
                  cu_seqlens=None):
    """Multi-Token Attention on [B, T, H, D] tensors; every piece optional.

    q [B, T, HQ, D], k [B, T, H, D], v [B, T, H, DV] (f32, f16 or bf16).
    kq_conv_pre / kq_conv_post [HQ, c_q, c_k] f32 (c_k odd): key-query
    convolution before / after the softmax (row c_q - 1 the current
    query, column (c_k - 1) / 2 the same key); head_mix_pre /
    head_mix_post [HQ, c_h] f32 (c_h divides HQ; c_h = HQ a full map,
    out[h] = sum_g W[h, g] in[g]); norm [DV] f32: per-head RMS norm's
    weight (eps `norm_eps`), norm_gate_w [DV] and norm_gate_b [1] f32 its
    scalar gate sigmoid(w . y + b); rope_theta: RoPE on q and k; g
    [B, T, HQ] f32: a FoX log forget gate. The released configuration:
    rope_theta=1e4, both convolutions [HQ, 6, 11], both head mixes
    [HQ, HQ], norm, norm_gate_w, norm_gate_b (examples/mta.mlir).
    `window_size` only without the convolutions and head mixes.
    `cu_seqlens`: packed sequences, as `attention` takes them; each is
    computed as if alone (the convolutions' halos stop at its start).
    -> o [B, T, HQ, DV] in q's dtype."""
    B, T, Hq, Hk, D, Dv, dt = _check_qkv(q, k, v)
    cu = _cu_seqlens(cu_seqlens, T)
    pieces, args = [], [q, k, v]
    if g is not None:
        args.append(_log_gate(g, (B, T, Hq), "HQ"))
    for name, x in (("kq_conv_pre", kq_conv_pre),
                    ("head_mix_pre", head_mix_pre),
                    ("kq_conv_post", kq_conv_post),
                    ("head_mix_post", head_mix_post)):
        if x is None:
            continue
        if name.startswith("kq_conv"):
            _check_tensor(name, x, ("HQ", "c_q", "c_k"), (torch.float32,))
            if x.shape[0] != Hq or x.shape[2] % 2 == 0 or x.shape[1] < 1:
                raise ArgumentError(
                    f"attn.torch: {name} has shape {_shape(x)}: "
                    f"[{Hq}, c_q, c_k] with c_k odd expected")
            pieces.append((name, f"tensor<?x{x.shape[1]}x{x.shape[2]}xf32>"))
        else:
            _check_tensor(name, x, ("HQ", "c_h"), (torch.float32,))
            if x.shape[0] != Hq or x.shape[1] < 1 or Hq % x.shape[1]:
                raise ArgumentError(
                    f"attn.torch: {name} has shape {_shape(x)}: "
                    f"[{Hq}, c_h] with c_h dividing {Hq} expected")
            pieces.append((name, "tensor<?x?xf32>"))
        args.append(x)
    if (norm_gate_w is None) != (norm_gate_b is None):
        raise ArgumentError("attn.torch: norm_gate_w and norm_gate_b go "
                            "together")
    if norm_gate_w is not None and norm is None:
        raise ArgumentError("attn.torch: norm_gate_w needs norm")
    if norm is not None:
        for name, x, n in (("norm", norm, Dv),
                           ("norm_gate_w", norm_gate_w, Dv),
                           ("norm_gate_b", norm_gate_b, 1)):
            if x is None:
                continue
            _check_tensor(name, x, ("N",), (torch.float32,))
            if x.shape[0] != n:
                raise ArgumentError(f"attn.torch: {name} has shape "
                                    f"{_shape(x)}: [{n}] expected")
            pieces.append((name, f"tensor<{n}xf32>"))
            args.append(x)
    if (kq_conv_pre is not None or kq_conv_post is not None or
            head_mix_pre is not None or head_mix_post is not None) and \
            window_size is not None:
        raise ArgumentError("attn.torch: MTA's convolutions and head mixes "
                            "need the causal mask: window_size must be None")
    rope = None if rope_theta is None else (rope_theta, "half", None)
    program = _attention_program(
        dt, D, Dv, gate=g is not None, window=window_size, scale=scale,
        rope=rope, mta=tuple(pieces),
        norm_eps=norm_eps if norm is not None else None, packed=bool(cu))
    # Activations in attn's layout; the MTA pieces as they are.
    n_act = 4 if g is not None else 3
    acts = [_bhtd(a) for a in args[:n_act]]
    o = _apply(program, "main", acts + args[n_act:] + cu, True)
    return o.transpose(1, 2)


# --------------------------------------------------------------------------
# fla's names and return values, for code written against fla: swap the
# import and nothing else changes.


def parallel_path_attn(q, k, v, w, beta, g=None, scale=None,
                       cu_seqlens=None, use_cache=False):
    """fla's parallel_path_attn: path_attention's result as fla returns it,
    (o, k_cache), with k_cache None (use_cache=True, fla's decoding cache,
    is refused)."""
    if use_cache:
        raise ArgumentError("attn.torch: use_cache (fla's PaTH decoding "
                            "cache) is not supported")
    return path_attention(q, k, v, w, beta, g, scale, cu_seqlens), None


def parallel_forgetting_attn(q, k, v, g, scale=None, window_size=None,
                             cu_seqlens=None):
    """fla's parallel_forgetting_attn: forgetting_attention."""
    return forgetting_attention(q, k, v, g, scale, window_size, cu_seqlens)
