"""qdqc: Python bindings of qdqc, an ahead-of-time compiler for quantized (QDQ) networks.

    import numpy as np, qdqc
    model = qdqc.compile("examples/mobilenetv2_qdq.onnx")
    x = np.zeros(model.inputs[0].shape, model.inputs[0].dtype)
    outputs = model.run(x)            # {output name: ndarray}, JIT-compiled; or run(input=x)
    print(model)                      # engine, inputs and outputs with shapes and dtypes
    model.save_object("model.o"); model.save_header("model.h")   # docs/abi.md
    model = qdqc.compile(path, profile=True)   # steps with a hook (docs/abi.md)
    for s in sorted(model.profile(x), key=lambda s: -s.seconds)[:5]:
        print(s.name, s.op, s.seconds)     # model.steps: Step(index, name, op, macs)

A ctypes wrapper over libqdqc.so (found as described in qdqc/_lib.py); the C names are
available on qdqc.lib(). Every failure raises qdqc.Error carrying the library's diagnostics;
an input array of the wrong dtype raises qdqc.InputTypeError (a qdqc.Error and a TypeError).
"""
import ctypes
import functools
import os

import numpy as np

from . import _compare, _lib
from ._model import (EngineWarning, Error, InputTypeError, Model, Step, StepTime, TensorInfo,
                     dtype_of, elem_type_of)

__all__ = ["compare", "compile", "EngineWarning", "Error", "error_stats", "InputTypeError", "Model", "Step", "StepTime",
           "TensorInfo", "dtype_of", "lib", "version", "version_string", "VERSION_HEX"]
__version__ = "0.1.0"
VERSION_HEX = (0 << 16) | (1 << 8) | 0  # the C header's QDQC_VERSION_HEX this package expects


@functools.lru_cache(maxsize=None)
def lib():
    """The loaded libqdqc (ctypes.CDLL); loaded on first use, OSError if not found."""
    return _lib.load()


def error_stats(ref, x, step=0.0):
    """Error of x against ref (same size, compared as float32), as qdqc compare computes it
    (qdqc_error_stats_compute, docs/accuracy.md): a dict with sqnr_db (inf when equal), cosine,
    max_abs, mean_abs and, with the quantization step `step` > 0, max_steps and mean_steps."""
    a = np.ascontiguousarray(ref, dtype=np.float32).ravel()
    b = np.ascontiguousarray(x, dtype=np.float32).ravel()
    if a.size != b.size:
        raise ValueError(f"error_stats: {a.size} reference values, {b.size} values")
    s = _compare.ErrorStats()
    st = lib().qdqc_error_stats_compute(a.ctypes.data, b.ctypes.data, a.size, float(step),
                                        ctypes.byref(s))
    if st != 0:
        raise Error("error_stats", lib().qdqc_status_name(st).decode())
    return _compare.stats_dict(s)


def compare(float_path, qdq_path, samples, keep_float=None, map_text=None, requant=None):
    """Per-layer accuracy of a QDQ model (qdqc_compare_*, docs/accuracy.md): the float model and
    the QDQ graph as written on the reference interpreter, the QDQ graph compiled (default
    pipeline, JIT, with the ONNX nodes of keep_float left in float) on the same samples (each a
    dict {input name: array}, or an array for a one-input model). One dict per activation
    quantize, in graph order: its names, scale, zero point, the float tensor matched (None if
    none), float_to_qdq and qdq_to_compiled (error_stats dicts, or None), compiled (False: fused
    away), float_in_compiled, the observed range and the values clipped below and above."""
    return _compare.compare(lib(), float_path, qdq_path, samples, keep_float, map_text, requant)


def version():
    """qdqc_version() of the loaded library (compare with VERSION_HEX)."""
    return lib().qdqc_version()


def version_string():
    return lib().qdqc_version_string().decode()


def _looks_like_text_ir(data):
    for line in data.splitlines():
        s = line.strip()
        if not s or s.startswith(b"//"):
            continue
        return s.startswith(b"graph")
    return False


def _looks_like_mlir(data):
    return b"func.func" in data[:1 << 20] and not data.startswith(b"\x08")


