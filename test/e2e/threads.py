#!/usr/bin/python3
"""threads.py QDQC [MODEL[:PASSES]...]: the JIT's outputs do not depend on the thread count.
Each model runs with `qdqc run --engine=jit --threads T` for T = 1, 2, 3 and 7 (odd counts:
chunks that do not divide the units evenly, more threads than units) and with --engine=ref, on
the same seeded random inputs; every output must be byte-identical across all five runs.
MODEL:PASSES runs with --passes=PASSES (empty: as imported). Default models: graphs/par_split.qir
(every kernel the code generator splits for the parallel-for hook, gen_par.py), the nhwc_chain
graphs, and the ResNet- and MobileNetV2-style fixtures. Prints one line per model and a total."""
import os, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
THREADS = (1, 2, 3, 7)


def outputs(d):
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))}


def check(qdqc, model, passes, tmp):
    runs = [("ref", ["--engine=ref"])] + [("t%d" % t, ["--engine=jit", "--threads", str(t)]) for t in THREADS]
    got = {}
    for name, flags in runs:
        d = os.path.join(tmp, name)
        cmd = [qdqc, "run", model, "--random-inputs", "3", "--output-dir", d] + flags
        if passes is not None:
            cmd.append("--passes=" + passes)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return "%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip())
        got[name] = outputs(d)
    if not got["ref"]:
        return "no outputs"
    for name in got:
        if got[name] != got["ref"]:
            bad = [f for f in got["ref"] if got[name].get(f) != got["ref"][f]]
            return "%s differs from the reference in %s" % (name, ", ".join(bad) or "the output set")
    return None


def main():
    qdqc = sys.argv[1]
    models = sys.argv[2:] or (
        [os.path.join(here, "graphs", "par_split.qir") + ":"] +
        [os.path.join(here, "graphs", g) + ":" for g in sorted(os.listdir(os.path.join(here, "graphs")))
         if g.startswith("nhwc_chain_")] +
        [os.path.join(root, "test", "models", "fixtures", m) for m in
         ("resnet_ort_u8.onnx", "mobilenetv2_ort_u8.onnx", "mobilenetv2_trt_i8.onnx")])
    fails = 0
    for spec in models:
        model, passes = spec, None
        if ":" in spec:
            model, passes = spec.split(":", 1)
        with tempfile.TemporaryDirectory() as tmp:
            err = check(qdqc, model, passes, tmp)
        print("%s %s%s" % ("FAIL" if err else "ok", os.path.basename(model), ": " + err if err else ""))
        fails += err is not None
    print("%d models, threads %s, %d failed" % (len(models), "/".join(map(str, THREADS)), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
