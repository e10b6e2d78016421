"""attn from Python: compile an attn program once, launch it on any array
that exports DLPack (NumPy on the CPU; PyTorch, CuPy, JAX on the GPU).

Pure ctypes over the C API (attn/attn.h in libattn.so); no compiled
extension. The library is found through $ATTN_LIBRARY, else inside this
package (`pip install python/` bundles it), else next to it (an installed
prefix: <prefix>/lib/python/attn -> <prefix>/lib), else a build tree
(build/lib), else the loader's search path.

    import numpy as np, attn
    engine = attn.Engine("cpu")                 # "cpu", "cuda", "auto"/None
    kernel = engine.compile(open("examples/fox.mlir").read())
    o = kernel(q, k, v, g)                      # allocates the output
    kernel(q, k, v, g, out=o)                   # or writes into yours

A kernel whose entry function returns several results (kernel.results)
returns a tuple of arrays, and `out` is then a tuple of arrays, one per
result in result order.

A function's training pair (docs/training.md):

    train = engine.compile_training(open("examples/fox.mlir").read())
    o, saved = train.forward(q, k, v, g)        # saved: the row LSEs
    dq, dk, dv, dg = train.backward(q, k, v, g, o, *saved, dO)

Inputs and `out` may be any strided views (e.g. a [B, S, H, D] array
transposed to [B, H, S, D]). On the GPU the call enqueues on `stream` (an
integer CUstream handle; None: the legacy default stream) and returns
without waiting. Failures raise attn.Error with the runtime's message.
"""

import ctypes
import ctypes.util
import os

__all__ = ["Engine", "Kernel", "Training", "Error"]

kDLCPU, kDLCUDA, kDLCUDAManaged = 1, 2, 13
kDLInt, kDLUInt, kDLFloat, kDLBfloat = 0, 1, 2, 4
MAX_RANK = 8


class Error(RuntimeError):
    """A failed attn call: `status` is the attn_status code."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", _DLTensor)]


_DLPACK_FLAG_READ_ONLY = 1


class _TensorInfo(ctypes.Structure):
    _fields_ = [("dtype", _DLDataType), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK)]


def _find_library():
    env = os.environ.get("ATTN_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for rel in (".", "../..", "../../build/lib", "../../lib"):
        p = os.path.normpath(os.path.join(here, rel, "libattn.so"))
        if os.path.exists(p):
            return p
    found = ctypes.util.find_library("attn")
    if not found:
        raise ImportError("libattn.so not found: set ATTN_LIBRARY")
    return found


def _load():
    lib = ctypes.CDLL(_find_library())
    P = ctypes.POINTER
    vp = ctypes.c_void_p
    sigs = {
        "attn_last_error": (ctypes.c_char_p, []),
        "attn_engine_create": (ctypes.c_int, [ctypes.c_char_p, P(vp)]),
        "attn_engine_destroy": (None, [vp]),
        "attn_engine_device": (ctypes.c_int, [vp, P(_DLDevice)]),
        "attn_compile": (ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_size_t,
                                        ctypes.c_char_p, P(vp)]),
        "attn_kernel_destroy": (None, [vp]),
        "attn_kernel_num_args": (ctypes.c_int, [vp, P(ctypes.c_size_t)]),
        "attn_kernel_arg_info": (ctypes.c_int, [vp, ctypes.c_size_t,
                                                P(_TensorInfo)]),
        "attn_kernel_result_info": (ctypes.c_int, [vp, P(_TensorInfo)]),
        "attn_kernel_device": (ctypes.c_int, [vp, P(_DLDevice)]),
        "attn_kernel_result_shape": (ctypes.c_int, [vp, P(_DLTensor),
                                                    ctypes.c_size_t,
                                                    P(ctypes.c_int64)]),
        "attn_kernel_num_results": (ctypes.c_int, [vp, P(ctypes.c_size_t)]),
        "attn_kernel_result_info_at": (ctypes.c_int, [vp, ctypes.c_size_t,
                                                      P(_TensorInfo)]),
        "attn_kernel_result_shape_at": (ctypes.c_int, [vp, ctypes.c_size_t,
                                                       P(_DLTensor),
                                                       ctypes.c_size_t,
                                                       P(ctypes.c_int64)]),
        "attn_kernel_remark": (ctypes.c_char_p, [vp, ctypes.c_size_t]),
        "attn_launch": (ctypes.c_int, [vp, P(_DLTensor), ctypes.c_size_t,
                                       P(_DLTensor), vp]),
        "attn_launch_outputs": (ctypes.c_int, [vp, P(_DLTensor),
                                               ctypes.c_size_t, P(_DLTensor),
                                               ctypes.c_size_t, vp]),
        "attn_compile_training": (ctypes.c_int, [vp, ctypes.c_char_p,
                                                 ctypes.c_size_t,
                                                 ctypes.c_char_p, P(vp),
                                                 P(vp)]),
        "attn_kernel_grad_arg": (ctypes.c_int, [vp, ctypes.c_size_t,
                                                P(ctypes.c_size_t)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


_lib = _load()
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
ctypes.pythonapi.PyCapsule_IsValid.restype = ctypes.c_int
ctypes.pythonapi.PyCapsule_IsValid.argtypes = [ctypes.py_object,
                                               ctypes.c_char_p]


def _check(status):
    if status != 0:
        raise Error(status, _lib.attn_last_error().decode(errors="replace"))


_DTYPE_NAMES = {(kDLFloat, 32): "float32", (kDLFloat, 16): "float16",
                (kDLBfloat, 16): "bfloat16", (kDLFloat, 64): "float64",
                (kDLInt, 64): "int64", (kDLInt, 32): "int32"}


def _info(i):
    name = _DTYPE_NAMES.get((i.dtype.code, i.dtype.bits), "unknown")
    return name, tuple(None if d < 0 else d for d in i.shape[:i.ndim])


def _export(x, stream, writable=False):
    """(capsule, DLTensor) of a DLPack-exporting array. The capsule keeps
    the producer's memory alive and, left unconsumed, frees the managed
    tensor when it is collected. DLPack 1.0 first: a producer can then
    export a read-only array (NumPy refuses it through the old protocol);
    one that predates max_version gets the old call. `writable`: refuse a
    read-only array (the output)."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"{type(x).__name__} does not export DLPack")
    dev_type, _ = x.__dlpack_device__()
    kwargs = {}
    if int(dev_type) in (kDLCUDA, kDLCUDAManaged):
        # The producer orders its pending writes before work on `stream`
        # (DLPack: 1 is CUDA's legacy default stream).
        kwargs["stream"] = stream if stream else 1
    try:
        capsule = x.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        try:
            capsule = x.__dlpack__(**kwargs)
        except BufferError as e:
            # A producer older than DLPack 1.0 (NumPy before 2.1) cannot
            # mark an export read-only, so it refuses read-only arrays.
            if writable:
                raise Error(1, "the output is read-only") from e
            raise Error(1, f"a read-only {type(x).__name__} cannot be "
                        f"exported by this producer ({e}); NumPy 2.1 or "
                        "newer exports it (DLPack 1.0), or pass a writable "
                        "copy") from e
    if ctypes.pythonapi.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        managed = _DLManagedTensorVersioned.from_address(
            _capsule_pointer(capsule, b"dltensor_versioned"))
        if managed.version.major != 1:
            raise Error(1, f"DLPack {managed.version.major}."
                        f"{managed.version.minor} tensor: version 1 expected")
        if writable and managed.flags & _DLPACK_FLAG_READ_ONLY:
            raise Error(1, "the output is read-only")
        return capsule, managed.dl_tensor
    managed = _DLManagedTensor.from_address(
        _capsule_pointer(capsule, b"dltensor"))
    return capsule, managed.dl_tensor