def compile(model, target=None, requant="float", input_shapes=None, passes=None, *,
            cpu=None, features=None, name=None, engine="auto", threads=None,
            const_inputs=None, profile=False, dims=None):
    """Load `model`, run the pass pipeline and JIT-compile it; returns a Model.

    model: a path (.onnx, .mlir or text IR, by extension) or bytes (ONNX protobuf, text IR or
           MLIR text, recognised by content).
    target: target triple for code generation (e.g. "aarch64-linux-gnu"), None for the host;
           used by save_object/save_header/emit and the JIT.
    requant: "float" or "fixed" (docs/numerics.md).
    input_shapes: {input name: shape} fixing dynamic input dimensions.
    dims: {symbol: size} binding symbolic dimensions (ONNX dim_params such as "batch_size") in
           every input and shape that uses them (the qdqc tool's --dim; docs/onnx.md,
           "Shapes"). A model compiles once all its symbols are bound, to the same code as with
           the equivalent input_shapes. {symbol: (lo, hi)} keeps a batch-like symbol free:
           the model then runs at any size in [lo, hi] (--dim NAME=LO..HI; docs/abi.md,
           "Run-time dimensions"); Model.inputs show it as None in the shape.
    const_inputs: {input name: array} freezing ONNX graph inputs to compile-time constants
           (the qdqc tool's --const-input): the input is no longer an input of the model, and
           parameters a model takes as inputs (Reshape's shape, Slice's starts, ...) fold. The
           array's dtype and shape must match the declared input.
    passes: comma-separated pass list; None runs the default pipeline.
    cpu, features: target CPU ("native", "skylake-avx512", "neoverse-n1", ...) and feature
           list ("+avx512vnni,-avx2"), as --mcpu/--mattr of the qdqc tool (docs/targets.md).
    name: symbol prefix of the generated code (default "model").
    engine: "auto" (the JIT; if it cannot be created, e.g. for a foreign target, the reference
           interpreter, with the reason in Model.jit_error and an EngineWarning), "jit" (raise
           instead of falling back) or "reference".
    threads: worker threads of the JIT's parallel loops (None or 1: the calling thread).
    profile: compile with a step hook around every step (the compile option "profile",
           docs/abi.md): Model.profile() times each step, and save_object() writes an object
           with PREFIX_run_profile. Without it the code has no hook (and is unchanged).
    """
    lib_ = lib()
    m = Model._new(lib_, target=target, requant=requant)
    m._check(lib_.qdqc_context_set_option(m._ctx, b"requant", str(requant).encode()),
             "requant")
    for name, shape in (input_shapes or {}).items():
        spec = f"{name}=" + "x".join(str(int(d)) for d in shape)
        m._check(lib_.qdqc_context_add_input_shape(m._ctx, spec.encode()), "input_shapes")
    for name, size in (dims or {}).items():
        if isinstance(size, (tuple, list)) and len(size) == 2:
            m._check(lib_.qdqc_context_set_dim_range(m._ctx, str(name).encode(), int(size[0]),
                                                     int(size[1])), "dims")
        else:
            m._check(lib_.qdqc_context_set_dim(m._ctx, str(name).encode(), int(size)), "dims")
    for name, value in (const_inputs or {}).items():
        a = np.ascontiguousarray(value)
        elem = elem_type_of(a.dtype)
        dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        m._check(lib_.qdqc_context_add_const_input_data(
            m._ctx, str(name).encode(), elem.encode(), a.ndim, dims,
            a.ctypes.data_as(ctypes.c_void_p), a.nbytes), "const_inputs")
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        if _looks_like_text_ir(data):
            m._load("parse", lambda out: lib_.qdqc_module_parse(
                m._ctx, data, len(data), b"<bytes>", out))
        elif _looks_like_mlir(data):
            if not _lib.has(lib_, "qdqc_module_import_mlir"):
                raise Error("compile", "QDQC_ERR_UNSUPPORTED",
                            "this libqdqc has no qdqc_module_import_mlir")
            m._load("import", lambda out: lib_.qdqc_module_import_mlir(
                m._ctx, data, len(data), b"<bytes>", out))
        else:
            m._load("import", lambda out: lib_.qdqc_module_import_onnx_bytes(
                m._ctx, data, len(data), b"<bytes>", out))
    else:
        path = os.fsencode(os.fspath(model))
        m._load("load", lambda out: lib_.qdqc_module_load_file(m._ctx, path, out))
    pipeline = passes.encode() if passes else None
    m._check(lib_.qdqc_module_run_passes(m._mod, pipeline), "passes")
    m._set_codegen_options({"target": target, "mcpu": cpu, "mattr": features, "name": name,
                            "profile": "1" if profile else None})
    m._finish(engine, threads)
    return m
