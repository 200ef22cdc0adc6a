#!/usr/bin/python3
"""dynq_bert.py: ONNX Runtime's dynamic quantization (quantize_dynamic) through qdqc, before and
after, against ONNX Runtime, in one script (issue 14 item 3).

    /usr/bin/python3 bench/dynq_bert.py [--build build] [--before DIR] [--iters 60] [--rounds 6]
                                        [--threads 1,2] [--work /tmp/qdqc_dynq]

Models (test/e2e/dynq_models.py, quantize_dynamic's layout: DynamicQuantizeLinear ->
MatMulInteger -> Cast -> Mul by the scales [-> Add bias], QInt8 weights per column):
  bert_layer_256  a BERT encoder layer, x [1, 128, 256], 4 heads, FFN 1024 (GELU as Erf): six
                  dynamic linears; Q K^T, softmax, P V, GELU and the layer norms stay float, as
                  quantize_dynamic leaves them;
  mlp_256         x [128, 256] -> dynamic Linear(256, 1024) -> Relu -> dynamic Linear(1024, 256):
                  the dynamic-quantization kernels alone.
For each model and thread count: qdqc after (--build: JIT through libqdqc.so, ctypes, as
bench/run_bench.py), qdqc before (--before: another build's libqdqc.so, e.g. main before the
change), ONNX Runtime (bench/ort_cpu.js: `ort_run.js --opt all --threads N` options),
alternating in rounds on the same input; per engine the median and min wall time and the
median process CPU time per run (all threads; robust to the load of a shared machine). Then
the largest difference of qdqc's output from ONNX Runtime's (--opt disabled: the literal graph,
and --opt all). Prints a markdown table (stdout) and the machine and load."""
import argparse
import os
import statistics
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import dynq_models  # noqa: E402
import run_bench  # noqa: E402

MODELS = ["bert_layer_256", "mlp_256"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--before", help="build directory of the qdqc to compare with (its libqdqc.so)")
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--work", default="/tmp/qdqc_dynq")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    models = a.models.split(",")
    mach = run_bench.machine()
    dynq_models.write(a.work, models)
    engines = [("after", run_bench.Qdqc(os.path.join(a.build, "libqdqc.so")))]
    if a.before:
        engines.append(("before", run_bench.Qdqc(os.path.join(a.before, "libqdqc.so"))))
    rows = []
    for name in models:
        path = os.path.join(a.work, name + ".onnx")
        inp = os.path.join(a.work, name, "x.npy")
        x = np.ascontiguousarray(np.load(inp))
        loaded = [(tag, q.load(path, x)) for tag, q in engines]
        err = {}
        y = None
        for tag, m in loaded:
            m.time(1)
            if tag == "after":
                y = m.outs[0].copy()
        for opt in ("disabled", "all"):
            od = os.path.join(a.work, name, "ort_" + opt)
            run_bench.run(["node", os.path.join(ROOT, "bench", "ort_run.js"), path, "--input", "x=" + inp,
                           "--output-dir", od, "--opt", opt, "--threads", "1"])
            yo = np.load(os.path.join(od, "y.npy"))
            err[opt] = float(np.max(np.abs(y.astype(np.float64) - yo))) / max(1e-30, float(np.max(np.abs(yo))))
        per = max(1, a.iters // a.rounds)
        for th in [int(t) for t in a.threads.split(",")]:
            times = {tag: [] for tag, _ in loaded}
            times["ort"] = []
            for _, m in loaded:
                m.set_threads(th)
                m.time(3)
            for _ in range(a.rounds):
                for tag, m in loaded:
                    times[tag] += m.time(per)
                times["ort"] += run_bench.ort_bench(path, inp, per, th)
            st = {k: (statistics.median(t[0] for t in v), min(t[0] for t in v), statistics.median(t[1] for t in v))
                  for k, v in times.items()}
            rows.append((name, th, st, err))
            run_bench.log("%s t%d: %s" % (name, th, ", ".join("%s %.3f ms (min %.3f, cpu %.3f)" % ((k,) + v) for k, v in st.items())))
        for _, m in loaded:
            m.close()
    print(mach)
    hdr = "| model | threads | qdqc ms (median / min / cpu) |"
    if a.before:
        hdr += " qdqc before ms (median / min / cpu) |"
    hdr += " ORT ms (median / min / cpu) | qdqc / ORT cpu | max rel. diff vs ORT (opt disabled / all) |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    for name, th, st, err in rows:
        cells = [name, str(th), "%.3f / %.3f / %.3f" % st["after"]]
        if a.before:
            cells.append("%.3f / %.3f / %.3f" % st["before"])
        cells += ["%.3f / %.3f / %.3f" % st["ort"], "%.2f" % (st["after"][2] / st["ort"][2]),
                  "%.1e / %.1e" % (err["disabled"], err["all"])]
        print("| " + " | ".join(cells) + " |")
    print("load at the end: %.1f (1-minute average, %d CPUs)" % (os.getloadavg()[0], os.cpu_count()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
