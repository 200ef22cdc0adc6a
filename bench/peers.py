#!/usr/bin/python3
"""peers.py: qdqc beside the other compilers and runtimes of quantized ONNX, on the same files.

    /usr/bin/python3 bench/peers.py [--build build] [--work /tmp/qdqc_peers] [--models a,b]
                                    [--rounds 5] [--budget 2.0] [--max-iters 40]
                                    [--out docs/peers.md] [--json WORK/peers.json] [--reuse]

With --corpus DIR, the models are every quantized file of a producer corpus (the WORKDIR of
test/models/producers/run_corpus.py: DIR/<producer>/<model>_<variant>.onnx, named
<producer>/<file> in the table) and the table goes into OUT's `corpus` section instead.
Models (default): the small fixtures networks (test/models/fixtures/resnet_ort_u8.onnx,
mobilenetv2_ort_u8.onnx, 32x32), the 224x224 networks of `test/models/gen_fixtures.py --full`
(ResNet-18 and MobileNetV2 as ORT quantize_static, torch and TensorRT write them) and transformer
blocks of test/models/gen_transformers.py (tiny and base), generated into WORK/models like
bench/run_bench.py does. A name in --models is a fixture (test/models/fixtures/NAME.onnx), a
generated model, or a path to a .onnx file (its inputs, seeded: floats standard normal, integer
inputs 1 for attention masks, 0 for token type ids, else in [0, 100); an .npz when several).

Engines, each in its own process (bench/peers_worker.py under the peer python, tools/setup.sh
--peer), fed the same input:
  qdqc     JIT through libqdqc.so's C API (qdqc_jit_create / qdqc_jit_run), 1 thread
  ort1/2   ONNX Runtime, graph optimisations all (ort_run.py --opt all), 1 and 2 intra-op threads
  tvm      Apache TVM Relax: relax.frontend.onnx.from_onnx, DecomposeOpsForInference, the "zero"
           pipeline (legalize, fold constants, fuse), tvm.compile for llvm with mcpu = the host's
           (clang-22 -march=native), relax.VirtualMachine; TVM_NUM_THREADS=1, no tuning
  iree     iree-import-onnx, iree-compile --iree-hal-target-backends=llvm-cpu
           --iree-llvmcpu-target-cpu=host, iree.runtime's local-sync driver (1 thread)
  iree-mlir (with --engines, not by default) qdqc's own --requant=fixed --emit=mlir export,
           compiled and run by IREE the same way (its integer tosa ops kept)
For each engine and model: whether it compiles (its error, one line, otherwise), the difference
from ONNX Runtime's literal graph (--opt disabled, 1 thread): at outputs computed by a
DequantizeLinear with a scalar scale, in quantization units (max |diff| / scale), else the max
absolute error; and the latency: `rounds` rounds, the engines in a rotated order each round,
each engine timing K runs per round (K from its first run so that a round takes about `budget`
seconds, at most max-iters/rounds); median wall and median process CPU time (user+sys) per run.
Where qdqc (1 thread) is not the fastest at 1 thread, `qdqc bench MODEL --profile --json` gives
the op kinds that take its time. Writes WORK/peers.json and the table into OUT between
<!-- peers:begin --> and <!-- peers:end -->, with the date, the CPU, the versions, the load
average and the command.
"""
import argparse
import collections
import json
import os
import platform
import re
import select
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402

FIXTURES = ["resnet_ort_u8", "mobilenetv2_ort_u8"]
FULL = ["resnet18_ort_u8_224", "resnet18_torch_u8_224", "resnet18_trt_i8_224",
        "mobilenetv2_ort_u8_224", "mobilenetv2_torch_u8_224", "mobilenetv2_trt_i8_224"]
TRANSFORMERS = ["bert_qs_tiny", "vit_qs_tiny", "gpt2_qs_tiny", "bert_qs_base", "vit_qs_b16"]
ENGINES = [("qdqc", 1), ("ort", 1), ("ort", 2), ("tvm", 1), ("iree", 1)]
WORKER = os.path.join(ROOT, "bench", "peers_worker.py")


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def label(e, t):
    return {"qdqc": "qdqc", "ort": "ORT", "tvm": "TVM", "iree": "IREE", "ortlit": "ORT literal",
            "iree-mlir": "IREE on qdqc's MLIR"}[e] + \
        (" %dt" % t if e == "ort" else "")


