"""_model: Model (one compiled network) and Error.

A Model owns one qdqc_context and one qdqc_module made from it (the module refers to its
context, so both are destroyed together by close() or the garbage collector). One Model must be
used by one thread at a time; separate Models are independent (no global state in libqdqc).
"""
import collections
import ctypes

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


TensorInfo = collections.namedtuple("TensorInfo", "name shape elem_type dtype")
TensorInfo.__doc__ = "A graph input or output: name, shape (tuple), qdqc elem_type, numpy dtype"


class Model:
    """A network after the pass pipeline. Build with qdqc.compile()."""

    @classmethod
    def _new(cls, lib, target, requant):
        self = cls.__new__(cls)
        self._lib = lib
        self._mod = None
        self._ctx = lib.qdqc_context_create()
        if not self._ctx:
            raise Error("qdqc_context_create", "QDQC_ERR_NOMEM")
        self.target = target
        self.requant = requant
        self.engine = None
        self.inputs = []
        self.outputs = []
        return self

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
            shape = tuple(int(dims[k]) for k in range(rank))
            res.append(TensorInfo(name, shape, elem, dtype_of(elem)))
        return res

    def _finish(self):
        lib = self._lib
        self.inputs = self._io("input", lib.qdqc_module_input_count(self._mod))
        self.outputs = self._io("output", lib.qdqc_module_output_count(self._mod))
        self.engine = "reference"

    @property
    def can_save_object(self):
        """True if the loaded libqdqc can write objects and headers."""
        return False

    def _string(self, ptr, what, status="QDQC_ERR_INVALID_ARG"):
        if not ptr:
            raise Error(what, status, self._diagnostics())
        try:
            return ctypes.string_at(ptr).decode()
        finally:
            self._lib.qdqc_string_free(ptr)

    # ---- public ----
    def close(self):
        """Free the module and its context (also done when the Model is collected)."""
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
        """A short text summary: engine, requantization, inputs/outputs, op counts and the
        warnings and remarks the compilation left."""
        self._live()
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
        diags = self._diagnostics()
        if diags:
            lines.append(diags.rstrip("\n"))
        return "\n".join(lines) + "\n"

    def _inputs_from(self, arrays):
        names = [t.name for t in self.inputs]
        unknown = sorted(set(arrays) - set(names))
        missing = [n for n in names if n not in arrays]
        if unknown or missing:
            raise Error("run", "QDQC_ERR_INVALID_ARG",
                        f"inputs: expected {names}, missing {missing}, unknown {unknown}")
        res = []
        for t in self.inputs:
            a = np.asarray(arrays[t.name])
            if a.shape != t.shape:
                raise Error("run", "QDQC_ERR_INVALID_ARG",
                            f"input '{t.name}': shape {a.shape}, expected {t.shape}")
            if not np.can_cast(a.dtype, t.dtype, casting="same_kind"):
                raise Error("run", "QDQC_ERR_INVALID_ARG",
                            f"input '{t.name}': dtype {a.dtype}, expected {t.dtype}")
            res.append(np.ascontiguousarray(a, dtype=t.dtype))
        return res

    def _run_with(self, fn, what, arrays):
        self._live()
        ins = self._inputs_from(arrays)
        outs = [np.empty(t.shape, t.dtype) for t in self.outputs]
        in_ptrs = (ctypes.c_void_p * max(1, len(ins)))(*[a.ctypes.data for a in ins])
        out_ptrs = (ctypes.c_void_p * max(1, len(outs)))(*[a.ctypes.data for a in outs])
        self._check(fn(in_ptrs, out_ptrs), what)
        return {t.name: a for t, a in zip(self.outputs, outs)}

    def run(self, **arrays):
        """Run the network on numpy arrays given by input name; returns {output name: array}.
        Uses the engine named by Model.engine ("jit" or "reference")."""
        return self._run_with(
            lambda i, o: self._lib.qdqc_module_run_reference(self._mod, i, o), "run", arrays)

    def run_reference(self, **arrays):
        """Run in the reference interpreter (the oracle), whatever Model.engine is."""
        return self._run_with(
            lambda i, o: self._lib.qdqc_module_run_reference(self._mod, i, o),
            "run_reference", arrays)

    def save_object(self, path):
        """Write the compiled network as a relocatable object file (docs/abi.md)."""
        raise Error("save_object", "QDQC_ERR_UNSUPPORTED",
                    "this libqdqc has no object emission in its public API")

    def save_header(self, path):
        """Write the C header declaring the object's entry points (docs/abi.md)."""
        raise Error("save_header", "QDQC_ERR_UNSUPPORTED",
                    "this libqdqc has no header emission in its public API")

