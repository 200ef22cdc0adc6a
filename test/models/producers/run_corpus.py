#!/usr/bin/env python3
"""run_corpus.py: every file of the producer corpus through qdqc and ONNX Runtime.

    PEER_PYTHON test/models/producers/run_corpus.py QDQC WORKDIR [--only P[,P/FILE...]] [--quick]
                [--strict] [--json OUT.json] [--make-only]

Runs in the peer environment (.peer-venv/bin/python; tools/setup.sh --peer), offline.
1. The corpus: make_corpus.py, one process per producer, into
   WORKDIR/corpus-<hash>[-quick]/<producer>/, where <hash> is the sha256 (16 hex digits) of
   make_corpus.py and tools/peer-requirements.txt; a producer directory holding DONE or ERROR.txt
   is reused as it is (delete it to remake). --make-only stops here and prints the corpus
   directory (test/e2e/iree_corpus.py --producers runs this).
2. For every file (--only: producer names or producer/file-stem globs, e.g. ort,brevitas/cnn*):
   compile with qdqc (QDQC FILE -o x.o; a refusal is its first "error:" line), then
   `qdqc run --engine=jit` and `--engine=ref` on the same seeded inputs (numpy default_rng(7):
   floats uniform in [-1, 1], input_ids < 512, attention_mask with a padded tail), ONNX Runtime
   (CPU, 1 thread) with graph optimisations disabled (the literal QDQ graph) and at ORT_ENABLE_ALL.
   Per output: jit == ref bit for bit; against ORT literal, the largest difference in quantization
   units where a DequantizeLinear with one scale produces the output (|round(a/s) - round(b/s)|),
   else max abs and max rel error (float outputs); the share of elements equal to ORT --opt all.
   Also ORT --opt all's own largest difference from its literal graph, in the same units; and
   for a file with f16 float parts (ModelOpt's default), the difference from ORT's literal run
   of an f32-widened copy (widen_f16: the graph as qdqc's f16-widen pass reads it).
3. One table on stdout and, with --json, a summary: per file producer, model, file, status
   (ok | ok-as-ort-all | outside-1-unit | jit-ne-ref | refused | jit-error | ort-error | producer-error | crash),
   refusal, jit_eq_ref, max_units_vs_ort_literal, max_abs/max_rel (float outputs), share_eq_ort_all,
   max_units/max_abs_vs_ort_widened (f16 files);
   per producer that could not run at all, its exact error.
Exit 1 on a crash (qdqc killed by a signal or timing out), JIT != ref, or a supported file outside
one unit of ORT's literal graph (a DQ output) and farther from it than ORT's own optimised integer
run is (ok-as-ort-all: more than one unit, but no more than ORT --opt all: the near-tie flips that
grow along deep networks, docs/agreement.md "Networks"); --strict fails those too. Refusals and
producer errors are results, exit 0.
"""
import atexit
import fcntl
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import model_cache  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MAKE = os.path.join(HERE, "make_corpus.py")
PRODUCERS = ["ort", "nncf", "brevitas", "pt2e", "modelopt", "quark"]
TIMEOUT = 600


def corpus_dir(work, quick):
    h = hashlib.sha256()
    for p in (MAKE, os.path.join(ROOT, "tools", "peer-requirements.txt")):
        with open(p, "rb") as f:
            h.update(f.read())
    return os.path.join(work, "corpus-%s%s" % (h.hexdigest()[:16], "-quick" if quick else ""))


def make(cdir, prod, quick):
    d = os.path.join(cdir, prod)
    if os.path.exists(os.path.join(d, "DONE")) or os.path.exists(os.path.join(d, "ERROR.txt")):
        return
    os.makedirs(d, exist_ok=True)
    # one maker per producer directory: lit runs e2e/producers-quick.test and
    # mlir/iree-producers.test side by side on the same cached corpus
    with open(os.path.join(cdir, "." + prod + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(d, "DONE")) or os.path.exists(os.path.join(d, "ERROR.txt")):
            return
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        cmd = [sys.executable, MAKE, cdir, "--producer", prod] + (["--quick"] if quick else [])
        with open(os.path.join(d, "make.log"), "w") as log:
            # in the producer's directory: Quark writes quantized_info.csv into the current one
            r = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=3600, cwd=d)
        if r.returncode < 0:
            # killed (out of memory, interrupted): not the producer's answer, so nothing is
            # cached for it (the corpus directory outlives this run: lit.cfg.py's model cache)
            raise RuntimeError("make_corpus.py --producer %s killed by signal %d (see %s)"
                               % (prod, -r.returncode, os.path.join(d, "make.log")))
        if r.returncode not in (0, 3) and not os.path.exists(os.path.join(d, "ERROR.txt")):
            with open(os.path.join(d, "ERROR.txt"), "w") as f:
                f.write("make_corpus.py exited %d (see make.log)\n" % r.returncode)


