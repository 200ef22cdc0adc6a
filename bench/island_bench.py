#!/usr/bin/python3
"""island_bench.py: a quantized transformer layer with float islands (default: the BERT-style
attention block attention_u8_128x256.onnx of `gen_fixtures.py --full DIR`), qdqc against ONNX
Runtime in one script, so that both see the same machine load.

  island_bench.py --qdqc build/bin/qdqc [--before OLD/bin/qdqc] [--model M.onnx]
                  [--threads 1,2] [--rounds 5] [--iters 200]

1. Agreement: one seeded input (normal, sigma 1), `qdqc run --engine=ref`, `--engine=jit`
   (1 and 2 threads) and `bench/ort_run.py --opt disabled` (ORT's literal output) and
   `--opt all`; every output in units of its output scale (the scale of the model's last
   DequantizeLinear): elements equal and max difference.
2. Latency: for each thread count, `rounds` rounds alternating qdqc bench (median of `iters`
   runs), the --before build's qdqc bench if given, and ort_run.py --bench (opt all); the
   median of the rounds' medians, and the load average before and after.
3. `qdqc bench --profile` (1 thread): where the time goes, top 8 steps.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()[-800:]))
    return r.stdout


def out_scale(model):
    m = onnx.load(model)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    outs = {o.name for o in m.graph.output}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.output[0] in outs:
            return float(inits[n.input[1]].reshape(-1)[0])
    return None


def load_outs(d):
    return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def agreement(a, tmp):
    m = onnx.load(a.model)
    inits = {i.name for i in m.graph.initializer}
    feeds = []
    rng = np.random.default_rng(7)
    for i in m.graph.input:
        if i.name in inits:
            continue
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        f = os.path.join(tmp, i.name + ".npy")
        np.save(f, rng.standard_normal(shape).astype(np.float32))
        feeds.append("%s=%s" % (i.name, f))
    runs = {}
    for tag, cmd in (("ref", [a.qdqc, "run", a.model, "--engine=ref"]),
                     ("jit", [a.qdqc, "run", a.model, "--engine=jit"]),
                     ("jit-2t", [a.qdqc, "run", a.model, "--engine=jit", "--threads", "2"]),
                     ("ort-disabled", [peerenv.python(), a.ort_run, a.model, "--opt", "disabled"]),
                     ("ort-all", [peerenv.python(), a.ort_run, a.model, "--opt", "all"])):
        d = os.path.join(tmp, tag)
        args = []
        for f in feeds:
            args += ["--input", f]
        sh(cmd + args + ["--output-dir", d], cwd=ROOT)
        runs[tag] = load_outs(d)
    s = out_scale(a.model) or 1.0
    print("agreement (units of the output scale %.9g; seeded normal input):" % s)
    ref = runs["ref"]
    for tag in ("jit", "jit-2t", "ort-disabled", "ort-all"):
        for name, r in ref.items():
            o = runs[tag].get(name)
            if o is None:
                o = list(runs[tag].values())[0]
            d = np.abs(r.astype(np.float64) - o.astype(np.float64)) / s
            print("  ref vs %-13s %-10s %8d elements, %8d equal, max %.3g units" %
                  (tag, name, r.size, int((r == o).sum()), float(d.max())))


def load():
    return open("/proc/loadavg").read().split()[0]


def qdqc_ms(q, model, t, iters):
    out = sh([q, "bench", model, "--threads", str(t), "--iters", str(iters), "--json"])
    return float(json.loads(out)["median_ms"])


def ort_ms(a, t, iters, tmp):
    f = os.path.join(tmp, "bench_in.npy")
    m = onnx.load(a.model)
    inits = {i.name for i in m.graph.initializer}
    args = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        np.save(f, np.zeros(shape, np.float32))
        args += ["--input", "%s=%s" % (i.name, f)]
    out = sh([peerenv.python(), a.ort_run, a.model, "--opt", "all", "--threads", str(t), "--bench", str(iters),
              "--output-dir", os.path.join(tmp, "ob")] + args, cwd=ROOT)
    mm = re.search(r"median[^0-9]*([0-9.]+)\s*ms", out)
    return float(mm.group(1)) if mm else float("nan")


def latency(a, tmp):
    print("\nlatency (median of %d rounds; each round: median of %d runs), load %s before" %
          (a.rounds, a.iters, load()))
    for t in [int(x) for x in a.threads.split(",")]:
        res = {"qdqc": [], "before": [], "ort": []}
        for _ in range(a.rounds):
            res["qdqc"].append(qdqc_ms(a.qdqc, a.model, t, a.iters))
            if a.before:
                res["before"].append(qdqc_ms(a.before, a.model, t, a.iters))
            res["ort"].append(ort_ms(a, t, a.iters, tmp))
        med = {k: float(np.median(v)) for k, v in res.items() if v}
        line = "  %d thread%s: qdqc %.3f ms" % (t, "s" if t > 1 else "", med["qdqc"])
        if "before" in med:
            line += ", before %.3f ms" % med["before"]
        line += ", ORT (opt all) %.3f ms; qdqc / ORT = %.2f" % (med["ort"], med["qdqc"] / med["ort"])
        print(line)
    print("  load %s after" % load())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qdqc", required=True)
    ap.add_argument("--before", help="another qdqc build to time alongside")
    ap.add_argument("--model", default="/tmp/qdqc_full/attention_u8_128x256.onnx")
    ap.add_argument("--ort-run", default=peerenv.ORT_RUN)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=200)
    a = ap.parse_args()
    if not os.path.exists(a.model):
        d = os.path.dirname(a.model)
        sh([sys.executable, os.path.join(ROOT, "test/models/gen_fixtures.py"), "--full", d])
    with tempfile.TemporaryDirectory() as tmp:
        agreement(a, tmp)
        latency(a, tmp)
    print("\nqdqc bench --profile (1 thread):")
    prof = sh([a.qdqc, "bench", a.model, "--profile"]).splitlines()
    print("\n".join("  " + ln for ln in prof[:11]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
