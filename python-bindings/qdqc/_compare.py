"""_compare: qdqc.compare, the per-layer accuracy comparison (qdqc_compare_*, docs/accuracy.md)."""
import ctypes

import numpy as np

from ._model import Error, dtype_of


class _QuantInfo(ctypes.Structure):
    _fields_ = [("node", ctypes.c_char_p), ("input", ctypes.c_char_p), ("output", ctypes.c_char_p),
                ("dq_output", ctypes.c_char_p), ("storage", ctypes.c_char * 8),
                ("scale", ctypes.c_double), ("zero_point", ctypes.c_int32),
                ("qmin", ctypes.c_int32), ("qmax", ctypes.c_int32)]


class ErrorStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in
                ("sqnr_db", "cosine", "max_abs", "mean_abs", "max_steps", "mean_steps")]


class _Row(ctypes.Structure):
    _fields_ = [("q", _QuantInfo), ("float_tensor", ctypes.c_char_p), ("compiled", ctypes.c_int),
                ("float_in_compiled", ctypes.c_int), ("has_float_to_qdq", ctypes.c_int),
                ("has_qdq_to_compiled", ctypes.c_int), ("float_to_qdq", ErrorStats),
                ("qdq_to_compiled", ErrorStats), ("observed_min", ctypes.c_double),
                ("observed_max", ctypes.c_double), ("count", ctypes.c_uint64),
                ("clipped_below", ctypes.c_uint64), ("clipped_above", ctypes.c_uint64)]


def stats_dict(s):
    return {n: getattr(s, n) for n, _ in ErrorStats._fields_}


def compare(lib, float_path, qdq_path, samples, keep_float=None, map_text=None, requant=None):
    ctx = lib.qdqc_context_create()
    cmp = ctypes.c_void_p()
    bufs = []

    def fail(what, st):
        raise Error(what, lib.qdqc_status_name(st).decode(),
                    lib.qdqc_context_get_diagnostics(ctx).decode())
    try:
        if keep_float:
            names = keep_float if isinstance(keep_float, str) else ",".join(keep_float)
            lib.qdqc_context_set_option(ctx, b"keep-float", names.encode())
        if requant:
            st = lib.qdqc_context_set_option(ctx, b"requant", requant.encode())
            if st:
                fail("compare", st)
        st = lib.qdqc_compare_create(ctx, str(float_path).encode(), str(qdq_path).encode(), None,
                                     map_text.encode() if map_text else None, ctypes.byref(cmp))
        if st:
            fail("compare", st)
        qm = lib.qdqc_compare_get_qdq_module(cmp)
        n = lib.qdqc_module_input_count(qm)
        names = [lib.qdqc_module_input_name(qm, i).decode() for i in range(n)]
        for sample in samples:
            if not isinstance(sample, dict):
                if n != 1:
                    raise TypeError(f"compare: the QDQ model has {n} inputs: give dicts by name")
                sample = {names[0]: sample}
            arrs = []
            for i, name in enumerate(names):
                if name not in sample:
                    raise TypeError(f"compare: a sample lacks input '{name}'")
                dims = lib.qdqc_module_input_dims(qm, i)
                shape = tuple(dims[k] for k in range(lib.qdqc_module_input_rank(qm, i)))
                a = np.ascontiguousarray(sample[name],
                                         dtype_of(lib.qdqc_module_input_elem_type(qm, i).decode()))
                if a.size != int(np.prod(shape, dtype=np.int64)):
                    raise ValueError(f"compare: input '{name}' has {a.size} values, expected shape {shape}")
                arrs.append(a)
            bufs = arrs
            ptrs = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data for a in arrs])
            st = lib.qdqc_compare_run(cmp, ptrs)
            if st:
                fail("compare", st)
        rows = []
        for i in range(lib.qdqc_compare_row_count(cmp)):
            r = _Row()
            lib.qdqc_compare_row_get(cmp, i, ctypes.byref(r))
            rows.append({
                "quantize_node": r.q.node.decode(), "qdq_input": r.q.input.decode(),
                "qdq_output": r.q.output.decode(), "storage": r.q.storage.decode(),
                "scale": r.q.scale, "zero_point": r.q.zero_point, "qmin": r.q.qmin, "qmax": r.q.qmax,
                "float_tensor": r.float_tensor.decode() if r.float_tensor else None,
                "compiled": bool(r.compiled), "float_in_compiled": bool(r.float_in_compiled),
                "float_to_qdq": stats_dict(r.float_to_qdq) if r.has_float_to_qdq else None,
                "qdq_to_compiled": stats_dict(r.qdq_to_compiled) if r.has_qdq_to_compiled else None,
                "observed": (r.observed_min, r.observed_max), "count": r.count,
                "clipped_below": r.clipped_below, "clipped_above": r.clipped_above,
            })
        return rows
    finally:
        del bufs
        lib.qdqc_compare_destroy(cmp)
        lib.qdqc_context_destroy(ctx)
