#!/usr/bin/python3
"""torch_vit.py QDQC --cache DIR [--only a,b] [--no-ort] [--peer-python PY] [--keep DIR]

Real PyTorch FX QAT exports of torchvision's transformers end to end:
test/models/torch_vit.py writes (or finds in its cache under DIR) a 2-layer VisionTransformer at
opset 13 and 17, Swin's first stage and swin_t, prepared with prepare_qat_fx (fbgemm QAT
qconfig mapping, plain FakeQuantize), calibrated and exported without convert (attention float).
For each model, on the export's seeded input, the engines of test/e2e/torch_qat.py (qdqc JIT
and reference; ORT --opt disabled and --opt all, 1 thread, --opt all on the rank-0-scale copy).
Checks: the JIT equals the reference bit for bit; against ONNX Runtime, in units of the logits'
quantization step, qdqc is within ORT's own spread (max |ORT disabled - ORT all|) of both ORT
levels, or within 1 unit of ORT --opt disabled. Prints one row per engine pair plus the spread.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "test", "models", "torch_vit.py")
ORT_RUN = os.path.join(ROOT, "bench", "ort_run.py")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402
from torch_qat import load_dir, output_scale, run, scalarize  # noqa: E402

DEFAULT = ["vit2_qat", "vit2_qat_o17", "swins1_qat", "swin_t_qat"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qdqc")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--peer-python", default=peerenv.python())
    ap.add_argument("--keep", help="keep the outputs in this directory")
    a = ap.parse_args()
    names = [n for n in (a.only.split(",") if a.only else DEFAULT) if n]
    gen = [sys.executable, GEN, "--cache", a.cache, "--only", ",".join(names)]
    rc, out, err = run(gen, timeout=1800)
    if rc == 77:
        print(err.strip())
        return 77
    if rc != 0:
        print("ERROR: %s failed (%d):\n%s" % (" ".join(gen), rc, err[-2000:]))
        return 1
    mdir = out.strip().splitlines()[-1]
    if not a.no_ort:
        why = peerenv.check(a.peer_python)
        if why:
            print("ERROR: ONNX Runtime peer missing: %s" % why)
            return 1
    fails = []
    work = a.keep or tempfile.mkdtemp(prefix="qdqc-vit-")
    os.makedirs(work, exist_ok=True)
    print("%-14s %-16s %-8s %9s %9s %10s" % ("model", "pair", "output", "compared", "equal", "max diff"))
    for name in names:
        model = os.path.join(mdir, name + ".onnx")
        inp = os.path.join(mdir, name, "input.npy")
        scale = output_scale(model)
        res = {}
        engines = [("ref", [a.qdqc, "run", model, "--engine=ref", "--input", inp]),
                   ("jit", [a.qdqc, "run", model, "--engine=jit", "--input", inp])]
        if not a.no_ort:
            scal = os.path.join(work, name + ".scalar.onnx")
            scalarize(model, scal)
            engines += [("ort-dis", [a.peer_python, ORT_RUN, model, "--opt", "disabled", "--threads", "1",
                                     "--input", "input=" + inp]),
                        ("ort-all", [a.peer_python, ORT_RUN, scal, "--opt", "all", "--threads", "1",
                                     "--input", "input=" + inp])]
        for eng, cmd in engines:
            d = os.path.join(work, name, eng)
            rc, out, err = run(cmd + ["--output-dir", d])
            if rc != 0:
                print("%-14s %-16s FAIL: exit %d: %s" % (name, eng, rc, err.strip()[-400:]))
                fails.append((name, eng + " failed"))
                continue
            res[eng] = load_dir(d)
        if "ref" not in res:
            continue
        for o in sorted(res["ref"]):
            md = {}
            for x_eng, y_eng in (("ref", "jit"), ("ref", "ort-dis"), ("ref", "ort-all"), ("ort-dis", "ort-all")):
                if x_eng not in res or y_eng not in res:
                    continue
                x, y = res[x_eng].get(o), res[y_eng].get(o)
                if x is None or y is None or x.shape != y.shape:
                    print("%-14s %-16s %-8s missing or misshapen output" % (name, x_eng + "/" + y_eng, o))
                    fails.append((name, y_eng + " output"))
                    continue
                x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
                md[y_eng if x_eng == "ref" else "spread"] = d = float(np.abs(x - y).max() / (scale or 1.0))
                pair = ("qdqc-jit/ref" if y_eng == "jit" else "ort dis/all" if x_eng == "ort-dis"
                        else "qdqc/" + y_eng)
                print("%-14s %-16s %-8s %9d %9d %10.4g %s" % (name, pair, o, x.size, int((x == y).sum()), d,
                                                              "units" if scale else "abs"))
            if md.get("jit", 1) != 0:
                fails.append((name, "jit == ref"))
            if "spread" in md and "ort-dis" in md and "ort-all" in md:
                within = max(md["ort-dis"], md["ort-all"]) <= md["spread"] + 1e-6 or md["ort-dis"] <= 1 + 1e-6
                print("%-14s verdict: qdqc %s (vs ORT dis %.4g, all %.4g; ORT spread %.4g)" % (
                    name, "within ORT's spread or 1 unit" if within else "OUTSIDE", md["ort-dis"],
                    md["ort-all"], md["spread"]))
                if not within:
                    fails.append((name, "outside ORT's spread and > 1 unit from ORT --opt disabled"))
        sys.stdout.flush()
    print("%d models, %d failed checks" % (len(names), len(fails)))
    for f in fails:
        print("FAILED: %s: %s" % f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
