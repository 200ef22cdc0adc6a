#!/usr/bin/python3
"""qdq_vs_int.py: literal QDQ semantics vs the integer pipeline, both in the reference
interpreter. For each model, `qdqc run --engine=ref --passes=` (graph as imported: dequantize,
float op, quantize) and `qdqc run --engine=ref` (default pipeline: integer ops) get the same
random inputs; every output must agree within --max-lsb quantization steps. Outputs are usually
dequantized f32, so the step is recovered from the values (the smallest gap between distinct
values of both results); integer outputs use a step of 1.

  qdq_vs_int.py --qdqc qdqc [--seed S] [--max-lsb N] [--exclude GLOB...] MODEL|DIR...
Prints one line per model ("OK name: N elements, K differ, max M lsb" or "FAIL ...") and
"N passed, M failed"; exit status 1 on any failure.
"""
import argparse
import fnmatch
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(qdqc, model, outdir, seed, passes):
    cmd = [qdqc, "run", model, "--engine=ref", "--random-inputs", str(seed), "--output-dir",
           outdir]
    if passes is not None:
        cmd.append("--passes=" + passes)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode:
        return r.stderr.decode(errors="replace").strip().splitlines()[:1] or ["exit %d" %
                                                                            r.returncode]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qdqc", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-lsb", type=float, default=1.0)
    ap.add_argument("--exclude", action="append", default=[],
                    help="skip models whose file name matches this glob (repeatable)")
    ap.add_argument("models", nargs="+", help="model files or directories of *.onnx")
    a = ap.parse_args()
    models = []
    for m in a.models:
        models += sorted(glob.glob(os.path.join(m, "*.onnx"))) if os.path.isdir(m) else [m]
    models = [m for m in models
              if not any(fnmatch.fnmatchcase(os.path.basename(m), x) for x in a.exclude)]
    npass = nfail = 0
    with tempfile.TemporaryDirectory(prefix="qdqc-qvi-") as work:
        for model in models:
            name = os.path.splitext(os.path.basename(model))[0]
            lit, dflt = os.path.join(work, name, "lit"), os.path.join(work, name, "def")
            err = run(a.qdqc, model, lit, a.seed, "") or run(a.qdqc, model, dflt, a.seed, None)
            why = None
            total = ndiff = 0
            worst = 0.0
            if err:
                why = "qdqc failed: " + err[0][:300]
            for f in sorted(glob.glob(os.path.join(lit, "*.npy"))) if not why else []:
                x = np.load(f)
                g = os.path.join(dflt, os.path.basename(f))
                if not os.path.exists(g):
                    why = "%s missing after the pipeline" % os.path.basename(f)
                    break
                y = np.load(g)
                if x.dtype != y.dtype or x.shape != y.shape:
                    why = "%s: %s%s vs %s%s" % (os.path.basename(f), x.dtype, x.shape, y.dtype,
                                                y.shape)
                    break
                xd, yd = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
                if x.dtype.kind == "f":
                    u = np.unique(np.concatenate([xd, yd]))
                    gaps = np.diff(u)
                    step = gaps.min() if gaps.size else 1.0
                else:
                    step = 1.0
                # in whole steps: a dequantized 16-bit value (q - z) * s is rounded to f32, so
                # |x - y| / s is an integer only to within |q - z| * 2^-24 (< 0.004)
                d = np.abs(np.rint(xd / step) - np.rint(yd / step))
                total += d.size
                ndiff += int((d > 0).sum())
                worst = max(worst, float(d.max()) if d.size else 0.0)
            if not why and worst > a.max_lsb * (1 + 1e-6):
                why = "%d of %d elements differ, max %.3g lsb > %g" % (ndiff, total, worst,
                                                                       a.max_lsb)
            if why:
                print("FAIL %s: %s" % (name, why))
                nfail += 1
            else:
                print("OK %s: %d elements, %d differ, max %.3g lsb" % (name, total, ndiff, worst))
                npass += 1
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
