"""_lib: find and load libqdqc.so and declare the C API prototypes (include/qdqc/qdqc.h).

Lookup order: the QDQC_LIBRARY environment variable (path of the shared library), then the
prefix qdqc was installed into (baked in at build time through QDQC_PREFIX, see
_build/qdqc_build.py; also sys.prefix and /usr/local), then the system loader (libqdqc.so.0).
Functions keep their C names; those not in the loaded library (parts of the API newer than it)
are simply absent: use has().
"""
import ctypes
import ctypes.util
import os
import sys

c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)

# name: (restype, argtypes). Handles are c_void_p; strings cross as bytes.
_PROTOS = {
    "qdqc_version": (ctypes.c_uint, []),
    "qdqc_version_string": (ctypes.c_char_p, []),
    "qdqc_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "qdqc_context_create": (ctypes.c_void_p, []),
    "qdqc_context_destroy": (None, [ctypes.c_void_p]),
    "qdqc_context_get_diagnostics": (ctypes.c_char_p, [ctypes.c_void_p]),
    "qdqc_context_get_error_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "qdqc_context_clear_diagnostics": (None, [ctypes.c_void_p]),
    "qdqc_context_set_option": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    "qdqc_context_add_input_shape": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "qdqc_context_set_dim": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]),
    "qdqc_context_set_dim_range": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                  ctypes.c_int64, ctypes.c_int64]),
    "qdqc_context_add_const_input": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "qdqc_context_add_const_input_data": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                         ctypes.c_char_p, ctypes.c_int,
                                                         c_int64_p, ctypes.c_void_p,
                                                         ctypes.c_size_t]),
    "qdqc_module_parse": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                         ctypes.c_char_p, c_void_pp]),
    "qdqc_module_import_onnx_file": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_void_pp]),
    "qdqc_module_import_onnx_bytes": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                     ctypes.c_size_t, ctypes.c_char_p, c_void_pp]),
    "qdqc_module_import_mlir": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                               ctypes.c_char_p, c_void_pp]),
    "qdqc_module_load_file": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_void_pp]),
    "qdqc_module_destroy": (None, [ctypes.c_void_p]),
    # accuracy comparison (lib/api/compare.c); qdqc_module_quant_get's struct is not declared
    "qdqc_error_stats_compute": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                                ctypes.c_double, ctypes.c_void_p]),
    "qdqc_module_quant_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "qdqc_module_value_elem_type": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_char_p]),
    "qdqc_module_add_output": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "qdqc_compare_create": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.c_void_p, ctypes.c_char_p, c_void_pp]),
    "qdqc_compare_destroy": (None, [ctypes.c_void_p]),
    "qdqc_compare_get_qdq_module": (ctypes.c_void_p, [ctypes.c_void_p]),
    "qdqc_compare_run": (ctypes.c_int, [ctypes.c_void_p, c_void_pp]),
    "qdqc_compare_row_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "qdqc_compare_row_get": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]),
    # returns char * to free with qdqc_string_free: c_void_p keeps the pointer
    "qdqc_module_print": (ctypes.c_void_p, [ctypes.c_void_p]),
    "qdqc_module_print_mlir": (ctypes.c_void_p, [ctypes.c_void_p]),
    "qdqc_module_report": (ctypes.c_void_p, [ctypes.c_void_p]),
    "qdqc_string_free": (None, [ctypes.c_void_p]),
    "qdqc_module_verify": (ctypes.c_int, [ctypes.c_void_p]),
    "qdqc_module_run_passes": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "qdqc_module_input_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "qdqc_module_input_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_module_input_rank": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_module_input_dims": (c_int64_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_module_input_elem_type": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_module_output_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "qdqc_module_output_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_module_output_rank": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_module_output_dims": (c_int64_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_module_output_elem_type": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_elem_type_size": (ctypes.c_size_t, [ctypes.c_char_p]),
    "qdqc_module_run_reference": (ctypes.c_int, [ctypes.c_void_p, c_void_pp, c_void_pp]),
    # code generation (lib/api/compile.c)
    "qdqc_compile_options_create": (ctypes.c_void_p, []),
    "qdqc_compile_options_destroy": (None, [ctypes.c_void_p]),
    "qdqc_compile_options_set": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                ctypes.c_char_p]),
    "qdqc_module_compile_to_file": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p,
                                                   ctypes.c_char_p, ctypes.c_int]),
    "qdqc_module_compile_to_memory": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p,
                                                     ctypes.c_int, c_void_pp,
                                                     ctypes.POINTER(ctypes.c_size_t)]),
    "qdqc_jit_create": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, c_void_pp]),
    "qdqc_jit_set_parallel_for": (None, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    "qdqc_jit_run": (ctypes.c_int, [ctypes.c_void_p, c_void_pp, c_void_pp]),
    "qdqc_jit_run_shapes": (ctypes.c_int, [ctypes.c_void_p, c_void_pp, c_void_pp, c_void_pp,
                                           c_void_pp]),
    "qdqc_jit_workspace_size": (ctypes.c_size_t, [ctypes.c_void_p]),
    "qdqc_jit_destroy": (None, [ctypes.c_void_p]),
    # steps and per-step profiling (a model compiled with the option "profile" = "1")
    "qdqc_jit_step_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "qdqc_jit_step_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_jit_step_op": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_jit_step_macs": (ctypes.c_uint64, [ctypes.c_void_p, ctypes.c_size_t]),
    "qdqc_jit_set_profile_hook": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.c_void_p]),
    "qdqc_threadpool_create": (ctypes.c_void_p, [ctypes.c_int]),
    "qdqc_threadpool_destroy": (None, [ctypes.c_void_p]),
}

# qdqc_profile_fn: void (*)(void *ctx, int32_t step, int32_t end)
PROFILE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)

# qdqc_emit_kind
EMIT = {"obj": 0, "asm": 1, "llvm": 2, "header": 3, "bc": 4}


def _candidates():
    env = os.environ.get("QDQC_LIBRARY")
    if env:
        return [env], True
    prefixes = []
    try:
        from . import _prefix
        if _prefix.PREFIX:
            prefixes.append(_prefix.PREFIX)
    except ImportError:
        pass
    prefixes += [sys.prefix, "/usr/local"]
    libdirs = ["lib", "lib64", "lib/" + getattr(sys.implementation, "_multiarch", "")]
    paths = [os.path.join(p, d, "libqdqc.so.0") for p in prefixes for d in libdirs]
    return [p for p in paths if os.path.exists(p)], False


def load():
    """The loaded libqdqc (ctypes.CDLL) with prototypes set. OSError if not found."""
    paths, from_env = _candidates()
    errors = []
    for p in paths:
        try:
            return _declare(ctypes.CDLL(p))
        except OSError as e:
            errors.append(str(e))
    if from_env:
        raise OSError(f"QDQC_LIBRARY={paths[0]}: {'; '.join(errors)}")
    for name in ("libqdqc.so.0", ctypes.util.find_library("qdqc")):
        if name:
            try:
                return _declare(ctypes.CDLL(name))
            except OSError as e:
                errors.append(str(e))
    raise OSError("libqdqc not found: set QDQC_LIBRARY to the path of libqdqc.so "
                  "(tried the install prefix and the system loader: " + "; ".join(errors) + ")")


def _declare(lib):
    for name, (res, args) in _PROTOS.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = res
            fn.argtypes = args
    return lib


def has(lib, name):
    """True if the loaded library exports `name`."""
    return hasattr(lib, name)
