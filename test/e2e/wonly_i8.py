#!/usr/bin/python3
"""wonly_i8.py QDQC: weight-only matmuls with int8 activations (--weight-only=int8-acts;
docs/numerics.md, "int8 activations") on ONNX models: DequantizeLinear(int8 or uint8
weights, per column) -> MatMul [-> Add bias], seeded inputs.

For each model:
  1. with the flag every wmatmul has acts="i8", without it none;
  2. the JIT equals the reference bit for bit with the flag, on every x86 kernel path the host
     runs, 1 and 2 threads;
  3. against the float weight-only result (the reference without the flag): every element
     within the bound of the int8 rounding, computed here in float64 from the inputs,
         |y_i8 - y_f32| <= ws[n] * (s_m / 2) * sum_k |w[k, n] - zp[n]| * (1 + 2^-20)
                           + 2^-20 * (ws[n] * sum_k |x[m, k] (w[k, n] - zp[n])| + |bias[n]|)
     (s_m = max_k |x[m, k]| / 127: each activation moves by at most half a step; the second
     term covers the f32 roundings of both results), and the largest difference relative to
     the largest |y| is printed (the error measured for docs/numerics.md).
  --measure: also print the error of each model in units of the bound and per input kind.
Prints one line per check and "N passed, M failed"; exit 0 iff nothing failed."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32

npass = nfail = 0


def report(ok, what):
    global npass, nfail
    npass, nfail = npass + ok, nfail + (not ok)
    print("%s %s" % ("PASS" if ok else "FAIL", what), flush=True)


def make(name, m, k, n, wtype, bias, xkind, seed):
    """x [m, k] (xkind: gauss, or outliers: a few channels 30x larger, as in LLM activations,
    or relu: non-negative) -> DequantizeLinear(W [k, n], per column) -> MatMul [-> Add]."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k)).astype(F32)
    if xkind == "outliers":
        x[:, rng.choice(k, 4, replace=False)] *= 30
    elif xkind == "relu":
        x = np.maximum(x, 0)
    w = rng.standard_normal((k, n)).astype(F32) / np.sqrt(k)
    if wtype == "i8":
        s = (np.max(np.abs(w), axis=0) / 127).astype(F32)
        z = np.zeros(n, np.int8)
        q = np.clip(np.rint(w / s), -127, 127).astype(np.int8)
    else:
        lo, hi = np.minimum(w.min(0), 0), np.maximum(w.max(0), 0)
        s = ((hi - lo) / 255).astype(F32)
        z = np.clip(np.rint(-lo / s), 0, 255).astype(np.uint8)
        q = np.clip(np.rint(w / s) + z, 0, 255).astype(np.uint8)
    inits = [numpy_helper.from_array(q, "wq"), numpy_helper.from_array(s, "ws"), numpy_helper.from_array(z, "wz")]
    nodes = [helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=1),
             helper.make_node("MatMul", ["x", "wd"], ["y" if not bias else "mm"])]
    bv = None
    if bias:
        bv = (rng.standard_normal(n) * 0.1).astype(F32)
        inits.append(numpy_helper.from_array(bv, "b"))
        nodes.append(helper.make_node("Add", ["mm", "b"], ["y"]))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model, x, (q.astype(np.float64) - z.astype(np.float64), s.astype(np.float64), bv)


MODELS = [("gauss_i8", 16, 256, 128, "i8", True, "gauss", 1),
          ("gemv_u8", 1, 512, 384, "u8", True, "gauss", 2),
          ("outliers_i8", 32, 256, 96, "i8", False, "outliers", 3),
          ("relu_u8", 8, 1024, 64, "u8", True, "relu", 4)]


def run(qdqc, mp, xp, out, extra):
    r = subprocess.run([qdqc, "run", mp, "--input", "x=" + xp, "--output-dir", out] + extra,
                       capture_output=True, text=True)
    return (np.load(os.path.join(out, "y.npy")) if r.returncode == 0 else None), r.stderr.strip()


def host_isas():
    flags = open("/proc/cpuinfo").read().split("\nflags")[1].split("\n")[0].split()
    return ["generic"] + [i for i, f in (("avx2", "avx2"), ("avxvnni", "avx_vnni"), ("avx512vnni", "avx512_vnni")) if f in flags]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, k, n, wt, bias, xkind, seed in MODELS:
            model, x, (wp, ws, bv) = make(name, m, k, n, wt, bias, xkind, seed)
            mp, xp = os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + "_x.npy")
            onnx.save(model, mp)
            np.save(xp, x)
            on = subprocess.run([qdqc, mp, "--weight-only=int8-acts", "-o", "-"], capture_output=True, text=True).stdout
            off = subprocess.run([qdqc, mp, "-o", "-"], capture_output=True, text=True).stdout
            report('acts="i8"' in on and "wmatmul" in off and "acts=" not in off,
                   "%s: --weight-only=int8-acts gives wmatmul acts=\"i8\", the default f32 activations" % name)
            ref, err = run(qdqc, mp, xp, os.path.join(tmp, name + "_ref"), ["--engine=ref", "--weight-only=int8-acts"])
            flt, err2 = run(qdqc, mp, xp, os.path.join(tmp, name + "_flt"), ["--engine=ref"])
            if ref is None or flt is None:
                report(False, "%s: reference failed: %s" % (name, err or err2))
                continue
            for isa in host_isas():
                for th in ("1", "2"):
                    got, err = run(qdqc, mp, xp, os.path.join(tmp, "%s_%s_%s" % (name, isa, th)),
                                   ["--weight-only=int8-acts", "--isa=" + isa, "--threads", th])
                    report(got is not None and got.tobytes() == ref.tobytes(),
                           "%s: JIT == reference (int8 activations), --isa=%s, %s thread(s)%s" %
                           (name, isa, th, "" if got is not None else ": " + err))
            # the bound, in float64
            xd = x.astype(np.float64)
            sm = np.max(np.abs(xd), axis=1, keepdims=True) / 127
            aw = np.abs(wp)
            bound = ws * (sm / 2) * aw.sum(0) * (1 + 2**-20) + 2**-20 * (ws * (np.abs(xd) @ aw) + (np.abs(bv) if bv is not None else 0))
            diff = np.abs(ref.astype(np.float64) - flt.astype(np.float64))
            worst = float(np.max(diff / bound))
            rel = float(np.max(diff)) / float(np.max(np.abs(flt)))
            report(worst <= 1.0, "%s: |int8 activations - f32| within the bound (largest %.3f of it); "
                   "max |diff| %.3g = %.2g of max |y|" % (name, worst, float(np.max(diff)), rel))
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
