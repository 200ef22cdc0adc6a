#!/usr/bin/python3
"""dynq_bert.py: dynamic quantization through qdqc, before and after, against ONNX Runtime, in
one script (with --wonly, the weight-only matmuls' int8 activations).

    /usr/bin/python3 bench/dynq_bert.py [--build build] [--before DIR] [--wonly] [--iters 60]
                                        [--rounds 6] [--threads 1,2] [--work /tmp/qdqc_dynq]

Models of ONNX Runtime's quantize_dynamic (test/e2e/dynq_models.py: DynamicQuantizeLinear ->
MatMulInteger -> Cast -> Mul by the scales [-> Add bias], QInt8 weights per column):
  bert_layer_256  a BERT encoder layer, x [1, 128, 256], 4 heads, FFN 1024 (GELU as Erf): six
                  dynamic linears; Q K^T, softmax, P V, GELU and the layer norms stay float, as
                  quantize_dynamic leaves them;
  mlp_256         x [128, 256] -> dynamic Linear(256, 1024) -> Relu -> dynamic Linear(1024, 256):
                  the dynamic-quantization kernels alone.
Engines: qdqc (--build: JIT through libqdqc.so, ctypes, as bench/run_bench.py), qdqc before
(--before: another build's libqdqc.so, e.g. main before the change), ONNX Runtime
(bench/ort_cpu.py: the options of `ort_run.py --opt all --threads N`).
--wonly: also the weight-only models of bench/gen_wonly_mlp.py (DequantizeLinear(int8 W, per
column) -> MatMul, f32 activations) wonly_mlp_i8_2048_b1, wonly_mlp_i8_2048_b8 and
llama_qproj_i8_b16, with qdqc's default (f32 activations) and --weight-only=int8-acts (engine
"qdqc int8-acts") against ONNX Runtime (which rewrites such MatMuls into MatMulNBits).
For each model and thread count the engines alternate in rounds on the same input; per engine
the median and min wall time and the median process CPU time per run (all threads; robust to
the load of a shared machine). Then the largest difference of each qdqc output from ONNX
Runtime's (--opt disabled: the literal graph, and --opt all), relative to its largest output.
Prints a markdown table (stdout), the machine and the load."""
import argparse
import os
import statistics
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import dynq_models  # noqa: E402
import run_bench  # noqa: E402

MODELS = ["bert_layer_256", "mlp_256"]
WONLY = ["wonly_mlp_i8_2048_b1", "wonly_mlp_i8_2048_b8", "llama_qproj_i8_b16"]


def write_wonly(work, names):
    import gen_wonly_mlp
    for n, m, d, layers in gen_wonly_mlp.MLPS:
        if n in names:
            gen_wonly_mlp.build(n, m, d, layers, work)
    for n, m, k, nn, bits, block in gen_wonly_mlp.LINEARS:
        if n in names:
            gen_wonly_mlp.build_linear(n, m, k, nn, bits, block, work)


def bench_model(a, name, path, inp, engines):
    """[(name, threads, {engine: (median, min, cpu)}, {engine: (err disabled, err all)})]"""
    x = np.ascontiguousarray(np.load(inp))
    loaded = [(tag, q.load(path, x, opts)) for tag, q, opts in engines]
    ys = {}
    for tag, m in loaded:
        m.time(1)
        ys[tag] = m.outs[0].copy()
    err = {tag: [] for tag in ys}
    for opt in ("disabled", "all"):  # every model's input is x, its output y
        od = os.path.join(os.path.dirname(inp), "ort_" + opt)
        run_bench.run([run_bench.peerenv.python(), run_bench.peerenv.ORT_RUN, path, "--input",
                       "x=" + inp, "--output-dir", od, "--opt", opt, "--threads", "1"])
        yo = np.load(os.path.join(od, "y.npy"))
        for tag, y in ys.items():
            err[tag].append(float(np.max(np.abs(y.astype(np.float64) - yo))) / max(1e-30, float(np.max(np.abs(yo)))))
    rows = []
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
    return rows


def table(rows, tags):
    hdr = "| model | threads |" + "".join(" %s ms (median / min / cpu) |" % t for t in tags + ["ORT"])
    hdr += "".join(" %s / ORT cpu |" % t for t in tags)
    hdr += "".join(" %s max rel. diff vs ORT (opt disabled / all) |" % t for t in tags)
    out = [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    for name, th, st, err in rows:
        cells = [name, str(th)] + ["%.3f / %.3f / %.3f" % st[t] for t in tags + ["ort"]]
        cells += ["%.2f" % (st[t][2] / st["ort"][2]) for t in tags]
        cells += ["%.1e / %.1e" % tuple(err[t]) for t in tags]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--before", help="build directory of the qdqc to compare with (its libqdqc.so)")
    ap.add_argument("--wonly", action="store_true", help="also the weight-only models, f32 vs int8 activations")
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--work", default="/tmp/qdqc_dynq")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    mach = run_bench.machine()
    models = [m for m in a.models.split(",") if m]
    dynq_models.write(a.work, models)
    after = run_bench.Qdqc(os.path.join(a.build, "libqdqc.so"))
    engines = [("qdqc", after, ())]
    if a.before:
        engines.append(("qdqc before", run_bench.Qdqc(os.path.join(a.before, "libqdqc.so")), ()))
    rows = []
    for name in models:
        rows += bench_model(a, name, os.path.join(a.work, name + ".onnx"),
                            os.path.join(a.work, name, "x.npy"), engines)
    print(mach)
    print()
    print(table(rows, [t for t, _, _ in engines]))
    if a.wonly:
        write_wonly(a.work, WONLY)
        wrows = []
        weng = [("qdqc", after, ()), ("qdqc int8-acts", after, (("weight-only", "int8-acts"),))]
        for name in WONLY:
            wrows += bench_model(a, name, os.path.join(a.work, name + ".onnx"),
                                 os.path.join(a.work, name, "input.npy"), weng)
        print()
        print(table(wrows, [t for t, _, _ in weng]))
    print("\nload at the end: %.1f (1-minute average, %d CPUs)" % (os.getloadavg()[0], os.cpu_count()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
