#!/usr/bin/python3
"""mlir_corpus.py QDQC REFUSALS [-j JOBS] [--no-run] [MODEL...]

`qdqc --emit=mlir` over the model corpus (default: test/models/**/*.onnx, examples/*.onnx,
test/e2e/graphs/*.qir). For each model, one of:
  exported  the export succeeds, mlir-opt-22 --verify-each accepts the text, and the exported
            function, lowered and run by the upstream MLIR tools (tools/mlir_run.py), gives the
            same outputs bit for bit as `qdqc run --requant=fixed` on the same random inputs
            (the export writes --requant=fixed arithmetic; docs/mlir.md). A model whose
            exported signature mlir_run.py cannot feed (ui8 inputs) is exported and verified
            only, and counted as such.
  refused   the export exits 1, writes no file, and its first error contains the text that
            REFUSALS lists for the model ("MODEL<TAB>TEXT" lines, MODEL relative to the
            source root; # comments). A refusal not listed, or a listed model that exports,
            is a failure (the list stays exact).
  invalid   the model does not import or compile at all (`--emit=ir` fails too; the hostile
            corpus): the export must fail the same way and write no file.
Prints one line per failure and a summary; exit 0 iff there is none."""
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
MLIR_OPT = "mlir-opt-22"
NP = {"f32": np.float32, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "i64": np.int64}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return line
    return text.strip().splitlines()[0] if text.strip() else ""


def graph_inputs(ir):
    """(name, elem, dims) of each input in the signature line of the text IR."""
    head = ir.split("\n", 1)[0]
    m = re.match(r'graph @\S*\((.*)\) -> ', head)
    if not m:
        return None
    out = []
    for nm, et, dims in re.findall(r'%("(?:[^"\\]|\\.)*"|[^\s:,]+): (\w+)\[([0-9,]*)\]', m.group(1)):
        if nm.startswith('"'):
            nm = nm[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        out.append((nm, et, [int(d) for d in dims.split(",") if d]))
    return out


def check(qdqc, model, refusals, do_run, tmp):
    rel = os.path.relpath(model, root)
    name = re.sub(r"[^A-Za-z0-9_.]", "_", rel)
    mlir = os.path.join(tmp, name + ".mlir")
    r = run([qdqc, model, "--requant=fixed", "--emit=mlir", "-o", mlir])
    want = refusals.get(rel)
    if r.returncode != 0:
        if os.path.exists(mlir):
            return "FAIL", "%s: export failed but wrote %s" % (rel, mlir)
        if r.returncode != 1:
            return "FAIL", "%s: export exited %d: %s" % (rel, r.returncode, first_error(r.stderr))
        if run([qdqc, model, "--emit=ir", "-o", os.path.join(tmp, name + ".qir")]).returncode:
            return "invalid", None
        msg = first_error(r.stderr)
        if want is None:
            return "FAIL", "%s: refused, not listed: %s" % (rel, msg)
        if want not in msg:
            return "FAIL", "%s: refused with '%s', listed: '%s'" % (rel, msg, want)
        return "refused", None
    if want is not None:
        return "FAIL", "%s: exports, but is listed as refused ('%s')" % (rel, want)
    v = run([MLIR_OPT, "--verify-each", mlir, "-o", os.devnull])
    if v.returncode:
        return "FAIL", "%s: mlir-opt rejects the export: %s" % (rel, first_error(v.stderr))
    if not do_run:
        return "verified", None
    ir = run([qdqc, model, "--requant=fixed", "--emit=ir"])
    ins = graph_inputs(ir.stdout) if ir.returncode == 0 else None
    if ins is None:
        return "FAIL", "%s: cannot read the signature of --emit=ir" % rel
    if any(et not in ("f32", "i8", "u8", "i32") for _, et, _ in ins):
        return "verified", None  # mlir_run.py feeds f32, i8, ui8 and i32 only
    rng = np.random.default_rng(7)
    files = []
    for i, (nm, et, dims) in enumerate(ins):
        if et == "f32":
            a = (rng.standard_normal(dims) * 1.5).astype(np.float32)
        else:
            info = np.iinfo(NP[et])
            a = rng.integers(max(info.min, -128), min(info.max, 127) + 1, size=dims).astype(NP[et])
        f = os.path.join(tmp, "%s.in%d.npy" % (name, i))
        np.save(f, a)
        files.append((nm, f))
    qd = os.path.join(tmp, name + ".qdqc")
    q = run([qdqc, "run", model, "--requant=fixed", "--output-dir", qd] +
            sum([["--input", "%s=%s" % (nm, f)] for nm, f in files], []))
    if q.returncode:
        return "FAIL", "%s: qdqc run: %s" % (rel, first_error(q.stderr))
    qfiles = re.findall(r"written to (.*\.npy)$", q.stdout, re.M)
    md = os.path.join(tmp, name + ".mlirrun")
    names = ["r%d" % i for i in range(len(qfiles))]
    m = run(["/usr/bin/python3", os.path.join(root, "tools", "mlir_run.py"), mlir,
             "--names", ",".join(names), "--output-dir", md] +
            sum([["--input", f] for _, f in files], []))
    if m.returncode:
        return "FAIL", "%s: mlir_run.py: %s" % (rel, first_error(m.stderr or m.stdout))
    for qf, nm in zip(qfiles, names):
        a, b = np.load(qf), np.load(os.path.join(md, nm + ".npy"))
        if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
            return "FAIL", "%s: %s: qdqc %s%s vs MLIR %s%s" % (
                rel, os.path.basename(qf), a.dtype, a.shape, b.dtype, b.shape)
        nd = int((a.view(np.uint8) != b.view(np.uint8)).sum() // a.dtype.itemsize)
        if nd:
            return "FAIL", "%s: %s: %d of %d values differ (max |diff| %g)" % (
                rel, os.path.basename(qf), nd, a.size,
                float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    return "exported", None


def main():
    argv = sys.argv[1:]
    jobs, do_run, models = 2, True, []
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc, reffile = argv[0], argv[1]
    rest = argv[2:]
    while rest:
        a = rest.pop(0)
        if a == "-j":
            jobs = int(rest.pop(0))
        elif a == "--no-run":
            do_run = False
        else:
            models.append(os.path.abspath(a))
    refusals = {}
    with open(reffile) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                k, _, v = line.partition("\t")
                refusals[k.strip()] = v.strip()
    if not models:
        models = sorted(glob.glob(os.path.join(root, "test", "models", "**", "*.onnx"), recursive=True))
        models += sorted(glob.glob(os.path.join(root, "examples", "*.onnx")))
        models += sorted(glob.glob(os.path.join(root, "test", "e2e", "graphs", "*.qir")))
    counts = {"exported": 0, "verified": 0, "refused": 0, "invalid": 0, "FAIL": 0}
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for kind, msg in ex.map(lambda m: check(qdqc, m, refusals, do_run, tmp), models):
            counts[kind] += 1
            if msg:
                print("FAIL: " + msg, flush=True)
    print("%d models: %d exported and ran bit-identical, %d exported and verified only, "
          "%d refused as listed, %d invalid, %d failed" %
          (len(models), counts["exported"], counts["verified"], counts["refused"],
           counts["invalid"], counts["FAIL"]))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
