#!/usr/bin/python3
"""torch_vit_bench.py: qdqc vs ONNX Runtime on the FX QAT exports of torchvision's transformers
(test/models/torch_vit.py), and where qdqc's time goes.

    /usr/bin/python3 bench/torch_vit_bench.py [--build build] [--work /tmp/qdqc_vit]
        [--models vit2_qat,vit2_qat_o17,swins1_qat,swin_t_qat] [--rounds 5] [--iters 4]
        [--threads 1] [--profile]

For each model: qdqc's JIT through the public C API (bench/run_bench.py's Qdqc) and ORT --opt all
(bench/ort_cpu.py, on the rank-0-scale copy test/e2e/torch_qat.py's scalarize() makes), alternating
in --rounds rounds of --iters runs each. Reported: the medians of wall and process CPU time per run
(user + sys), their CPU ratio qdqc/ORT, the 1-minute load average at the end of each model.
--profile adds `qdqc bench MODEL --profile --json` (1 thread): the top nodes by time and the time
per op kind. Prints markdown; writes nothing into docs/. The same models run in
bench/run_bench.py by name (--models vit2_qat,...).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import run_bench as rb  # noqa: E402
from torch_qat import scalarize  # noqa: E402


def profile(qdqc, model, iters, top):
    out = rb.run([qdqc, "bench", model, "--profile", "--json", "--iters", str(iters)])
    js = json.loads(out[out.index("{"):])
    nodes = js["nodes"]
    total = sum(n["ms"] for n in nodes)
    byop = {}
    for n in nodes:
        byop[n["op"]] = byop.get(n["op"], 0.0) + n["ms"]
    L = ["", "`qdqc bench %s --profile` (1 thread, %d iters): median %.1f ms per run, steps %.1f ms "
         "over %d nodes (shares are of the steps)" %
         (os.path.basename(model), iters, js["median_ms"], total, len(nodes)), "",
         "| node | op | ms | share |", "|---|---|---:|---:|"]
    for n in sorted(nodes, key=lambda n: -n["ms"])[:top]:
        L.append("| %s | %s | %.2f | %.1f%% |" % (n["name"], n["op"], n["ms"], 100 * n["ms"] / total))
    L += ["", "| op | ms | share |", "|---|---:|---:|"]
    for op, ms in sorted(byop.items(), key=lambda kv: -kv[1])[:12]:
        L.append("| %s | %.2f | %.1f%% |" % (op, ms, 100 * ms / total))
    return "\n".join(L) + "\n", js


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/qdqc_vit")
    ap.add_argument("--models", default="vit2_qat,vit2_qat_o17,swins1_qat,swin_t_qat")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--profile-iters", type=int, default=5)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    names = [m for m in a.models.split(",") if m]
    mdir = os.path.join(a.work, "models")
    os.makedirs(mdir, exist_ok=True)
    miss = [m for m in names if not os.path.exists(os.path.join(mdir, m + ".onnx"))]
    if miss:
        rb.log("exporting %s into %s" % (",".join(miss), mdir))
        rb.run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "torch_vit.py"), "--out", mdir,
                "--only", ",".join(miss)])
    qdqc = os.path.join(a.build, "bin", "qdqc")
    q = rb.Qdqc(os.path.join(a.build, "libqdqc.so"))
    print("Machine: %s; %d thread(s); %d rounds x %d runs, alternating.\n" % (rb.machine(), a.threads,
                                                                             a.rounds, a.iters))
    print("| model | qdqc ms (wall) | qdqc ms (CPU) | ORT ms (wall) | ORT ms (CPU) | qdqc/ORT (CPU) | load |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    profs = []
    for name in names:
        path = os.path.join(mdir, name + ".onnx")
        inp = os.path.join(mdir, name, "input.npy")
        x = np.ascontiguousarray(np.load(inp))
        ort_path = os.path.join(a.work, name + ".scalar.onnx")
        scalarize(path, ort_path)
        m = q.load(path, x)
        m.set_threads(a.threads)
        m.time(1)
        qt, ot = [], []
        for _ in range(a.rounds):
            qt += m.time(a.iters)
            ot += rb.ort_bench(ort_path, inp, a.iters, a.threads)
        m.close()
        med = lambda v, i: statistics.median(t[i] for t in v)
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |" % (
            name, med(qt, 0), med(qt, 1), med(ot, 0), med(ot, 1), med(qt, 1) / med(ot, 1), os.getloadavg()[0]))
        sys.stdout.flush()
        if a.profile:
            profs.append(profile(qdqc, path, a.profile_iters, a.top)[0])
    for p in profs:
        sys.stdout.write(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
