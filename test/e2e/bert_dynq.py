#!/usr/bin/python3
"""bert_dynq.py QDQC --cache DIR [--only a,b] [--peer-python PY] [--keep DIR]

A transformers BertModel quantized by ONNX Runtime's quantize_dynamic, end to end:
test/models/bert_dynq.py (run by the peer environment's interpreter) writes, or finds in its
cache under DIR, the model and its seeded inputs (input_ids and attention_mask, a padded tail).
Engines, on those inputs: qdqc JIT and reference (`qdqc run`), ONNX Runtime --opt disabled and
--opt all (bench/ort_run.py, 1 thread). Checks, per output (last_hidden_state, pooler_output):
  - the JIT equals the reference bit for bit;
  - against ONNX Runtime: the largest |qdqc - ORT| over both ORT levels is within 1.5 times ORT's
    own spread (max |ORT disabled - ORT all|), or within 1e-5 of the output's largest magnitude
    (the f32 rounding of one dynamic-quantization step flipped differently accumulates over the
    layers: ORT's two levels differ by that much themselves).
Prints one row per engine pair and output (elements, equal elements, max and mean |diff|).
"""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "test", "models", "bert_dynq.py")
ORT_RUN = os.path.join(ROOT, "bench", "ort_run.py")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402
from torch_qat import load_dir, run  # noqa: E402

DEFAULT = ["bert_small_dynq"]
INPUTS = ("input_ids", "attention_mask")
SPREAD_FACTOR = 1.5
REL_FLOOR = 1e-5


def compare(name, res, fails):
    for o in sorted(res["ref"]):
        md = {}
        for x_eng, y_eng in (("ref", "jit"), ("ref", "ort-dis"), ("ref", "ort-all"), ("ort-dis", "ort-all")):
            if x_eng not in res or y_eng not in res:
                continue
            x, y = res[x_eng].get(o), res[y_eng].get(o)
            if x is None or y is None or x.shape != y.shape:
                print("%-16s %-14s %-18s missing or misshapen output" % (name, x_eng + "/" + y_eng, o))
                fails.append((name, y_eng + " output " + o))
                continue
            x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
            d = np.abs(x - y)
            md[y_eng if x_eng == "ref" else "spread"] = float(d.max())
            md["mag"] = float(np.abs(x).max())
            pair = "qdqc-jit/ref" if y_eng == "jit" else "ort dis/all" if x_eng == "ort-dis" else "qdqc/" + y_eng
            print("%-16s %-14s %-18s %8d %8d %10.4g %10.4g" % (name, pair, o, x.size, int((x == y).sum()),
                                                           float(d.max()), float(d.mean())))
        if md.get("jit", 1) != 0:
            fails.append((name, "jit == ref on " + o))
        if "spread" in md and "ort-dis" in md and "ort-all" in md:
            worst = max(md["ort-dis"], md["ort-all"])
            ok = worst <= SPREAD_FACTOR * md["spread"] or worst <= REL_FLOOR * md["mag"]
            print("%-16s verdict %s: qdqc %s (max |qdqc - ORT| %.4g; ORT spread %.4g; magnitude %.4g)" % (
                name, o, "within ORT's spread" if ok else "OUTSIDE", worst, md["spread"], md["mag"]))
            if not ok:
                fails.append((name, "%s outside ORT's spread" % o))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qdqc")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--peer-python", default=peerenv.python())
    ap.add_argument("--keep", help="keep the outputs in this directory")
    a = ap.parse_args()
    why = peerenv.check(a.peer_python)
    if why:
        print("ERROR: peer environment missing: %s" % why)
        return 1
    names = [n for n in (a.only.split(",") if a.only else DEFAULT) if n]
    gen = [a.peer_python, GEN, "--cache", a.cache, "--only", ",".join(names)]
    rc, out, err = run(gen, timeout=1800)
    if rc != 0:
        print("ERROR: %s failed (%d):\n%s" % (" ".join(gen), rc, err[-2000:]))
        return 1
    mdir = out.strip().splitlines()[-1]
    fails = []
    work = a.keep or tempfile.mkdtemp(prefix="qdqc-bert-dynq-")
    os.makedirs(work, exist_ok=True)
    print("%-16s %-14s %-18s %8s %8s %10s %10s" % ("model", "pair", "output", "compared", "equal",
                                                  "max diff", "mean diff"))
    for name in names:
        model = os.path.join(mdir, name + ".onnx")
        ins = []
        for i in INPUTS:
            ins += ["--input", "%s=%s" % (i, os.path.join(mdir, name, i + ".npy"))]
        ort = [a.peer_python, ORT_RUN, model, "--threads", "1"] + ins
        engines = [("ref", [a.qdqc, "run", model, "--engine=ref"] + ins),
                   ("jit", [a.qdqc, "run", model, "--engine=jit"] + ins),
                   ("ort-dis", ort + ["--opt", "disabled"]),
                   ("ort-all", ort + ["--opt", "all"])]
        res = {}
        for eng, cmd in engines:
            d = os.path.join(work, name, eng)
            rc, out, err = run(cmd + ["--output-dir", d], timeout=1800)
            if rc != 0:
                print("%-16s %-14s FAIL: exit %d: %s" % (name, eng, rc, err.strip()[-400:]))
                fails.append((name, eng + " failed"))
                continue
            res[eng] = load_dir(d)
        if "ref" in res:
            compare(name, res, fails)
        sys.stdout.flush()
    print("%d models, %d failed checks" % (len(names), len(fails)))
    for f in fails:
        print("FAILED: %s: %s" % f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
