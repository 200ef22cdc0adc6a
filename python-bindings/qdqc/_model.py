"""_model: Model (one compiled network) and Error.

A Model owns one qdqc_context, one qdqc_module made from it, its qdqc_compile_options and, when
the engine is "jit", one qdqc_jit session (and a qdqc_threadpool if threads > 1); close() or the
garbage collector destroys them all. One Model must be used by one thread at a time; separate
Models are independent (no global state in libqdqc).
"""
import collections
import ctypes
import os
import time
import warnings

import numpy as np

from . import _lib

_DTYPES = {
    "f32": np.float32, "f16": np.float16, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
    "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
    "i4": np.int8, "u4": np.uint8, "bool": np.bool_,
}


def dtype_of(elem_type):
    """numpy dtype of a qdqc element type name ("f32", "i8", ...); i4/u4 are one per byte."""
    try:
        return np.dtype(_DTYPES[elem_type])
    except KeyError:
        raise Error("dtype", "QDQC_ERR_UNSUPPORTED", f"element type {elem_type} has no numpy dtype")


def elem_type_of(dtype):
    """qdqc element type name of a numpy dtype (the inverse of dtype_of, without i4/u4)."""
    dt = np.dtype(dtype)
    for elem, t in _DTYPES.items():
        if elem not in ("i4", "u4") and np.dtype(t) == dt:
            return elem
    raise Error("dtype", "QDQC_ERR_UNSUPPORTED", f"numpy dtype {dt} has no qdqc element type")


class EngineWarning(RuntimeWarning):
    """Model.run fell back to the reference engine; Model.jit_error says why."""


class Error(Exception):
    """A failed qdqc call: `what` failed with `status` ("QDQC_ERR_PARSE", ...); `diagnostics`
    is the library's text, one "LOCATION: error: MESSAGE" per line."""

    def __init__(self, what, status, diagnostics=""):
        self.what = what
        self.status = status
        self.diagnostics = diagnostics.rstrip("\n")
        msg = f"{what}: {status}"
        if self.diagnostics:
            msg += "\n" + self.diagnostics
        super().__init__(msg)


class InputTypeError(Error, TypeError):
    """Model.run got an array whose dtype is not the input's: qdqc never casts an array
    silently (a float64 array for a u8 input would be truncated). Also a qdqc.Error."""

    def __init__(self, diagnostics):
        super().__init__("run", "QDQC_ERR_INVALID_ARG", diagnostics)


TensorInfo = collections.namedtuple("TensorInfo", "name shape elem_type dtype")
TensorInfo.__doc__ = "A graph input or output: name, shape (tuple), qdqc elem_type, numpy dtype"

Step = collections.namedtuple("Step", "index name op macs")
Step.__doc__ = ("A step of the compiled model, in run order (qdqc_jit_step_*): its node's ONNX "
                "name, its qdqc op ('qconv', 'qconv+qadd' when a residual Add is fused) and "
                "its multiply-adds (0 for ops without)")

StepTime = collections.namedtuple("StepTime", "index name op macs seconds")
StepTime.__doc__ = ("A step and its time in Model.profile(): the minimum over the timed runs "
                    "of the time between the hook's begin and end calls, in seconds")