def _device_name(d):
    return "cpu" if d.device_type == kDLCPU else "cuda"


class Engine:
    """A device and its compiled-kernel cache (attn_engine)."""

    def __init__(self, device=None):
        self._handle = None
        handle = ctypes.c_void_p()
        _check(_lib.attn_engine_create(
            device.encode() if device else None, ctypes.byref(handle)))
        self._handle = handle
        d = _DLDevice()
        _check(_lib.attn_engine_device(handle, ctypes.byref(d)))
        self.device = _device_name(d)

    def compile(self, program, entry="main"):
        """Compiles `program` (MLIR text) once; it then runs at any B, H, T,
        S. The same text and entry come back from the engine's cache."""
        text = program.encode() if isinstance(program, str) else program
        handle = ctypes.c_void_p()
        _check(_lib.attn_compile(self._handle, text, len(text),
                                 entry.encode(), ctypes.byref(handle)))
        return Kernel(handle)

    def compile_training(self, program, entry="main"):
        """Compiles `program`'s function `entry` for training (attn-grad,
        docs/training.md): a Training with forward() and backward()."""
        text = program.encode() if isinstance(program, str) else program
        fwd, bwd = ctypes.c_void_p(), ctypes.c_void_p()
        _check(_lib.attn_compile_training(self._handle, text, len(text),
                                          entry.encode(), ctypes.byref(fwd),
                                          ctypes.byref(bwd)))
        return Training(Kernel(fwd), Kernel(bwd))

    def close(self):
        if self._handle:
            _lib.attn_engine_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class Kernel:
    """A compiled program (attn_kernel): call it on arrays. `args` and
    `results` are (dtype name, shape) pairs, None for a dynamic dim;
    `result` is the first result's (the only one of most programs)."""

    def __init__(self, handle):
        self._handle = handle  # owned from here: __del__ destroys it
        n = ctypes.c_size_t()
        _check(_lib.attn_kernel_num_args(handle, ctypes.byref(n)))
        info = _TensorInfo()
        self.args = []
        for i in range(n.value):
            _check(_lib.attn_kernel_arg_info(handle, i, ctypes.byref(info)))
            self.args.append(_info(info))
        _check(_lib.attn_kernel_num_results(handle, ctypes.byref(n)))
        self.results = []
        for i in range(n.value):
            _check(_lib.attn_kernel_result_info_at(handle, i,
                                                   ctypes.byref(info)))
            self.results.append(_info(info))
        self.result = self.results[0]
        d = _DLDevice()
        _check(_lib.attn_kernel_device(handle, ctypes.byref(d)))
        self.device = _device_name(d)
        self.remarks = []
        while True:
            r = _lib.attn_kernel_remark(handle, len(self.remarks))
            if r is None:
                break
            self.remarks.append(r.decode(errors="replace"))

    def _tensors(self, arrays, stream):
        exported = [_export(a, stream) for a in arrays]
        array = (_DLTensor * max(len(exported), 1))(*[t for _, t in exported])
        return exported, array

    def result_shape(self, *inputs):
        """The result's shape for these inputs (one-result kernels)."""
        exported, array = self._tensors(inputs, None)
        shape = (ctypes.c_int64 * MAX_RANK)()
        _check(_lib.attn_kernel_result_shape(self._handle, array,
                                             len(exported), shape))
        return tuple(shape[:len(self.result[1])])

    def result_shapes(self, *inputs):
        """Every result's shape for these inputs, in result order."""
        exported, array = self._tensors(inputs, None)
        shapes = []
        for i, (_, sig) in enumerate(self.results):
            shape = (ctypes.c_int64 * MAX_RANK)()
            _check(_lib.attn_kernel_result_shape_at(self._handle, i, array,
                                                    len(exported), shape))
            shapes.append(tuple(shape[:len(sig)]))
        return shapes

    def _allocate(self, like, shape, name):
        module = type(like).__module__.split(".")[0]
        if module == "torch":
            import torch
            return torch.empty(shape, dtype=getattr(torch, name),
                               device=like.device)
        if module == "cupy":
            import cupy
            return cupy.empty(shape, dtype=name)
        import numpy
        if name == "bfloat16":
            raise Error(1, "NumPy has no bfloat16: pass out=")
        return numpy.empty(shape, dtype=name)

    def __call__(self, *inputs, out=None, stream=None):
        """Runs on `inputs` (argument order) into `out` (allocated like the
        first input when None) and returns `out`. With several results,
        `out` is a tuple of arrays, one per result, and so is what returns."""
        several = len(self.results) > 1
        if out is None:
            shapes = self.result_shapes(*inputs)
            outs = tuple(self._allocate(inputs[0], shape, name)
                         for shape, (name, _) in zip(shapes, self.results))
        elif several:
            if not isinstance(out, (tuple, list)):
                raise Error(1, f"the kernel returns {len(self.results)} "
                            "results: pass out= as a tuple of arrays, one "
                            "per result")
            outs = tuple(out)
        else:
            outs = (out,)
        exported, array = self._tensors(inputs, stream)
        out_exported = [_export(o, stream, writable=True) for o in outs]
        out_array = (_DLTensor * len(out_exported))(
            *[t for _, t in out_exported])
        _check(_lib.attn_launch_outputs(self._handle, array, len(exported),
                                        out_array, len(out_exported),
                                        ctypes.c_void_p(stream or 0)))
        del exported, out_exported
        return outs if several else outs[0]

    def close(self):
        if self._handle:
            _lib.attn_kernel_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class Training:
    """A function's training pair (Engine.compile_training): `forward(*args)`
    returns (o, saved), `backward(*args, o, *saved, dO)` the gradients, one
    per float argument in argument order; `grad_args[i]` is the argument
    gradient i belongs to (integer arguments, RoPE positions, have none).
    `saved` is the state the backward needs: one float32 [B, H, T] row
    log-sum-exp per attention or softmax. `forward_kernel` and `backward_kernel` are the two Kernels."""

    def __init__(self, forward, backward):
        self.forward_kernel = forward
        self.backward_kernel = backward
        self.grad_args = []
        arg = ctypes.c_size_t()
        for i in range(len(backward.results)):
            _check(_lib.attn_kernel_grad_arg(backward._handle, i,
                                             ctypes.byref(arg)))
            self.grad_args.append(arg.value)

    def forward(self, *inputs, stream=None):
        """(o, saved): the function's result and the saved state, a tuple."""
        outs = self.forward_kernel(*inputs, out=None, stream=stream)
        if len(self.forward_kernel.results) == 1:
            return outs, ()
        return outs[0], tuple(outs[1:])

    def backward(self, *inputs, stream=None):
        """The gradients (a tuple) for inputs (args, o, *saved, dO)."""
        grads = self.backward_kernel(*inputs, out=None, stream=stream)
        return grads if isinstance(grads, tuple) else (grads,)