class Worker:
    def __init__(self, engine, threads, model, inp, work, lib, timeout):
        self.engine, self.threads = engine, threads
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        self.p = subprocess.Popen([peerenv.python(), WORKER, engine, model, inp, str(threads), work, lib],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env)
        self.error, self.compile_s = None, None
        line = self._readline(timeout)
        if line is None:
            self.error = "no result within %d s (compile or first run)" % timeout
            self.close()
        elif line.startswith("ready "):
            self.compile_s = float(line.split()[1])
        elif line.startswith("error "):
            self.error = line[6:].strip()
            self.close()
        else:
            err = self.p.stderr.read() if self.p.poll() is not None else ""
            lines = [l for l in (line + "\n" + err).strip().splitlines() if l.strip()]
            self.error = "worker died: " + (lines[-1] if lines else "exit %s" % self.p.returncode)
            self.close()

    def _readline(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return None
        return self.p.stdout.readline().strip()

    def time(self, k):
        self.p.stdin.write("%d\n" % k)
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("%s worker died" % self.engine)
            if line.strip() == "end":
                return out
            out.append(tuple(float(v) for v in line.split()))

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def dq_scales(model):
    """{output name: scale} of graph outputs that a DequantizeLinear with a scalar scale computes."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model, load_external_data=False)
    # only the scales: the weights may have types this onnx cannot decode (Debian's 1.13: int4)
    want = {n.input[1] for n in m.graph.node if n.op_type == "DequantizeLinear" and len(n.input) > 1}
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer if i.name in want}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.output[0] in want:
            for a in n.attribute:
                if a.name == "value":
                    inits[n.output[0]] = numpy_helper.to_array(a.t)
    prod = {o: n for n in m.graph.node for o in n.output}
    out = {}
    for o in m.graph.output:
        n = prod.get(o.name)
        if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in inits:
            s = np.asarray(inits[n.input[1]])
            if s.size == 1:
                out[o.name] = float(s.reshape(()))
    return out, [o.name for o in m.graph.output]


def agreement(ref, got, scales, names):
    """'max diff' text of got against ref: units where a scalar-scale DQ computes the output."""
    if len(ref) != len(got):
        return "%d outputs, ORT %d" % (len(got), len(ref)), None
    units, abserr = 0.0, 0.0
    any_q = False
    for i, (a, b) in enumerate(zip(ref, got)):
        b = np.asarray(b)
        if a.shape != b.shape and a.size == b.size:
            b = b.reshape(a.shape)
        if a.shape != b.shape:
            return "shape %s, ORT %s" % (b.shape, a.shape), None
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        d = float(d.max()) if d.size else 0.0
        nm = names[i] if i < len(names) else None
        if a.dtype.kind in "iu":
            units, any_q = max(units, d), True
        elif nm in scales:
            units, any_q = max(units, d / scales[nm]), True
        else:
            abserr = max(abserr, d)
    if any_q and abserr == 0:
        return "%.3g units" % units, units
    if any_q:
        return "%.3g units, %.3g abs" % (units, abserr), units
    return "%.3g abs" % abserr, None


def model_path(a, name):
    if name.endswith(".onnx"):
        return os.path.abspath(name), None
    f = os.path.join(ROOT, "test", "models", "fixtures", name + ".onnx")
    if os.path.exists(f):
        return f, None
    return os.path.join(a.work, "models", name + ".onnx"), os.path.join(a.work, "models", name, "input.npy")


def ensure_models(a, names):
    mdir = os.path.join(a.work, "models")
    os.makedirs(mdir, exist_ok=True)
    full = [n for n in names if n in FULL and not os.path.exists(os.path.join(mdir, n + ".onnx"))]
    if full:
        log("generating the 224x224 models into %s" % mdir)
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "gen_fixtures.py"),
                        "--full", mdir, "--full-only"], check=True, capture_output=True)
    tr = [n for n in names if n in TRANSFORMERS and not os.path.exists(os.path.join(mdir, n + ".onnx"))]
    if tr:
        log("generating the transformer blocks into %s" % mdir)
        args = []
        if any(n.endswith("_tiny") for n in tr):
            args += ["--out", mdir]
        if any(not n.endswith("_tiny") for n in tr):
            args += ["--full", mdir]
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test", "models", "gen_transformers.py")] +
                       args + ["--only", ",".join(tr)], check=True, capture_output=True)


def input_for(a, name, path, given):
    """A seeded input file for path: one .npy for a one-input model, else an .npz of every graph
    input by name (float: standard normal; integer: attention masks 1, token type ids 0, other
    ids (token ids, positions) in [0, 100))."""
    if given and os.path.exists(given):
        return given
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    rng = np.random.default_rng(7)
    arrs = {}
    for i in ins:
        dims = [d.dim_value or 1 for d in i.type.tensor_type.shape.dim]
        et = i.type.tensor_type.elem_type
        dt = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(et) if hasattr(onnx.helper, "tensor_dtype_to_np_dtype")
                      else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[et])  # Debian's onnx 1.13
        if np.issubdtype(dt, np.floating):
            arrs[i.name] = rng.standard_normal(dims).astype(dt)
        elif "mask" in i.name:
            arrs[i.name] = np.ones(dims, dt)
        elif "type" in i.name:
            arrs[i.name] = np.zeros(dims, dt)
        else:
            arrs[i.name] = rng.integers(0, 100, dims).astype(dt)
    stem = os.path.join(a.work, "inputs", re.sub(r"[^A-Za-z0-9_.]", "_", name))
    os.makedirs(os.path.dirname(stem), exist_ok=True)
    if len(arrs) == 1:
        np.save(stem + ".npy", next(iter(arrs.values())))
        return stem + ".npy"
    np.savez(stem + ".npz", **arrs)
    return stem + ".npz"


def corpus_models(d):
    """Every quantized file of a producer corpus directory (test/models/producers/run_corpus.py's
    WORKDIR: <producer>/<model>_<variant>.onnx; the float models left out), as paths."""
    out = []
    for prod in sorted(os.listdir(d)):
        pd = os.path.join(d, prod)
        if prod == "float" or not os.path.isdir(pd):
            continue
        out += [os.path.join(pd, f) for f in sorted(os.listdir(pd)) if f.endswith(".onnx")]
    return out


def profile(a, path):
    """Share of qdqc's 1-thread time per op kind (qdqc bench --profile --json), largest first."""
    r = subprocess.run([os.path.join(a.build, "bin", "qdqc"), "bench", path, "--profile", "--json",
                        "--iters", "20"], capture_output=True, text=True)
    if r.returncode:
        return None
    js = json.loads(r.stdout[r.stdout.index("{"):])
    by = collections.Counter()
    for n in js["nodes"]:
        by[n["op"]] += n["ms"]
    tot = sum(by.values()) or 1.0
    return [(op, ms / tot) for op, ms in by.most_common(4)]


def bench_model(a, name):
    path, given = model_path(a, name)
    shown = name
    if name.endswith(".onnx"):  # a path: its producer folder and file, as the corpus names them
        shown = "/".join(os.path.normpath(name).split(os.sep)[-2:])[:-len(".onnx")]
    rec = dict(model=shown, file=os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path),
               engines={})
    if not os.path.exists(path):
        rec["error"] = "missing " + path
        return rec
    inp = input_for(a, shown, path, given)
    work = os.path.join(a.work, "run", re.sub(r"[^A-Za-z0-9_.]", "_", shown))
    os.makedirs(work, exist_ok=True)
    lib = os.path.join(a.build, "libqdqc.so")
    scales, onames = dq_scales(path)
    ref = Worker("ortlit", 1, path, inp, work, lib, a.timeout)
    ref.close()
    refout = None
    if ref.error is None:
        refout = []
        i = 0
        while os.path.exists(os.path.join(work, "ortlit1.out%d.npy" % i)):
            refout.append(np.load(os.path.join(work, "ortlit1.out%d.npy" % i)))
            i += 1
    else:
        rec["ref_error"] = ref.error
    workers = []
    for e, t in a.engines:
        log("%s: %s (%d thread%s) compiling" % (name, e, t, "s" if t > 1 else ""))
        for f in os.listdir(work):
            if f.startswith("%s%d.out" % (e, t)):
                os.remove(os.path.join(work, f))
        w = Worker(e, t, path, inp, os.path.join(work, e) if e in ("tvm", "iree", "iree-mlir") else work, lib, a.timeout)
        er = dict(engine=e, threads=t, label=label(e, t))
        rec["engines"][label(e, t)] = er
        if w.error:
            er["error"] = w.error.replace(os.path.dirname(path) + os.sep, "")  # the file, not where it lies
            log("  %s" % w.error)
            continue
        er["compile_s"] = w.compile_s
        d = os.path.join(work, e) if e in ("tvm", "iree", "iree-mlir") else work
        outs, i = [], 0
        while os.path.exists(os.path.join(d, "%s%d.out%d.npy" % (e, t, i))):
            outs.append(np.load(os.path.join(d, "%s%d.out%d.npy" % (e, t, i))))
            i += 1
        if refout is not None:
            er["agree"], er["units"] = agreement(refout, outs, scales, onames)
        workers.append((w, er))
    # K per round from a probe run of each engine, then alternating rounds
    for w, er in workers:
        ms = statistics.median(x[0] for x in w.time(3))
        er["k"] = max(1, min(a.max_iters // a.rounds, int(a.budget * 1e3 / max(ms, 1e-3))))
        er["runs"] = []
    for r in range(a.rounds):
        order = workers[r % len(workers):] + workers[:r % len(workers)] if workers else []
        for w, er in order:
            er["runs"] += w.time(er["k"])
    for w, er in workers:
        w.close()
        er["wall_ms"] = statistics.median(x[0] for x in er["runs"])
        er["cpu_ms"] = statistics.median(x[1] for x in er["runs"])
        er["n"] = len(er["runs"])
        del er["runs"]
    one = {k: v for k, v in rec["engines"].items() if "wall_ms" in v and not k.endswith("2t")}
    if "qdqc" in one:
        best = min(one, key=lambda k: one[k]["cpu_ms"])
        rec["fastest_1t"] = best
        if best != "qdqc":
            rec["profile"] = profile(a, path)
    return rec


def versions():
    code = ("import onnxruntime, tvm, iree.compiler.version as v, iree.runtime as r\n"
            "print(onnxruntime.__version__); print(tvm.__version__)\n"
            "import importlib.metadata as m\n"
            "print(m.version('iree-base-compiler')); print(m.version('iree-base-runtime'))")
    out = subprocess.run([peerenv.python(), "-c", code], capture_output=True, text=True).stdout.split()
    return dict(zip(["onnxruntime", "tvm", "iree-base-compiler", "iree-base-runtime"], out))


def machine():
    cpu = "?"
    flags = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and cpu == "?":
                cpu = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = line
    feats = [x for x in ("avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16") if " %s" % x in flags]
    return "%s, %d vCPUs (%s), %s" % (cpu, os.cpu_count(), ", ".join(feats), platform.release())


def qdqc_version(a):
    r = subprocess.run([os.path.join(a.build, "bin", "qdqc"), "--version"], capture_output=True, text=True)
    v = (r.stdout or r.stderr).strip().splitlines()
    g = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return "%s (%s)" % (v[0] if v else "qdqc", g.stdout.strip())


def fmt_cell(er):
    if "error" in er:
        msg = re.sub(r"(?:^|(?<=: ))/\S+?:\d+:\d+: ", "", er["error"])
        return "error: " + msg.replace("|", "\\|")
    return "%.3g / %.3g" % (er["wall_ms"], er["cpu_ms"])


def report(a, recs, meta):
    labels = []
    for r in recs:
        labels += [l for l in r["engines"] if l not in labels]
    L = ["<!-- %s:begin -->" % a.section,
         "Measured %s on %s; load average %s at the start, %s at the end. %s; ONNX Runtime %s, "
         "Apache TVM %s, IREE %s (compiler) / %s (runtime), from the peer environment "
         "(tools/peer-requirements.txt). Command: `%s`." %
         (meta["date"], meta["machine"], meta["load_start"], meta["load_end"], meta["qdqc"],
          meta["versions"].get("onnxruntime"), meta["versions"].get("tvm"),
          meta["versions"].get("iree-base-compiler"), meta["versions"].get("iree-base-runtime"),
          meta["command"]),
         "",
         "Latency: median wall ms / median CPU ms (process user+sys) per run, %d alternating rounds. "
         "Agreement: max difference from ONNX Runtime's literal graph (`--opt disabled`), in "
         "quantization units of the output's DequantizeLinear, or absolute (abs)." % a.rounds,
         "",
         "| model | " + " | ".join(labels) + " | fastest at 1 thread (CPU) |",
         "|---|" + "---|" * len(labels) + "---|"]
    for r in recs:
        if "error" in r:
            L.append("| %s | %s |" % (r["model"], r["error"]) + " |" * len(labels))
            continue
        cells = [fmt_cell(r["engines"][l]) if l in r["engines"] else "" for l in labels]
        L.append("| %s | %s | %s |" % (r["model"], " | ".join(cells), r.get("fastest_1t", "")))
    L += ["", "Agreement with ONNX Runtime's literal graph:", "",
          "| model | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for r in recs:
        if "error" in r:
            continue
        cells = []
        for l in labels:
            er = r["engines"].get(l, {})
            cell = "error" if "error" in er else er.get("agree", r.get("ref_error", ""))
            cells.append(re.sub(r"^1 units", "1 unit", cell))
        L.append("| %s | %s |" % (r["model"], " | ".join(cells)))
    prof = [r for r in recs if r.get("profile")]
    if prof:
        L += ["", "Where qdqc is not the fastest at 1 thread, its profile (`qdqc bench MODEL --profile`, "
              "share of its time by op kind):", ""]
        for r in prof:
            L.append("- %s (%s fastest): %s" % (r["model"], r["fastest_1t"], ", ".join(
                "%s %.0f%%" % (op, 100 * s) for op, s in r["profile"])))
    L.append("<!-- %s:end -->" % a.section)
    return "\n".join(L) + "\n"


def write_doc(path, text, section="peers"):
    b, e = "<!-- %s:begin -->" % section, "<!-- %s:end -->" % section
    old = open(path).read() if os.path.exists(path) else "# Peers\n\n%s\n%s\n" % (b, e)
    i, j = old.find(b), old.find(e)
    if i < 0 or j < 0:
        old += "\n%s\n%s\n" % (b, e)
        i, j = old.find(b), old.find(e)
    new = old[:i] + text.rstrip("\n") + old[j + len(e):]
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/qdqc_peers")
    ap.add_argument("--models", default=",".join(FIXTURES + FULL + TRANSFORMERS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget", type=float, default=2.0, help="seconds per engine per round")
    ap.add_argument("--max-iters", type=int, default=40)
    ap.add_argument("--timeout", type=int, default=900, help="seconds for a compile and first run")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "peers.md"))
    ap.add_argument("--json")
    ap.add_argument("--engines", default=",".join("%s:%d" % et for et in ENGINES),
                    help="ENGINE:THREADS list; also iree-mlir:1 (qdqc's MLIR export through IREE)")
    ap.add_argument("--reuse", action="store_true", help="re-render the table of the last run's JSON")
    ap.add_argument("--corpus", help="a producer corpus directory (run_corpus.py's WORKDIR): its "
                    "quantized files instead of --models")
    ap.add_argument("--section", default=None, help="the marked section of OUT to write "
                    "(<!-- NAME:begin/end -->; default peers, or corpus with --corpus)")
    a = ap.parse_args()
    a.section = a.section or ("corpus" if a.corpus else "peers")
    a.build, a.work = os.path.abspath(a.build), os.path.abspath(a.work)
    a.engines = [(e.split(":")[0], int(e.split(":")[1]) if ":" in e else 1) for e in a.engines.split(",") if e]
    names = corpus_models(os.path.abspath(a.corpus)) if a.corpus else [m for m in a.models.split(",") if m]
    if a.reuse:
        d = json.load(open(a.json or os.path.join(a.work, "peers.json")))
        a.rounds = int(re.search(r"--rounds (\d+)", d["meta"]["command"]).group(1)) \
            if "--rounds" in d["meta"]["command"] else a.rounds
        text = report(a, d["models"], d["meta"])
        write_doc(a.out, text, a.section)
        sys.stdout.write(text)
        return 0
    why = peerenv.check(module="tvm") or peerenv.check(module="iree.runtime")
    if why:
        log("peers.py: " + why)
        return 1
    ensure_models(a, names)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine=machine(),
                load_start="%.2f" % os.getloadavg()[0], versions=versions(), qdqc=qdqc_version(a),
                command=("/usr/bin/python3 bench/peers.py " + " ".join(sys.argv[1:])).strip())
    recs = []
    for n in names:
        recs.append(bench_model(a, n))
        log(json.dumps(recs[-1]))
        with open(a.json or os.path.join(a.work, "peers.json"), "w") as f:
            json.dump(dict(meta=meta, models=recs), f, indent=1)
    meta["load_end"] = "%.2f" % os.getloadavg()[0]
    with open(a.json or os.path.join(a.work, "peers.json"), "w") as f:
        json.dump(dict(meta=meta, models=recs), f, indent=1)
    text = report(a, recs, meta)
    write_doc(a.out, text, a.section)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
