#!/usr/bin/python3
"""iree_corpus.py QDQC REFUSALS [-j JOBS] [--json OUT] [--part K/P]
                [--base DIR | --producers WORKDIR [--quick]] [MODEL...]

qdqc's `--emit=mlir` output compiled and run by IREE (docs/mlir.md, "Running exported MLIR with
IREE"), over the corpus of test/e2e/mlir_corpus.py (default: test/models/**/*.onnx,
examples/*.onnx, test/e2e/graphs/*.qir). Models the export refuses (test/e2e/
mlir_export_refusals.tsv) or that do not import are skipped: mlir_corpus.py checks those.
  --base DIR           models outside the repository: MODEL... (default DIR/**/*.onnx) named
                       relative to DIR (e.g. `ort/bert_pt.onnx`) in REFUSALS and the output; no
                       other script checks their export, so a model qdqc refuses (the export, or
                       qdqc altogether) must be listed in REFUSALS like an IREE failure, with a part
                       of qdqc's first error (the export must exit 1 and write no file); inputs
                       are test/models/producers/run_corpus.py's (feeds_for: token ids < 512,
                       masks 0/1).
  --producers WORKDIR  the producer corpus: `PEER_PYTHON run_corpus.py QDQC WORKDIR [--quick]
                       --make-only` makes it (or reuses its cache), then --base
                       WORKDIR/corpus-<hash>[-quick] over every <producer>/*.onnx in it.
For every model that exports:
  1. `mlir-opt-22 --mlir-print-op-generic` (IREE's tosa parser, at another LLVM revision, does
     not read LLVM 22's custom assembly of some tosa ops, e.g. `tosa.transpose`; the generic form
     it reads),
  2. `iree-compile --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=host
     --iree-input-demote-f64-to-f32=false` (the peer environment's, tools/setup.sh --peer; the
     f64 arithmetic of float islands kept as exported, not computed in f32),
  3. the module run by iree.runtime (local-sync) on the random inputs of mlir_corpus.py (with
     --base, run_corpus.py's), its outputs compared with `qdqc run --requant=fixed` (what the
     export computes): bit for bit where no float op is involved; where the exported function
     computes in floating point (a float island: f64 `linalg.generic`s or f32 tosa arithmetic),
     within 1 unit (1 for integer outputs, 1 ulp for f32 outputs).
A model IREE cannot compile or run is listed in REFUSALS ("MODEL<TAB>TEXT" lines, TEXT a part of
its first error; # comments; test/e2e/iree_refusals.tsv for the repository's corpus,
test/e2e/iree_producer_refusals.tsv for the producer corpus); an unlisted failure, or a listed
model that now passes, is a failure of this script (the list stays exact; with --base, so is a
listed model not among the models, except with --quick, whose corpus is a subset of the full
corpus and shares its list). --part K/P: only the models whose sorted index is K modulo P (K =
"day": the day of the year modulo P, so the parts rotate daily). Prints one line per failure and
a summary; exit 0 iff there is none. --json writes one record per model (status, error, max difference)."""
import concurrent.futures
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(root, "test", "peer"))
sys.path.insert(0, os.path.join(root, "test", "models", "producers"))
import mlir_corpus  # noqa: E402
import peerenv  # noqa: E402
import run_corpus  # noqa: E402

NP = mlir_corpus.NP
MLIR_OPT = mlir_corpus.MLIR_OPT
IREE_FLAGS = ["--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false"]

# Run under the peer python: load the .vmfb, call FUNC on the .npy inputs, save the results.
RUNNER = r"""
import sys, numpy as np, iree.runtime as rt
vmfb, func, outdir = sys.argv[1:4]
ins = [np.load(f) for f in sys.argv[4:]]
m = rt.load_vm_flatbuffer_file(vmfb, driver="local-sync")
r = m[func](*ins)
r = r if isinstance(r, (tuple, list)) else [r]
for i, a in enumerate(r):
    np.save("%s/r%d.npy" % (outdir, i), np.asarray(a.to_host() if hasattr(a, "to_host") else a))
"""


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def one_line(text):
    """The first error line of a tool's output, without the file:line:col prefix."""
    line = mlir_corpus.first_error(text)
    return re.sub(r"^\S*:\d+:\d+: ", "", line).strip()