class Model:
    """A network after the pass pipeline. Build with qdqc.compile()."""

    @classmethod
    def _new(cls, lib, target, requant):
        self = cls.__new__(cls)
        self._lib = lib
        self._mod = None
        self._opts = None
        self._jit = None
        self._pool = None
        self._ctx = lib.qdqc_context_create()
        if not self._ctx:
            raise Error("qdqc_context_create", "QDQC_ERR_NOMEM")
        self.target = target
        self.requant = requant
        self.engine = None
        self.jit_error = None
        self._earlier_diags = ""
        self.inputs = []
        self.outputs = []
        return self

    def _set_codegen_options(self, options):
        """options: {qdqc_compile_options_set name: value}; None values are skipped."""
        lib = self._lib
        if not _lib.has(lib, "qdqc_compile_options_create"):
            return
        self._opts = lib.qdqc_compile_options_create()
        if not self._opts:
            raise Error("qdqc_compile_options_create", "QDQC_ERR_NOMEM")
        for name, value in options.items():
            if value is not None:
                self._check(lib.qdqc_compile_options_set(self._opts, name.encode(),
                                                         str(value).encode()), name)

    def __init__(self):
        raise TypeError("use qdqc.compile() to make a Model")

    # ---- internals ----
    def _diagnostics(self):
        d = self._lib.qdqc_context_get_diagnostics(self._ctx)
        return d.decode(errors="replace") if d else ""

    def _check(self, status, what):
        if status != 0:
            name = self._lib.qdqc_status_name(status).decode()
            diags = self._diagnostics()
            self._lib.qdqc_context_clear_diagnostics(self._ctx)
            raise Error(what, name, diags)

    def _load(self, what, fn):
        out = ctypes.c_void_p()
        self._check(fn(ctypes.byref(out)), what)
        self._mod = out.value

    def _io(self, kind, count):
        lib = self._lib
        res = []
        for i in range(count):
            name = getattr(lib, f"qdqc_module_{kind}_name")(self._mod, i).decode()
            rank = getattr(lib, f"qdqc_module_{kind}_rank")(self._mod, i)
            dims = getattr(lib, f"qdqc_module_{kind}_dims")(self._mod, i)
            elem = getattr(lib, f"qdqc_module_{kind}_elem_type")(self._mod, i).decode()
            # a symbolic dimension (negative) reads None
            shape = tuple(int(dims[k]) if dims[k] >= 0 else None for k in range(rank))
            res.append(TensorInfo(name, shape, elem, dtype_of(elem)))
        return res

    def _finish(self, engine="auto", threads=None):
        lib = self._lib
        self.inputs = self._io("input", lib.qdqc_module_input_count(self._mod))
        self.outputs = self._io("output", lib.qdqc_module_output_count(self._mod))
        self.engine = "reference"
        if engine == "reference":
            return
        if engine not in ("auto", "jit"):
            raise Error("engine", "QDQC_ERR_INVALID_ARG",
                        f"unknown engine '{engine}' (auto, jit, reference)")
        reason = self._start_jit(threads)
        if reason is None:
            self.engine = "jit"
            return
        if engine == "jit":
            raise Error("jit", reason[0], reason[1])
        self.jit_error = reason[1]
        warnings.warn(f"qdqc: using the reference engine: {self.jit_error}", EngineWarning,
                      stacklevel=3)

    def _start_jit(self, threads):
        """Create the JIT session; None, or (status name, reason) if that is impossible."""
        lib = self._lib
        if not _lib.has(lib, "qdqc_jit_create"):
            return "QDQC_ERR_UNSUPPORTED", "this libqdqc has no JIT (qdqc_jit_create)"
        out = ctypes.c_void_p()
        before = self._diagnostics()
        st = lib.qdqc_jit_create(self._mod, self._opts, ctypes.byref(out))
        if st != 0:
            # the reason is what qdqc_jit_create added; the earlier remarks stay for report()
            after = self._diagnostics()
            new = after[len(before):] if after.startswith(before) else after
            lib.qdqc_context_clear_diagnostics(self._ctx)
            self._earlier_diags = before
            name = lib.qdqc_status_name(st).decode()
            return name, new.rstrip("\n") or name
        self._jit = out.value
        if threads is not None and int(threads) > 1:
            self._pool = lib.qdqc_threadpool_create(int(threads))
            if not self._pool:
                raise Error("threads", "QDQC_ERR_NOMEM", f"cannot start {threads} threads")
            pf = ctypes.cast(lib.qdqc_threadpool_parallel_for, ctypes.c_void_p)
            lib.qdqc_jit_set_parallel_for(self._jit, pf, self._pool)
        return None

    @property
    def can_save_object(self):
        """True if the loaded libqdqc can write objects and headers."""
        return _lib.has(self._lib, "qdqc_module_compile_to_file")

    @property
    def workspace_size(self):
        """Bytes of scratch memory the compiled code uses (the JIT session's; 0 without one)."""
        return int(self._lib.qdqc_jit_workspace_size(self._jit)) if self._jit else 0

    @property
    def steps(self):
        """The compiled model's steps in run order, as Step(index, name, op, macs); empty
        without a JIT session (the reference engine)."""
        lib = self._lib
        if not self._jit or not _lib.has(lib, "qdqc_jit_step_count"):
            return []
        return [Step(i, lib.qdqc_jit_step_name(self._jit, i).decode(errors="replace"),
                     lib.qdqc_jit_step_op(self._jit, i).decode(), int(lib.qdqc_jit_step_macs(self._jit, i)))
                for i in range(lib.qdqc_jit_step_count(self._jit))]

    def profile(self, *args, iters=10, warmup=2, **arrays):
        """Time every step of the compiled model (compile(..., profile=True), the step hook of
        docs/abi.md): `warmup` untimed runs, then `iters` timed ones on the given inputs (as
        Model.run). Returns a list of StepTime(index, name, op, macs, seconds) in run order,
        seconds the minimum over the timed runs (the hook is a Python call: each step's time
        includes about a microsecond of it). Error if the model was not compiled with
        profile=True or runs in the reference engine."""
        self._live()
        lib = self._lib
        if not self._jit:
            raise Error("profile", "QDQC_ERR_INVALID_ARG",
                        f"profile needs the JIT engine (this model runs in '{self.engine}')")
        if int(iters) < 1 or int(warmup) < 0:
            raise Error("profile", "QDQC_ERR_INVALID_ARG", "iters must be >= 1, warmup >= 0")
        steps = self.steps
        n = len(steps)
        begin = [0] * n
        best = [None] * n
        timing = [False]

        def hook(_ctx, step, end):
            t = time.perf_counter_ns()
            if 0 <= step < n:
                if not end:
                    begin[step] = t
                elif timing[0]:
                    d = t - begin[step]
                    if best[step] is None or d < best[step]:
                        best[step] = d

        cb = _lib.PROFILE_FN(hook)
        st = lib.qdqc_jit_set_profile_hook(self._jit, ctypes.cast(cb, ctypes.c_void_p), None)
        if st != 0:
            lib.qdqc_context_clear_diagnostics(self._ctx)
            raise Error("profile", lib.qdqc_status_name(st).decode(),
                        "the model has no step hook: compile it with qdqc.compile(..., "
                        "profile=True)")
        try:
            ins = self._inputs_from(args, arrays)
            outs = [np.empty(t.shape, t.dtype) for t in self.outputs]
            in_ptrs = (ctypes.c_void_p * max(1, len(ins)))(*[a.ctypes.data for a in ins])
            out_ptrs = (ctypes.c_void_p * max(1, len(outs)))(*[a.ctypes.data for a in outs])
            for r in range(int(warmup) + int(iters)):
                timing[0] = r >= int(warmup)
                self._check(lib.qdqc_jit_run(self._jit, in_ptrs, out_ptrs), "profile")
        finally:
            lib.qdqc_jit_set_profile_hook(self._jit, None, None)
        return [StepTime(s.index, s.name, s.op, s.macs, (best[s.index] or 0) * 1e-9)
                for s in steps]

    def _string(self, ptr, what, status="QDQC_ERR_INVALID_ARG"):
        if not ptr:
            raise Error(what, status, self._diagnostics())
        try:
            return ctypes.string_at(ptr).decode()
        finally:
            self._lib.qdqc_string_free(ptr)

    # ---- public ----
    def close(self):
        """Free the JIT session, the module and its context (also done when the Model is
        collected)."""
        if getattr(self, "_jit", None):
            self._lib.qdqc_jit_destroy(self._jit)
            self._jit = None
        if getattr(self, "_pool", None):
            self._lib.qdqc_threadpool_destroy(self._pool)
            self._pool = None
        if getattr(self, "_opts", None):
            self._lib.qdqc_compile_options_destroy(self._opts)
            self._opts = None
        if getattr(self, "_mod", None):
            self._lib.qdqc_module_destroy(self._mod)
            self._mod = None
        if getattr(self, "_ctx", None):
            self._lib.qdqc_context_destroy(self._ctx)
            self._ctx = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _live(self):
        if not self._mod:
            raise Error("model", "QDQC_ERR_INVALID_ARG", "the model is closed")

    def ir(self):
        """The qdqc text IR of the network after the pipeline (docs/ir.md)."""
        self._live()
        return self._string(self._lib.qdqc_module_print(self._mod), "ir")

    def mlir(self):
        """The integer graph as MLIR (tosa; docs/mlir.md)."""
        self._live()
        if not _lib.has(self._lib, "qdqc_module_print_mlir"):
            raise Error("mlir", "QDQC_ERR_UNSUPPORTED", "this libqdqc has no MLIR export")
        return self._string(self._lib.qdqc_module_print_mlir(self._mod), "mlir",
                            "QDQC_ERR_UNSUPPORTED")

    def report(self):
        """A short text summary: engine (and why not the JIT), requantization, inputs/outputs,
        then what each node became (qdqc_module_report) and the warnings and remarks the
        compilation left."""
        self._live()
        if _lib.has(self._lib, "qdqc_module_report"):
            lines = [f"engine: {self.engine}"]
            if self.jit_error:
                lines.append(f"jit unavailable: {self.jit_error}")
            lines += [f"requant: {self.requant}", f"target: {self.target or 'host'}"]
            for kind, infos in (("input", self.inputs), ("output", self.outputs)):
                for t in infos:
                    lines.append(f"{kind} {t.name}: {t.elem_type}{list(t.shape)}")
            lines.append(self._string(self._lib.qdqc_module_report(self._mod),
                                      "report").rstrip("\n"))
            diags = self._earlier_diags + self._diagnostics()
            if diags:
                lines.append(diags.rstrip("\n"))
            return "\n".join(lines) + "\n"
        ops = collections.Counter()
        for line in self.ir().splitlines():
            s = line.strip()
            if "=" in s and not s.startswith(("graph", "//")):
                rhs = s.split("=", 1)[1].split()
                if rhs:
                    ops[rhs[0]] += 1
        lines = [f"engine: {self.engine}", f"requant: {self.requant}",
                 f"target: {self.target or 'host'}"]
        for kind, infos in (("input", self.inputs), ("output", self.outputs)):
            for t in infos:
                lines.append(f"{kind} {t.name}: {t.elem_type}{list(t.shape)}")
        lines.append("ops: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
        diags = self._earlier_diags + self._diagnostics()
        if diags:
            lines.append(diags.rstrip("\n"))
        return "\n".join(lines) + "\n"

    def _named(self, args, arrays):
        """{input name: value} from positional values (in the order of Model.inputs) and
        named ones."""
        if len(args) > len(self.inputs):
            raise Error("run", "QDQC_ERR_INVALID_ARG",
                        f"{len(args)} positional inputs given, the model has "
                        f"{len(self.inputs)} ({', '.join(t.name for t in self.inputs)})")
        named = {}
        for t, a in zip(self.inputs, args):
            if t.name in arrays:
                raise Error("run", "QDQC_ERR_INVALID_ARG",
                            f"input '{t.name}' given both by position and by name")
            named[t.name] = a
        named.update(arrays)
        return named

    @staticmethod
    def _as_input(t, value):
        """value as a C-order array of input t's dtype. An array (or numpy scalar) must have
        exactly that dtype; a Python list or number is converted when its values fit (integers
        in range for an integer input; numbers of any kind for a float input)."""
        want = f"{t.dtype} ({t.elem_type})"
        if isinstance(value, (np.ndarray, np.generic)):
            if value.dtype != t.dtype:
                raise InputTypeError(
                    f"input '{t.name}': dtype {value.dtype}, expected {want}; qdqc does not "
                    f"cast arrays, convert it with .astype(np.{t.dtype.name})")
            return np.ascontiguousarray(value)
        a = np.asarray(value)
        if t.dtype.kind == "f":
            ok = a.dtype.kind in "biuf"
        elif t.dtype.kind in "iu":
            info = np.iinfo(t.dtype)
            ok = a.dtype.kind in "biu" and (
                not a.size or (int(a.min()) >= info.min and int(a.max()) <= info.max))
        else:
            ok = a.dtype.kind == t.dtype.kind
        if not ok:
            raise InputTypeError(
                f"input '{t.name}': {type(value).__name__} of {a.dtype} values does not fit "
                f"{want}; pass an array of that dtype")
        return np.ascontiguousarray(a, dtype=t.dtype)

    def _inputs_from(self, args, arrays):
        arrays = self._named(args, arrays)
        names = [t.name for t in self.inputs]
        unknown = sorted(set(arrays) - set(names))
        missing = [n for n in names if n not in arrays]
        if unknown or missing:
            raise Error("run", "QDQC_ERR_INVALID_ARG",
                        f"inputs: expected {names}, missing {missing}, unknown {unknown}")
        res = []
        for t in self.inputs:
            a = self._as_input(t, arrays[t.name])
            if len(a.shape) != len(t.shape) or any(
                    w is not None and d != w for d, w in zip(a.shape, t.shape)):
                raise Error("run", "QDQC_ERR_INVALID_ARG",
                            f"input '{t.name}': shape {a.shape}, expected {t.shape}")
            res.append(a)
        return res

    def _dynamic(self):
        return any(d is None for t in self.inputs + self.outputs for d in t.shape)

    def _run_shapes(self, args, arrays):
        """A JIT session with a run-time dimension: qdqc_jit_run_shapes sizes the outputs from
        the inputs' shapes (a first call without outputs), then runs."""
        self._live()
        lib = self._lib
        ins = self._inputs_from(args, arrays)
        shp = [(ctypes.c_int64 * max(1, a.ndim))(*a.shape) for a in ins]
        oshp = [(ctypes.c_int64 * max(1, len(t.shape)))() for t in self.outputs]
        vp = ctypes.c_void_p
        in_shapes = (vp * max(1, len(ins)))(*[ctypes.cast(x, vp) for x in shp])
        out_shapes = (vp * max(1, len(oshp)))(*[ctypes.cast(x, vp) for x in oshp])
        in_ptrs = (vp * max(1, len(ins)))(*[a.ctypes.data for a in ins])
        self._check(lib.qdqc_jit_run_shapes(self._jit, in_shapes, in_ptrs, out_shapes, None),
                    "run")
        outs = [np.empty(tuple(o[k] for k in range(len(t.shape))), t.dtype)
                for t, o in zip(self.outputs, oshp)]
        out_ptrs = (vp * max(1, len(outs)))(*[a.ctypes.data for a in outs])
        self._check(lib.qdqc_jit_run_shapes(self._jit, in_shapes, in_ptrs, out_shapes, out_ptrs),
                    "run")
        return {t.name: a for t, a in zip(self.outputs, outs)}

    def _run_with(self, fn, what, args, arrays):
        self._live()
        if self._dynamic():
            raise Error(what, "QDQC_ERR_INVALID_ARG",
                        "the model has a run-time dimension: the JIT runs it at any size "
                        "(Model.run); the reference interpreter needs it bound (dims={name: n})")
        ins = self._inputs_from(args, arrays)
        outs = [np.empty(t.shape, t.dtype) for t in self.outputs]
        in_ptrs = (ctypes.c_void_p * max(1, len(ins)))(*[a.ctypes.data for a in ins])
        out_ptrs = (ctypes.c_void_p * max(1, len(outs)))(*[a.ctypes.data for a in outs])
        self._check(fn(in_ptrs, out_ptrs), what)
        return {t.name: a for t, a in zip(self.outputs, outs)}

    def run(self, *args, **arrays):
        """Run the network; returns {output name: array}. Inputs by position, in the order of
        Model.inputs (m.run(x), m.run(x, y)), by name (m.run(input=x)), or both (the names
        then cover the inputs after the positional ones). Each array must have its input's
        shape (any size on a run-time dimension, None in Model.inputs) and dtype
        (Model.inputs[i].dtype): a different dtype is an InputTypeError
        (a TypeError), never a silent cast. Uses the engine named by Model.engine ("jit" or
        "reference")."""
        if self._jit and self._dynamic():
            return self._run_shapes(args, arrays)
        if self._jit:
            return self._run_with(lambda i, o: self._lib.qdqc_jit_run(self._jit, i, o), "run",
                                  args, arrays)
        return self._run_with(
            lambda i, o: self._lib.qdqc_module_run_reference(self._mod, i, o), "run", args,
            arrays)

    def run_reference(self, *args, **arrays):
        """Run in the reference interpreter (the oracle), whatever Model.engine is; inputs as
        Model.run."""
        return self._run_with(
            lambda i, o: self._lib.qdqc_module_run_reference(self._mod, i, o),
            "run_reference", args, arrays)

    def __repr__(self):
        if not getattr(self, "_mod", None):
            return "<qdqc.Model (closed)>"
        lines = [f"<qdqc.Model engine={self.engine} target={self.target or 'host'} "
                 f"requant={self.requant}"]
        width = max((len(repr(t.name)) for t in self.inputs + self.outputs), default=0)
        for kind, infos in (("input ", self.inputs), ("output", self.outputs)):
            for t in infos:
                shape = ",".join(str(d) for d in t.shape)
                lines.append(f"  {kind} {repr(t.name):<{width}} {t.elem_type}[{shape}]"
                             f"  numpy {t.dtype}")
        return "\n".join(lines) + ">"

    def _need_codegen(self, what):
        self._live()
        if not self.can_save_object:
            raise Error(what, "QDQC_ERR_UNSUPPORTED", "this libqdqc has no code generation API")

    def emit(self, kind="obj"):
        """The compiled network for the Model's target as bytes: kind "obj" (relocatable ELF),
        "asm", "llvm" (LLVM IR), "bc" (LLVM bitcode) or "header" (the C header of docs/abi.md)."""
        self._need_codegen("emit")
        if kind not in _lib.EMIT:
            raise Error("emit", "QDQC_ERR_INVALID_ARG",
                        f"unknown kind '{kind}' ({', '.join(_lib.EMIT)})")
        buf, n = ctypes.c_void_p(), ctypes.c_size_t()
        self._check(self._lib.qdqc_module_compile_to_memory(
            self._mod, self._opts, _lib.EMIT[kind], ctypes.byref(buf), ctypes.byref(n)), "emit")
        try:
            return ctypes.string_at(buf, n.value)
        finally:
            self._lib.qdqc_string_free(buf)

    def _save(self, path, kind, what):
        self._need_codegen(what)
        self._check(self._lib.qdqc_module_compile_to_file(
            self._mod, self._opts, os.fsencode(os.fspath(path)), _lib.EMIT[kind]), what)

    def save_object(self, path):
        """Write the compiled network for the Model's target as a relocatable object file
        (ELF; entry points in docs/abi.md)."""
        self._save(path, "obj", "save_object")

    def save_header(self, path):
        """Write the C header declaring the object's entry points and tensor metadata."""
        self._save(path, "header", "save_header")
