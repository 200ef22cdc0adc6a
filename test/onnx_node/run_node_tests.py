#!/usr/bin/python3
"""run_node_tests.py: run Debian's ONNX node tests (libonnx-testdata) through
`qdqc run MODEL --engine=ref` (or --engine=jit) and compare with their expected outputs.

For every test directory whose name (without "test_") matches one of the patterns, each
test_data_set_*/input_*.pb and output_*.pb is converted to .npy with onnx.numpy_helper, the
model is run, and every output is compared: dtype and shape exactly, integers exactly, floats
within atol + rtol*|expected| (NaN equals NaN).

Parameters given as graph inputs. qdqc compiles ahead of time and needs an op's parameters
(Reshape's shape, Slice's starts, ...) as constants; many node tests pass them as graph inputs.
The runner freezes such an input with `--const-input NAME=FILE.npy` (its value from the test
data set) instead of passing it with `--input`. The rule, decided from the model alone: a graph
input (not an initializer, not a graph output) is a parameter input when it has at least one
use and every use is a parameter operand position of a default-domain op in PARAM_OPERANDS:
  Reshape 1 (shape), Slice 1-4 (starts, ends, axes, steps), Pad 1-3 (pads, constant_value,
  axes), Split 1 (split), Squeeze 1 / Unsqueeze 1 (axes), Resize 1-3 (roi, scales, sizes),
  ReduceMean 1 (axes), ConstantOfShape 0 (shape), Dropout 1-2 (ratio, training_mode),
  Expand 1 (shape), Tile 1 (repeats), Range 0-2 (start, limit, delta: the result's length),
  ReduceSum / ReduceMax / ReduceMin 1 (axes), Mod 0-1 and ScatterND 0-2 (qdqc evaluates
  them at import, on constants only).
An input that also feeds a data operand anywhere (e.g. a tensor both reshaped and used as a
shape) stays a runtime input. Clip's min/max are not parameters here: qdqc computes them at
run time.

Prints one line per test (PASS / FAIL: reason / XFAIL / XPASS) and a final line
"N passed, M failed" (XFAIL counts as passed-as-expected, XPASS as failed: update the list).
Exit status 0 only if nothing failed.

  run_node_tests.py --qdqc build/bin/qdqc [--engine=ref|jit] [--passes=...] [--xfail FILE ...]
                    [PATTERN ...]
"""
import argparse
import fnmatch
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DEFAULT_PATTERNS = [
    # QDQ and integer ops
    "quantizelinear*", "dequantizelinear*", "qlinearconv", "qlinearmatmul_2D",
    "qlinearmatmul_3D", "convinteger*", "matmulinteger", "dynamicquantizelinear*",
    # float ops
    "conv_*", "convtranspose*", "relu", "sigmoid*", "softmax*", "maxpool*", "averagepool*",
    "globalaveragepool*", "gemm*", "matmul_*", "add*", "sub*", "mul*", "div*", "concat*",
    "transpose*", "reshape*", "clip*", "leakyrelu*", "prelu*", "tanh*", "erf", "hardsigmoid*",
    "hardswish*", "batchnorm_epsilon", "batchnorm_example", "layer_normalization*",
    "reduce_mean*", "reduce_min*", "reduce_max*", "round", "resize*", "flatten*", "squeeze*", "unsqueeze*", "slice*", "split*",
    "constant_pad", "edge_pad", "reflect_pad", "gather_0", "gather_1", "gather_2d_indices",
    "gather_negative_indices", "shape*", "constantofshape*", "identity", "gelu*",
    "cast_FLOAT_to_FLOAT16", "cast_FLOAT16_to_FLOAT", "cast_FLOAT_to_DOUBLE",
    "cast_DOUBLE_to_FLOAT",
    # float-island math
    "exp", "exp_example", "log", "log_example", "sqrt*", "reciprocal*", "neg*", "abs", "pow*",
    "min_*", "max_*", "round",
    # comparisons, logic, selection, reductions, Cast, Einsum
    "equal*", "less*", "greater*", "not_*", "and*", "or*", "xor*", "where*", "expand*",
    "tile*", "range*", "reduce_max*", "reduce_min*", "reduce_sum_default*",
    "reduce_sum_do_not*", "reduce_sum_empty*", "reduce_sum_keepdims*", "reduce_sum_negative*",
    "argmax*", "cast_*", "einsum*",
    # ops evaluated at import on constants (frozen inputs), Dropout as the identity
    "mod_*", "scatternd*", "dropout_default*", "training_dropout_zero_ratio*",
]
# the expanded (function-body) forms are left out, except those of the ops listed here
EXCLUDE = ["*_expanded*"]
EXPANDED = ["dynamicquantizelinear*"]

# op type -> operand positions that are parameters qdqc needs as constants (see the docstring)
PARAM_OPERANDS = {
    "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Pad": {1, 2, 3}, "Split": {1}, "Squeeze": {1},
    "Unsqueeze": {1}, "Resize": {1, 2, 3}, "ReduceMean": {1}, "ConstantOfShape": {0},
    "Dropout": {1, 2}, "Expand": {1}, "Tile": {1}, "Range": {0, 1, 2}, "ReduceSum": {1},
    "ReduceMax": {1}, "ReduceMin": {1}, "Mod": {0, 1}, "ScatterND": {0, 1, 2},
}


def param_inputs(model, in_names):
    """The graph inputs that feed only parameter operand positions (the docstring's rule)."""
    outs = {o.name for o in model.graph.output}
    uses = {n: [] for n in in_names}
    for node in model.graph.node:
        dflt = node.domain in ("", "ai.onnx")
        for k, name in enumerate(node.input):
            if name in uses:
                uses[name].append(dflt and k in PARAM_OPERANDS.get(node.op_type, ()))
    return {n for n, u in uses.items() if u and all(u) and n not in outs}