def iree_bin(name):
    return os.path.join(os.path.dirname(peerenv.python()), name)


def has_float(mlir_text):
    """True when the exported function computes in floating point beyond quantize/dequantize
    (the f64 linalg.generic of a float island; an f32 one: fma, additions, negations, square
    roots or bit manipulation of floats, which no quantize/dequantize body has; or tosa
    arithmetic on f32 tensors)."""
    if "f64" in mlir_text:
        return True
    if re.search(r"math\.(fma|sqrt)\b|arith\.(addf|subf|negf)\b|arith\.bitcast %[\w.$-]+ : f32", mlir_text):
        return True
    return re.search(r"tosa\.(add|sub|mul|clamp|matmul|conv2d|reduce_sum)\b[^\n]*xf32>", mlir_text) is not None


def ulp_diff(a, b):
    ia = a.view(np.int32).astype(np.int64)
    ib = b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7fffffff), ia)
    ib = np.where(ib < 0, -(ib & 0x7fffffff), ib)
    return np.abs(ia - ib)


def check(qdqc, model, refusals, export_refusals, tmp, base=None):
    rel = os.path.relpath(model, base or root)
    rec = dict(model=rel)
    name = re.sub(r"[^A-Za-z0-9_.]", "_", rel)
    want = refusals.get(rel)

    def failed(stage, msg):
        rec.update(status=stage, error=msg)
        if want is None:
            return "FAIL", "%s: %s, not listed: %s" % (rel, stage, msg), rec
        if want not in msg:
            return "FAIL", "%s: %s with '%s', listed: '%s'" % (rel, stage, msg, want), rec
        return "refused", None, rec

    if base is None and rel in export_refusals:
        return "skipped", None, dict(rec, status="export refused")
    mlir = os.path.join(tmp, name + ".mlir")
    r = run([qdqc, model, "--requant=fixed", "--emit=mlir", "-o", mlir])
    if r.returncode:
        compiles = run([qdqc, model, "--emit=ir", "-o", os.devnull]).returncode == 0
        if base is None:
            if not compiles:
                return "skipped", None, dict(rec, status="invalid")
            return "FAIL", "%s: export failed: %s" % (rel, one_line(r.stderr)), dict(rec, status="export failed")
        # outside the repository no other script checks the export: its refusal is listed here
        msg = mlir_corpus.first_error(r.stderr).replace(model, rel).strip()
        if r.returncode != 1 or os.path.exists(mlir):
            return "FAIL", "%s: export exited %d%s: %s" % (
                rel, r.returncode, " and wrote a file" if os.path.exists(mlir) else "", msg), \
                dict(rec, status="export failed")
        kind, out, rec = failed("export" if compiles else "qdqc", msg)
        if kind == "refused":
            kind = "xrefused" if compiles else "qrefused"
        return kind, out, rec
    text = open(mlir).read()
    flt = has_float(text)
    rec["float"] = flt

    gen = os.path.join(tmp, name + ".generic.mlir")
    g = run([MLIR_OPT, "--mlir-print-op-generic", mlir, "-o", gen])
    if g.returncode:
        return "FAIL", "%s: mlir-opt: %s" % (rel, one_line(g.stderr)), dict(rec, status="mlir-opt")
    vmfb = os.path.join(tmp, name + ".vmfb")
    c = run([iree_bin("iree-compile")] + IREE_FLAGS + [gen, "-o", vmfb])
    if c.returncode:
        return failed("compile", one_line(c.stderr))
    ir = run([qdqc, model, "--requant=fixed", "--emit=ir"])
    ins = mlir_corpus.graph_inputs(ir.stdout) if ir.returncode == 0 else None
    if ins is None:
        return "FAIL", "%s: cannot read the signature of --emit=ir" % rel, dict(rec, status="signature")
    if any(et not in NP for _, et, _ in ins):
        return failed("run", "input of type %s not fed" % [et for _, et, _ in ins if et not in NP][0])
    if base is None:
        rng = np.random.default_rng(7)
        arrays = []
        for nm, et, dims in ins:
            if et == "f32":
                arrays.append((rng.standard_normal(dims) * 1.5).astype(np.float32))
            else:
                info = np.iinfo(NP[et])
                arrays.append(rng.integers(max(info.min, -128), min(info.max, 127) + 1, size=dims).astype(NP[et]))
    else:
        # the producer corpus' own inputs (BERT: token ids < 512, attention mask 0/1)
        feeds = run_corpus.feeds_for([(nm, NP[et], dims) for nm, et, dims in ins])
        arrays = [feeds[nm] for nm, _, _ in ins]
    files = []
    for i, ((nm, _, _), a) in enumerate(zip(ins, arrays)):
        f = os.path.join(tmp, "%s.in%d.npy" % (name, i))
        np.save(f, a)
        files.append((nm, f))
    qd = os.path.join(tmp, name + ".qdqc")
    q = run([qdqc, "run", model, "--requant=fixed", "--output-dir", qd] +
            sum([["--input", "%s=%s" % (nm, f)] for nm, f in files], []))
    if q.returncode:
        return "FAIL", "%s: qdqc run: %s" % (rel, one_line(q.stderr)), dict(rec, status="qdqc run")
    qfiles = re.findall(r"written to (.*\.npy)$", q.stdout, re.M)
    func = re.search(r"func\.func @([\w.$-]+|\"[^\"]*\")\(", text).group(1).strip('"')
    od = os.path.join(tmp, name + ".iree")
    os.makedirs(od, exist_ok=True)
    x = run([peerenv.python(), "-c", RUNNER, vmfb, func, od] + [f for _, f in files])
    if x.returncode:
        err = [l for l in x.stderr.strip().splitlines() if l.strip()]
        return failed("run", err[-1] if err else "exit %d" % x.returncode)
    worst, ndiff = 0, 0
    for i, qf in enumerate(qfiles):
        a, b = np.load(qf), np.load(os.path.join(od, "r%d.npy" % i))
        if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
            return failed("compare", "%s: qdqc %s%s vs IREE %s%s" % (
                os.path.basename(qf), a.dtype, a.shape, b.dtype, b.shape))
        if a.dtype == np.float32:
            d = ulp_diff(a, b.astype(np.float32))
        else:
            d = np.abs(a.astype(np.int64) - b.view(a.dtype).astype(np.int64))
        ndiff += int((d != 0).sum())
        worst = max(worst, int(d.max()) if d.size else 0)
    rec.update(status="ran", max_diff=worst, ndiff=ndiff)
    if worst == 0:
        rec["status"] = "equal"
        if want is not None:
            return "FAIL", "%s: compiles and runs bit-identical, but is listed ('%s')" % (rel, want), rec
        return "equal", None, rec
    if flt and worst <= 1:
        if want is not None:
            return "FAIL", "%s: within 1 unit, but is listed ('%s')" % (rel, want), rec
        return "within1", None, rec
    return failed("compare", "%d values differ, max %d unit%s%s" % (
        ndiff, worst, "" if worst == 1 else "s", " (integer-only model)" if not flt else ""))