def last_line(path):
    lines = [x for x in open(path, errors="replace").read().splitlines() if x.strip()]
    return lines[-1] if lines else ""


def feeds_for(specs):
    """The seeded inputs of every run: SPECS is (name, numpy dtype, shape) per graph input, in
    the graph's order; numpy default_rng(7), floats uniform in [-1, 1], integer inputs token ids
    < 512 (make_corpus.py's vocabulary), an input named *mask* ones with its last 4 zero (a
    padded tail). Also test/e2e/iree_corpus.py's inputs for this corpus."""
    rng = np.random.default_rng(7)
    out = {}
    for name, dt, shape in specs:
        if np.dtype(dt).kind in "iu":
            if "mask" in name:
                a = np.ones(shape, dt)
                a[..., shape[-1] - 4:] = 0
            else:
                a = rng.integers(0, 512, shape).astype(dt)
        else:
            a = rng.uniform(-1, 1, shape).astype(dt)
        out[name] = a
    return out


def inputs_for(model_path):
    import onnx
    g = onnx.load(model_path, load_external_data=False).graph
    inits = {t.name for t in g.initializer}
    specs = []
    for i in g.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        specs.append((i.name, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type), shape))
    return feeds_for(specs)


def output_scales(model_path):
    """Output name -> scale of the single-scale DequantizeLinear producing it, else None."""
    import onnx
    from onnx import numpy_helper
    g = onnx.load(model_path, load_external_data=False).graph
    prod = {o: n for n in g.node for o in n.output}
    init = {t.name: t for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            init[n.output[0]] = n.attribute[0].t
    res = {}
    for o in g.output:
        n = prod.get(o.name)
        s = None
        if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in init:
            a = numpy_helper.to_array(init[n.input[1]])
            if a.size == 1:
                s = float(a.reshape(()))
        res[o.name] = s
    return res


def widen_f16(path, out):
    """A copy of an ONNX file with f16 float parts rewritten as qdqc's f16-widen pass reads
    them (docs/numerics.md, "f16 graphs"): f16 initializers and constants as f32 (the same
    numbers), a Cast to f16 of an f16 value or a Cast to f32 of one an Identity, any other Cast
    to f16 followed by a Cast back to f32. ONNX Runtime's literal run of the copy is qdqc's
    semantics evaluated by ONNX Runtime. False (nothing written) when the file has no f16."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    m = onnx.load(path)
    F16, F32 = TensorProto.FLOAT16, TensorProto.FLOAT
    g = m.graph
    inf = onnx.shape_inference.infer_shapes(m).graph
    types = {v.name: v.type.tensor_type.elem_type for v in list(inf.value_info) + list(inf.input) + list(inf.output)}
    types.update({t.name: t.data_type for t in g.initializer})
    if F16 not in types.values():
        return False
    for i, t in enumerate(g.initializer):
        if t.data_type == F16:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name))
    nodes = []
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == F16:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float32), a.t.name))
        to = [a.i for a in n.attribute if a.name == "to"] if n.op_type == "Cast" else []
        if to and to[0] in (F16, F32) and types.get(n.input[0]) == F16:
            nodes.append(helper.make_node("Identity", [n.input[0]], [n.output[0]], name=n.name))
        elif to and to[0] == F16:
            nodes.append(helper.make_node("Cast", [n.input[0]], [n.output[0] + "_f16"], to=F16, name=n.name))
            nodes.append(helper.make_node("Cast", [n.output[0] + "_f16"], [n.output[0]], to=F32, name=n.name + "_f32"))
        else:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == F16:
            return False  # an f16 interface: not the ModelOpt layout this copy is for
    onnx.save(m, out)
    return True


def safe(name):
    return re.sub(r'[^A-Za-z0-9_.-]', '_', name)


def run(cmd):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -999, "", "timeout after %d s" % TIMEOUT


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


def ort_run(path, feeds, level):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return dict(zip(names, s.run(None, feeds)))


def qdqc_run(qdqc, path, feeds, engine, tmp):
    d = tempfile.mkdtemp(dir=tmp)
    cmd = [qdqc, "run", path, "--engine=" + engine, "--output-dir", d]
    for k, v in feeds.items():
        f = os.path.join(d, "in_" + safe(k) + ".npy")
        np.save(f, v)
        cmd += ["--input", "%s=%s" % (k, f)]
    outd = os.path.join(d, "out")
    os.makedirs(outd)
    cmd[cmd.index(d)] = outd
    rc, out, err = run(cmd)
    if rc != 0:
        return rc, first_error(err + out), None
    return 0, "", {f[:-4]: np.load(os.path.join(outd, f)) for f in os.listdir(outd) if f.endswith(".npy")}


def check_file(qdqc, prod, path, tmp, strict):
    stem = os.path.basename(path)[:-5]
    rec = {"producer": prod, "model": stem.split("_")[0], "file": "%s/%s.onnx" % (prod, stem),
           "status": None, "refusal": None, "jit_eq_ref": None, "max_units_vs_ort_literal": None,
           "max_abs_vs_ort_literal": None, "max_rel_vs_ort_literal": None, "share_eq_ort_all": None}
    obj = os.path.join(tmp, stem + ".o")
    rc, out, err = run([qdqc, path, "-o", obj])
    if rc != 0:
        rec["status"] = "crash" if rc < 0 else "refused"
        rec["refusal"] = first_error(err + out).replace(path, os.path.basename(path))
        return rec
    feeds = inputs_for(path)
    rc_j, e_j, jit = qdqc_run(qdqc, path, feeds, "jit", tmp)
    rc_r, e_r, ref = qdqc_run(qdqc, path, feeds, "ref", tmp)
    if rc_j < 0 or rc_r < 0:
        rec["status"], rec["refusal"] = "crash", e_j or e_r
        return rec
    if rc_j != 0 or rc_r != 0:
        rec["status"], rec["refusal"] = "jit-error", e_j or e_r
        return rec
    import onnxruntime as ort
    try:
        lit = ort_run(path, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        allr = ort_run(path, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    except Exception as e:
        rec["status"], rec["refusal"] = "ort-error", "%s: %s" % (type(e).__name__, str(e).splitlines()[0])
        return rec
    wide, wpath = None, os.path.join(tmp, stem + "_f32.onnx")
    try:
        if widen_f16(path, wpath):
            wide = ort_run(wpath, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    except Exception as e:
        rec["status"], rec["refusal"] = "ort-error", "widened copy: %s: %s" % (type(e).__name__, str(e).splitlines()[0])
        return rec
    scales = output_scales(path)
    jeq, units, aunits, mabs, mrel, neq, ntot = True, None, None, None, None, 0, 0
    wunits = wabs = None
    for name, a in lit.items():
        j, r = jit.get(safe(name)), ref.get(safe(name))
        if j is None or r is None or j.shape != a.shape:
            rec["status"], rec["refusal"] = "crash", "output %s missing or misshapen" % name
            return rec
        jeq = jeq and j.dtype == r.dtype and np.array_equal(j.view(np.uint8), r.view(np.uint8))
        x, y = r.astype(np.float64).ravel(), a.astype(np.float64).ravel()
        s = scales.get(name)
        if s or a.dtype.kind in "iu":
            d = np.abs(np.rint(x / s) - np.rint(y / s)) if s else np.abs(x - y)
            units = max(units or 0.0, float(d.max()) if d.size else 0.0)
            z = allr[name].astype(np.float64).ravel()
            d = np.abs(np.rint(z / s) - np.rint(y / s)) if s else np.abs(z - y)
            aunits = max(aunits or 0.0, float(d.max()) if d.size else 0.0)
        else:
            d = np.abs(x - y)
            mabs = max(mabs or 0.0, float(d.max()) if d.size else 0.0)
            rel = d / np.maximum(np.abs(y), 1e-6)
            mrel = max(mrel or 0.0, float(rel.max()) if rel.size else 0.0)
        if wide is not None:
            w = wide[name].astype(np.float64).ravel()
            d = np.abs(np.rint(x / s) - np.rint(w / s)) if s else np.abs(x - w)
            if s or a.dtype.kind in "iu":
                wunits = max(wunits or 0.0, float(d.max()) if d.size else 0.0)
            else:
                wabs = max(wabs or 0.0, float(d.max()) if d.size else 0.0)
        z = allr[name].astype(np.float64).ravel()
        neq += int((x == z).sum())
        ntot += x.size
    rec["jit_eq_ref"] = bool(jeq)
    rec["max_units_vs_ort_literal"] = units
    rec["ort_all_units_vs_ort_literal"] = aunits
    rec["max_abs_vs_ort_literal"] = mabs
    rec["max_rel_vs_ort_literal"] = mrel
    rec["share_eq_ort_all"] = neq / ntot if ntot else None
    rec["max_units_vs_ort_widened"], rec["max_abs_vs_ort_widened"] = wunits, wabs
    if not jeq:
        rec["status"] = "jit-ne-ref"
    elif units is not None and units > 1 and (strict or units > aunits):
        rec["status"] = "outside-1-unit"
    elif units is not None and units > 1:
        rec["status"] = "ok-as-ort-all"
    else:
        rec["status"] = "ok"
    return rec


def fmt(v, spec):
    return "-" if v is None else spec % v


def main(argv):
    quick = "--quick" in argv
    strict = "--strict" in argv
    make_only = "--make-only" in argv
    jpath, only = None, None
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--json", "--only"):
            if i + 1 >= len(argv):
                sys.stderr.write("run_corpus: %s needs a value\n" % a)
                return 2
            if a == "--json":
                jpath = argv[i + 1]
            else:
                only = argv[i + 1].split(",")
            i += 2
            continue
        if a not in ("--quick", "--strict", "--make-only"):
            pos.append(a)
        i += 1
    if len(pos) != 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    qdqc, work = os.path.abspath(pos[0]), os.path.abspath(pos[1])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    cdir = corpus_dir(work, quick)
    # the corpus directory outlives the clone (lit.cfg.py's model cache): mark it used, and drop
    # the corpora of older make_corpus.py versions nobody used for two weeks
    model_cache.use(cdir)
    prods = [p for p in PRODUCERS if only is None or any(o.split("/")[0] == p for o in only)]
    results, perr = [], {}
    os.makedirs(work, exist_ok=True)
    if make_only:
        for p in prods:
            make(cdir, p, quick)
        print(cdir)
        return 0
    # the objects and outputs of this run: removed at exit (WORKDIR is the cache, kept)
    tmp = tempfile.mkdtemp(prefix="run_corpus-")
    atexit.register(shutil.rmtree, tmp, True)
    for p in prods:
        make(cdir, p, quick)
        d = os.path.join(cdir, p)
        if os.path.exists(os.path.join(d, "ERROR.txt")):
            perr[p] = last_line(os.path.join(d, "ERROR.txt"))
        for f in sorted(os.listdir(d)):
            stem = f.rsplit(".", 2)[0] if f.endswith(".error.txt") else f[:-5]
            if only is not None and not any(o == p or fnmatch.fnmatch("%s/%s" % (p, stem), o) for o in only):
                continue
            if f.endswith(".error.txt"):
                results.append({"producer": p, "model": stem.split("_")[0], "file": "%s/%s.onnx" % (p, stem),
                                "status": "producer-error", "refusal": last_line(os.path.join(d, f))})
            elif f.endswith(".onnx"):
                results.append(check_file(qdqc, p, os.path.join(d, f), tmp, strict))
            else:
                continue
            r = results[-1]
            wid = ""
            if r.get("max_abs_vs_ort_widened") is not None or r.get("max_units_vs_ort_widened") is not None:
                wid = "f32-widened: units %s abs %s " % (fmt(r.get("max_units_vs_ort_widened"), "%g"),
                                                        fmt(r.get("max_abs_vs_ort_widened"), "%.3g"))
            print("%-28s %-15s jit==ref %-5s units %-4s (ORT-all %-4s) abs %-9s share=ORT-all %-6s %s%s" % (
                r["file"], r["status"], fmt(r.get("jit_eq_ref"), "%s"),
                fmt(r.get("max_units_vs_ort_literal"), "%g"), fmt(r.get("ort_all_units_vs_ort_literal"), "%g"), fmt(r.get("max_abs_vs_ort_literal"), "%.3g"),
                fmt(r.get("share_eq_ort_all"), "%.3f"), wid, r.get("refusal") or ""), flush=True)
    for p, e in perr.items():
        print("%-28s %-15s %s" % (p, "producer-error", e))
    bad = [r for r in results if r["status"] in ("crash", "jit-ne-ref", "outside-1-unit")]
    summary = {"corpus": cdir, "quick": quick, "files": results, "producer_errors": perr,
               "counts": {s: sum(1 for r in results if r["status"] == s)
                          for s in sorted({r["status"] for r in results})}}
    if jpath:
        with open(jpath, "w") as f:
            json.dump(summary, f, indent=1)
    print("%d files: %s; %d producer(s) could not run" % (
        len(results), ", ".join("%s %d" % kv for kv in summary["counts"].items()), len(perr)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