def sanitize(name):
    """qdqc run's file stem of an output (tools/qdqc/run_cmd.c: output_file_names; the _2, _3
    suffixes of colliding names are not reproduced)."""
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name[:200])
    s = "".join("_" if c == "." and (i == 0 or name[i - 1] == ".") else c for i, c in enumerate(s))
    return s or "output"


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compare(got, want, rtol, atol):
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (got.dtype, want.dtype)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan = np.isnan(g) & np.isnan(w)
        d = np.where(nan, 0.0, np.abs(g - w))
        d = np.where(np.isnan(d), np.inf, d)
        bad = d > atol + rtol * np.abs(np.where(np.isnan(w), 0, w))
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            return "%d of %d differ (max diff %g; at %s got %r expected %r)" % (
                int(bad.sum()), bad.size, float(d.max()), list(map(int, i)), got[i].item(),
                want[i].item())
        return None
    bad = got != want
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        d = np.abs(got.astype(np.int64) - want.astype(np.int64))
        return "%d of %d differ (max diff %d; at %s got %r expected %r)" % (
            int(bad.sum()), bad.size, int(d.max()), list(map(int, i)), got[i].item(),
            want[i].item())
    return None


def run_test(qdqc, tdir, passes, work, rtol, atol, engine="ref"):
    model = onnx.load(os.path.join(tdir, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    in_names = [i.name for i in model.graph.input if i.name not in inits]
    frozen = param_inputs(model, in_names)
    out_names = [o.name for o in model.graph.output]
    sets = sorted(glob.glob(os.path.join(tdir, "test_data_set_*")))
    if not sets:
        return "no test data"
    for si, sd in enumerate(sets):
        wd = os.path.join(work, "set%d" % si)
        os.makedirs(wd, exist_ok=True)
        cmd = [qdqc, "run", os.path.join(tdir, "model.onnx"), "--engine=" + engine,
               "--output-dir", os.path.join(wd, "out")]
        if passes is not None:
            cmd.append("--passes=" + passes)
        ins = sorted(glob.glob(os.path.join(sd, "input_*.pb")),
                     key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        if len(ins) != len(in_names):
            return "%d input files for %d graph inputs" % (len(ins), len(in_names))
        for k, p in enumerate(ins):
            arr = load_pb(p)
            f = os.path.join(wd, "in%d.npy" % k)
            np.save(f, np.array(arr, order="C"))  # (ascontiguousarray makes 0-d arrays 1-d)
            flag = "--const-input" if in_names[k] in frozen else "--input"
            cmd += [flag, "%s=%s" % (in_names[k], f)]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        if r.returncode != 0:
            msg = r.stderr.decode(errors="replace").strip().splitlines()
            err = [m for m in msg if "error" in m] or msg or ["exit %d" % r.returncode]
            return "qdqc exit %d: %s" % (r.returncode, err[0][:300])
        for k, name in enumerate(out_names):
            want = load_pb(os.path.join(sd, "output_%d.pb" % k))
            path = os.path.join(wd, "out", sanitize(name) + ".npy")
            if not os.path.exists(path):
                return "output '%s' not written" % name
            why = compare(np.load(path), want, rtol, atol)
            if why:
                return "output '%s': %s" % (name, why)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qdqc", required=True)
    ap.add_argument("--node-dir", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--passes", default=None,
                    help="pipeline for qdqc run (default: qdqc's default; '' = none)")
    ap.add_argument("--xfail", action="append", default=[],
                    help="file of expected failures: one test name per line, '#' comments "
                         "(repeatable)")
    ap.add_argument("--engine", default="ref", choices=["ref", "jit"],
                    help="qdqc run engine (default: ref)")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("patterns", nargs="*")
    a = ap.parse_args()
    pats = a.patterns or DEFAULT_PATTERNS
    xfail = set()
    for xf in a.xfail:
        with open(xf) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    xfail.add(line)
    if not os.path.isdir(a.node_dir):
        print("FAIL: node test directory %s not found" % a.node_dir)
        return 1
    names = sorted(d[5:] for d in os.listdir(a.node_dir) if d.startswith("test_"))
    sel = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in pats)
           and (not any(fnmatch.fnmatchcase(n, p) for p in EXCLUDE)
                or any(fnmatch.fnmatchcase(n, p) for p in EXPANDED))]
    if not sel:
        print("FAIL: no node test matches %s" % " ".join(pats))
        return 1
    work = tempfile.mkdtemp(prefix="qdqc-node-")
    npass = nfail = nxfail = 0
    try:
        for n in sel:
            wd = os.path.join(work, n)
            try:
                why = run_test(a.qdqc, os.path.join(a.node_dir, "test_" + n), a.passes, wd,
                               a.rtol, a.atol, a.engine)
            except Exception as e:  # a broken test file is a failure, not a crash
                why = "runner: %s: %s" % (type(e).__name__, e)
            if n in xfail:
                if why:
                    print("XFAIL %s: %s" % (n, why))
                    nxfail += 1
                else:
                    print("XPASS %s (remove it from the xfail list)" % n)
                    nfail += 1
            elif why:
                print("FAIL %s: %s" % (n, why))
                nfail += 1
            else:
                print("PASS %s" % n)
                npass += 1
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed%s" % (npass, nfail,
                                      ", %d expected failures" % nxfail if nxfail else ""))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
