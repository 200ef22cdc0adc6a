#!/usr/bin/python3
"""compare_ort.py: qdqc against ONNX Runtime on the fixture models (docs/agreement.md).

For each model: deterministic inputs (test/models/gen_fixtures.py --inputs, the seeded inputs
the fixtures were calibrated on), then
  qdqc run MODEL --engine=ref        (integer reference, default pipeline, --requant=float)
  qdqc run MODEL --engine=jit        (compiled code)
  PEER_PYTHON bench/ort_run.py MODEL --opt disabled   (ORT, literal QDQ float semantics)
  PEER_PYTHON bench/ort_run.py MODEL --opt all        (ORT, fused integer kernels)
and per output: elements compared, exactly equal, max |difference| in quantized units (float
outputs of a ...->Q->DQ graph are divided by the output scale, read from qdqc's IR; integer
outputs compare directly; float outputs without a quantizer (TensorRT style) are reported as
absolute differences).

Checks (exit 1 if any fails that is not listed in KNOWN with its documented cause):
  per-op models:  qdqc ref within 1 unit of ORT --opt disabled, every element;
  fused per-op models (conv, matmul, gemm, add, mul, concat, pools; ORT fuses them into
                  QLinear*/QGemm kernels): qdqc ref bit-exact with ORT --opt all;
  all models:     qdqc jit == qdqc ref, bit for bit (where the code generator compiles it);
  networks:       figures only.
PEER_PYTHON is the peer environment's python (test/peer/peerenv.py; tools/setup.sh --peer).
A missing peer (the peer python, its onnxruntime, a model ORT cannot run at --opt disabled) is an
error.

usage: compare_ort.py --qdqc QDQC [--peer-python PY] [--ort-run bench/ort_run.py] [--jit/--no-jit]
                      [--only a,b] [--group per-op|nets|all] [MODEL.onnx ...]
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "test", "models", "fixtures")

NETWORKS = ["resnet_*", "mobilenetv2_*", "style_*"]
# Per-op fixtures ORT 1.30 fuses into integer kernels at --opt all (test/models/README.md):
# QLinearConv, QLinearMatMul, QGemm, QLinearAdd/Mul/Concat/AveragePool/GlobalAveragePool.
# MaxPool and the layout ops stay float in ORT but pass quantized values through unchanged,
# so they must be exact too.
FUSED = ["conv1x1_*", "conv3x3_*", "conv3x3s2_*", "conv3x3relu_*", "conv3x3reluq_*",
         "conv3x3wzp_*", "conv3x3wu8_*", "conv5x5nopad_*", "conv1x3_*", "convasympad_*",
         "convdw_*", "convgrp_*", "convdil_*", "convwide_*", "matmul_*", "gemm_*", "add_*",
         "mul_*", "concat_*", "avgpool*", "gap_*", "maxpool*", "reshape_*", "flatten_*",
         "transpose_*", "torch_conv3x3_*", "torch_matmul_*", "torch_gemm_*", "torch_concat_*",
         "torch_gap_*", "torch_maxpool_*", "torch_reshape_*", "torch_transpose_*",
         "linear_*", "torch_linear_*"]  # MatMul+Add(bias): reshaped to 2-D and fused into QGemm
# A16W8 fixtures (16-bit activations, *_a16_*): ORT 1.30's CPU QDQ fusions take 8-bit tensors
# only, so --opt all runs them as float too (its outputs equal --opt disabled's); checked within
# one unit like every per-op model, not bit-exact.
NOT_FUSED = ["*_a16_*"]
# ORT --opt all refuses these models (README: QLinearAdd/Mul/AveragePool type inference wants
# rank-0 scales); they are compared with --opt disabled only.
ORT_ALL_REFUSES = ["torch_add_*", "torch_mul_*", "torch_avgpool_*", "resnet_torch_u8"]

# Known differences, each explained in docs/agreement.md. Key: (model pattern, check).
KNOWN = {}


def match(name, pats):
    return any(fnmatch.fnmatch(name, p) for p in pats)


def run(cmd, timeout=300):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def out_scales(qdqc, model):
    """Output name -> scale of the dequantize that produces it (None: not a DQ output)."""
    rc, out, err = run([qdqc, model, "--emit=ir"])
    scales = {}
    if rc != 0:
        return scales
    defs = {}
    for line in out.splitlines():
        m = re.match(r'\s*(%\S+) = (\w+) (.*)', line)
        if m:
            defs[m.group(1)] = (m.group(2), m.group(3))
        m = re.match(r'\s*return (.*)', line)
        if m:
            rets = [v.strip() for v in m.group(1).split(",")]
    for v in rets if out else []:
        op, rest = defs.get(v, ("", ""))
        name = v[1:].strip('"')
        if op == "dequantize":
            s = re.search(r'scale=([0-9.eE+-]+)', rest)
            scales[name] = float(s.group(1)) if s else None
        else:
            scales[name] = None
    return scales


def safe(name):
    return re.sub(r'[^A-Za-z0-9_.-]', '_', name)


def load_dir(d):
    if not os.path.isdir(d):
        return {}
    return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def diff_units(a, b, scale):
    """(n, equal, max diff in units or absolute, unit label)"""
    if a.shape != b.shape:
        return None
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        x, y = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
        eq = (x == y) | (np.isnan(x) & np.isnan(y))
        d = np.abs(x - y)
        d[eq] = 0
        if scale:  # the dequantized (q - z) * s back to integers: exact for 8- and 16-bit q
            d = np.abs(np.rint(x / scale) - np.rint(y / scale))
            d[eq] = 0
            return x.size, int(eq.sum()), float(d.max()) if d.size else 0.0, "units"
        return x.size, int(eq.sum()), float(d.max()) if d.size else 0.0, "abs"
    x, y = a.astype(np.int64).ravel(), b.astype(np.int64).ravel()
    d = np.abs(x - y)
    return x.size, int((d == 0).sum()), float(d.max()) if d.size else 0.0, "units"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qdqc", required=True)
    ap.add_argument("--peer-python", default=peerenv.python())
    ap.add_argument("--ort-run", default=peerenv.ORT_RUN)
    ap.add_argument("--no-jit", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--group", default="all", choices=["per-op", "nets", "all"])
    ap.add_argument("--self-test", action="store_true",
                    help="move one element of qdqc's reference output by 2 steps (the checks must fail)")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()

    models = a.models or sorted(os.path.join(FIXTURES, f) for f in os.listdir(FIXTURES)
                                if f.endswith(".onnx"))
    if a.only:
        models = [m for m in models if match(os.path.basename(m)[:-5], a.only.split(","))]
    names = [os.path.basename(m)[:-5] for m in models]
    if a.group == "per-op":
        models = [m for m, n in zip(models, names) if not match(n, NETWORKS)]
    elif a.group == "nets":
        models = [m for m, n in zip(models, names) if match(n, NETWORKS)]
    # per-op models first, networks last
    models.sort(key=lambda m: (match(os.path.basename(m)[:-5], NETWORKS), os.path.basename(m)))
    if not models:
        print("compare_ort: no models", file=sys.stderr)
        return 2
    # the peer must be there: a missing ONNX Runtime is an error, not a skip
    if not os.path.exists(a.ort_run):
        print("ERROR: ONNX Runtime peer missing: %s" % a.ort_run)
        return 1
    why = peerenv.check(a.peer_python)
    if why:
        print("ERROR: ONNX Runtime peer missing: %s" % why)
        return 1

    fails, known, total_models = [], [], 0
    with tempfile.TemporaryDirectory(prefix="qdqc-ort-") as work:
        inp = os.path.join(work, "inputs")
        fx = [os.path.basename(m) for m in models if os.path.dirname(os.path.abspath(m)) == FIXTURES]
        if fx:
            rc, out, err = run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "gen_fixtures.py"),
                                "--inputs", inp, "--only", ",".join(fx)], timeout=900)
            if rc != 0:
                print("ERROR: gen_fixtures.py --inputs failed: %s" % err.strip()[-500:])
                return 1
        print("%-28s %-8s %-34s %9s %9s %10s" % ("model", "peer", "output", "compared", "equal", "max diff"))
        for model in models:
            name = os.path.basename(model)[:-5]
            total_models += 1
            idir = os.path.join(inp, name)
            if not os.path.isdir(idir):
                print("ERROR %s: no inputs (not a fixture? run gen_fixtures.py --inputs)" % name)
                fails.append((name, "inputs"))
                continue
            ins = sorted(f for f in os.listdir(idir) if f.endswith(".npy"))
            qin, oin = [], []
            for f in ins:
                qin += ["--input", "%s=%s" % (f[:-4], os.path.join(idir, f))]
                oin += ["--input", "%s=%s" % (f[:-4], os.path.join(idir, f))]
            res = {}
            errs = {}
            scales = out_scales(a.qdqc, model)

            def scales_step(v):
                return next((s for s in scales.values() if s), 1.0)
            engines = [("ref", [a.qdqc, "run", model, "--engine=ref"] + qin)]
            if not a.no_jit:
                engines.append(("jit", [a.qdqc, "run", model, "--engine=jit"] + qin))
            engines.append(("ort-dis", [a.peer_python, a.ort_run, model, "--opt", "disabled", "--threads", "1"] + oin))
            if not match(name, ORT_ALL_REFUSES):
                engines.append(("ort-all", [a.peer_python, a.ort_run, model, "--opt", "all", "--threads", "1"] + oin))
            for eng, cmd in engines:
                d = os.path.join(work, "out", name, eng)
                rc, out, err = run(cmd + ["--output-dir", d])
                if rc != 0:
                    errs[eng] = (err.strip().splitlines() or ["exit %d" % rc])[-1][:200]
                else:
                    res[eng] = load_dir(d)
                    if eng == "ref" and a.self_test:
                        for k, v in res[eng].items():
                            if v.size:
                                flat = v.reshape(-1)
                                flat[0] = flat[0] + (2 * scales_step(v) if v.dtype.kind == "f" else 2)
                            break
            per_op = not match(name, NETWORKS)

            def check(cond, what):
                if cond:
                    return
                k = next((KNOWN[p] for p in KNOWN if fnmatch.fnmatch(name, p[0]) and p[1] == what), None)
                if k:
                    known.append((name, what, k))
                    print("  KNOWN %s %s: %s" % (name, what, k))
                else:
                    fails.append((name, what))
                    print("  FAIL %s %s" % (name, what))

            for eng in errs:
                if eng == "jit" and "codegen" in errs[eng]:
                    print("%-28s %-8s not compiled: %s" % (name, eng, errs[eng]))
                    continue
                print("%-28s %-8s ERROR: %s" % (name, eng, errs[eng]))
                check(False, eng + " error")
            if "ref" not in res:
                continue
            for o in sorted(res["ref"]):
                base = res["ref"][o]
                oname = next((k for k in scales if safe(k) == o), o)
                scale = scales.get(oname)
                for eng in ("jit", "ort-dis", "ort-all"):
                    if eng not in res:
                        continue
                    other = res[eng].get(o)
                    if other is None:
                        print("%-28s %-8s %-34s missing output" % (name, eng, o[:34]))
                        check(False, eng + " output")
                        continue
                    r = diff_units(base, other, scale)
                    if r is None:
                        print("%-28s %-8s %-34s shape %s vs %s" % (name, eng, o[:34], base.shape, other.shape))
                        check(False, eng + " shape")
                        continue
                    n, eq, md, unit = r
                    print("%-28s %-8s %-34s %9d %9d %10.4g %s" % (name, eng, o[:34], n, eq, md, unit))
                    if eng == "jit":
                        check(eq == n, "jit==ref")
                    elif eng == "ort-dis" and per_op and unit == "units":
                        check(md <= 1.0 + 1e-6, "within 1 unit of ort-dis")
                    elif eng == "ort-all" and per_op and match(name, FUSED) and not match(name, NOT_FUSED):
                        check(eq == n, "bit-exact with ort-all")
    print("%d models, %d failed checks, %d known differences (docs/agreement.md)"
          % (total_models, len(fails), len(known)))
    for f in fails:
        print("FAILED: %s: %s" % f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