def read_tsv(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                k, _, v = line.partition("\t")
                out[k.strip()] = v.strip()
    return out


def producer_corpus(qdqc, work, quick):
    """Make (or reuse) the producer corpus under WORK with run_corpus.py --make-only, in the peer
    environment; its directory and its quantized files (<producer>/*.onnx, run_corpus.py's
    producers in order)."""
    r = run([peerenv.python(), os.path.join(root, "test", "models", "producers", "run_corpus.py"),
             os.path.abspath(qdqc), work, "--make-only"] + (["--quick"] if quick else []))
    out = r.stdout.strip().splitlines()
    if r.returncode or not out or not os.path.isdir(out[-1]):
        sys.exit("iree_corpus.py: run_corpus.py --make-only failed (exit %d): %s" % (
            r.returncode, mlir_corpus.first_error(r.stderr + r.stdout)))
    base = out[-1]
    models = []
    for p in run_corpus.PRODUCERS:
        models += sorted(glob.glob(os.path.join(base, p, "*.onnx")))
    return base, models


def main():
    argv = sys.argv[1:]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc, reffile = argv[0], argv[1]
    rest, jobs, models, jout, base, work, quick = argv[2:], 2, [], None, None, None, False
    part, parts = 0, 1
    while rest:
        a = rest.pop(0)
        if a == "-j":
            jobs = int(rest.pop(0))
        elif a == "--json":
            jout = rest.pop(0)
        elif a == "--base":
            base = os.path.abspath(rest.pop(0))
        elif a == "--producers":
            work = os.path.abspath(rest.pop(0))
        elif a == "--quick":
            quick = True
        elif a == "--part":
            k, p = rest.pop(0).split("/")
            parts = int(p)
            part = datetime.date.today().timetuple().tm_yday % parts if k == "day" else int(k)
        else:
            models.append(os.path.abspath(a))
    refusals = read_tsv(reffile)
    export_refusals = read_tsv(os.path.join(here, "mlir_export_refusals.tsv"))
    if work is not None:
        base, found = producer_corpus(qdqc, work, quick)
        models = models or found
    elif base is not None and not models:
        models = sorted(glob.glob(os.path.join(base, "**", "*.onnx"), recursive=True))
    elif not models:
        models = sorted(glob.glob(os.path.join(root, "test", "models", "**", "*.onnx"), recursive=True))
        models += sorted(glob.glob(os.path.join(root, "examples", "*.onnx")))
        models += sorted(glob.glob(os.path.join(root, "test", "e2e", "graphs", "*.qir")))
    if parts > 1:
        print("part %d of %d: %d of %d models" % (part, parts, len(models[part::parts]), len(models)))
        models = models[part::parts]
    counts = dict(equal=0, within1=0, refused=0, xrefused=0, qrefused=0, skipped=0, FAIL=0)
    recs = []
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for kind, msg, rec in ex.map(lambda m: check(qdqc, m, refusals, export_refusals, tmp, base), models):
            counts[kind] += 1
            recs.append(rec)
            if msg:
                print("FAIL: " + msg, flush=True)
    if base is not None and not quick and parts == 1:
        # a listed model that is not in the corpus: the list names what is there (--quick's
        # corpus is a subset of the full one: its list is the full corpus')
        names = {r["model"] for r in recs}
        for k in sorted(set(refusals) - names):
            counts["FAIL"] += 1
            print("FAIL: %s: listed in %s ('%s'), not in the corpus" % (k, os.path.basename(reffile), refusals[k]))
    if jout:
        with open(jout, "w") as f:
            json.dump(recs, f, indent=1)
    xref = ""
    if base is not None:
        xref = "%d refused by qdqc as listed (%d by the export, %d not compiled), " % (
            counts["xrefused"] + counts["qrefused"], counts["xrefused"], counts["qrefused"])
    exported = sum(1 for r in recs if "float" in r)
    print("%d models, %d exported: %d compiled by IREE and ran bit-identical, %d within 1 unit "
          "(float islands), %d refused by IREE as listed, %s%d failed" %
          (len(models), exported, counts["equal"], counts["within1"], counts["refused"], xref, counts["FAIL"]))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
