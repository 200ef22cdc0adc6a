#!/usr/bin/python3
"""compare_transformers.py: the transformer models against ONNX Runtime, at every Q.

    compare_transformers.py --qdqc QDQC --work DIR [--size tiny|base] [--only a,b]
                            [--peer-python PY] [--ort-run bench/ort_run.py] [--self-test] [MODEL.onnx ...]

Without MODELs it generates the test/models/gen_transformers.py models of --size (default tiny)
into WORK/models (each with WORK/models/<name>/input.npy). Per model:

  checking copy  the model with the output of every activation QuantizeLinear (not a weight's)
                 and of every DynamicQuantizeLinear added as graph outputs, so that each
                 quantized tensor of the literal graph is compared, not only the outputs;
  qdqc ref       `qdqc run COPY --engine=ref` (default pipeline, --requant=float);
  ORT literal    `PEER_PYTHON bench/ort_run.py COPY --opt disabled` (QDQ in float semantics);
  ORT fused      `PEER_PYTHON bench/ort_run.py MODEL --opt all` (and on COPY, for the per-Q figure);
  qdqc jit/ref   `qdqc run MODEL --engine=jit|ref` on the unmodified model.

Checks (exit 1 if any fails): every element of every Q tensor of qdqc's reference within 1
quantization unit of ORT's literal graph where the bound applies: every Q tensor upstream of it
(the nearest ones, through any other node) agreed exactly. Elsewhere a 1-unit difference
upstream can legitimately grow (a MatMul multiplies it by weights): those Q tensors are counted
and their largest difference printed as "propagated", as qdqc-fuzz does; the JIT equal to the reference bit for bit on the
model's outputs. Figures: per model the number of Q tensors and elements, the largest difference
and the share of equal elements against ORT literal and fused, and the share of the model's
outputs bit-identical with ORT's fused run. A model qdqc refuses is reported `not compiled`
with qdqc's message and counts as a failure unless listed in --allow-refused.
PEER_PYTHON is the peer environment's python (test/peer/peerenv.py; tools/setup.sh --peer).
A missing ONNX Runtime is an error, not a skip.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "test", "models", "gen_transformers.py")


def run(cmd, timeout=1800):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def safe(name):
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return "_" + s if s in ("", ".", "..") else s


def checking_copy(src, dst):
    """src with every activation Q output added as a graph output; returns [(name, is_dynamic)]."""
    import onnx
    from onnx import TensorProto, helper
    m = onnx.load(src)
    inits = {t.name: t for t in m.graph.initializer}
    consts = {n.output[0] for n in m.graph.node if n.op_type == "Constant"}
    outs = {o.name for o in m.graph.output}
    qs = []
    for n in m.graph.node:
        if n.op_type == "QuantizeLinear" and n.input[0] not in inits and n.input[0] not in consts:
            zp = inits.get(n.input[2]) if len(n.input) > 2 else None
            et = zp.data_type if zp is not None else TensorProto.UINT8
            qs.append((n.output[0], et, False))
        elif n.op_type == "DynamicQuantizeLinear":
            qs.append((n.output[0], TensorProto.UINT8, True))
    for name, et, _ in qs:
        if name not in outs:
            m.graph.output.append(helper.make_tensor_value_info(name, et, None))
    onnx.save(m, dst)
    # the nearest Q tensors upstream of each Q (through any non-Q node; a graph input or a
    # constant ends a path)
    qset = {q[0] for q in qs}
    prod = {o: n for n in m.graph.node for o in n.output}
    anc = {}
    for name, _, _ in qs:
        seen, stack, found = set(), list(prod[name].input), set()
        while stack:
            t = stack.pop()
            if t in seen or t not in prod:
                continue
            seen.add(t)
            if t in qset:
                found.add(t)
                continue
            stack += list(prod[t].input)
        anc[name] = found
    return [(q[0], q[2]) for q in qs], anc


def load_dir(d):
    if not os.path.isdir(d):
        return {}
    return {f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".npy")}


def engine(cmd, out):
    rc, o, e = run(cmd + ["--output-dir", out])
    if rc != 0:
        return None, (e.strip().splitlines() or o.strip().splitlines() or ["exit %d" % rc])[-1][:300]
    return load_dir(out), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qdqc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--size", default="tiny", choices=["tiny", "base"])
    ap.add_argument("--only", default="")
    ap.add_argument("--peer-python", default=peerenv.python())
    ap.add_argument("--ort-run", default=peerenv.ORT_RUN)
    ap.add_argument("--allow-refused", default="", help="models qdqc may refuse (reported, not failed)")
    ap.add_argument("--self-test", action="store_true",
                    help="move one element of one Q tensor of qdqc's reference by 2 (the check must fail)")
    ap.add_argument("--verbose", action="store_true", help="one line per Q tensor")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    why = peerenv.check(a.peer_python) or (None if os.path.exists(a.ort_run) else "no " + a.ort_run)
    if why:
        print("ERROR: ONNX Runtime peer missing: %s" % why)
        return 1
    models = a.models
    if not models:
        mdir = os.path.join(a.work, "models")
        flag = "--out" if a.size == "tiny" else "--full"
        cmd = ["/usr/bin/python3", GEN, flag, mdir] + (["--only", a.only] if a.only else [])
        rc, out, err = run(cmd)
        if rc not in (0, 77):
            print("ERROR: %s failed (%d): %s" % (" ".join(cmd), rc, err[-1500:]))
            return 1
        for line in err.splitlines():
            if "SKIP" in line:
                print(line)
        models = [l.split("wrote ", 1)[1] for l in out.splitlines() if l.startswith("wrote ")]
    allowed = set(x for x in a.allow_refused.split(",") if x)
    fails = []
    print("%-16s %-9s %6s %10s %10s %8s   %s" % ("model", "peer", "Qs", "elements", "equal", "max", "what"))
    for model in models:
        name = os.path.basename(model)[:-5]
        inp = os.path.join(os.path.dirname(model), name, "input.npy")
        wd = os.path.join(a.work, "out", name)
        copy = os.path.join(wd, "check.onnx")
        os.makedirs(wd, exist_ok=True)
        qs, anc = checking_copy(model, copy)
        oin = ["--input", "input=" + inp]
        ref, err = engine([a.qdqc, "run", copy, "--engine=ref"] + oin, os.path.join(wd, "qref"))
        if ref is None:
            print("%-16s %-9s not compiled: %s" % (name, "qdqc", err))
            if name not in allowed:
                fails.append((name, "qdqc refused"))
            continue
        if a.self_test:
            k = safe(qs[len(qs) // 2][0])
            ref[k] = ref[k].copy()
            ref[k].reshape(-1)[0] = (int(ref[k].reshape(-1)[0]) + 2) % 256 if ref[k].dtype == np.uint8 else \
                ref[k].reshape(-1)[0] + 2
        lit, err = engine([a.peer_python, a.ort_run, copy, "--opt", "disabled", "--threads", "1"] + oin,
                          os.path.join(wd, "ort_dis"))
        fus, err2 = engine([a.peer_python, a.ort_run, copy, "--opt", "all", "--threads", "1"] + oin,
                           os.path.join(wd, "ort_all_q"))
        if lit is None:
            print("%-16s %-9s ERROR: %s" % (name, "ort-dis", err))
            fails.append((name, "ort-dis error"))
            continue
        for peer, other, perr in (("ort-dis", lit, None), ("ort-all", fus, err2)):
            if other is None:
                print("%-16s %-9s ERROR: %s" % (name, peer, perr))
                continue
            n = eq = 0
            worst, worst_q = 0, ""
            pworst, pworst_q, npro = 0, "", 0
            exact = {}
            for q, _ in qs:
                k = safe(q)
                x, y = ref.get(k), other.get(k)
                if x is None or y is None or x.shape != y.shape:
                    print("%-16s %-9s Q %s: missing or shape %s vs %s" % (
                        name, peer, q, None if x is None else x.shape, None if y is None else y.shape))
                    if peer == "ort-dis":
                        fails.append((name, "Q tensor missing"))
                    continue
                d = np.abs(x.astype(np.int64) - y.astype(np.int64))
                n += d.size
                eq += int((d == 0).sum())
                md = int(d.max()) if d.size else 0
                exact[q] = md == 0
                # the 1-unit bound holds where every Q upstream agreed exactly; elsewhere a
                # difference upstream can grow (as qdqc-fuzz's "propagated", docs/testing.md)
                strict = all(exact.get(u, False) for u in anc[q])
                if a.verbose:
                    print("    %-9s %-60s %8d %8d %3d%s" % (peer, q[-60:], d.size, int((d == 0).sum()), md,
                                                         "" if strict else " (propagated)"))
                if strict and md > worst:
                    worst, worst_q = md, q
                if not strict:
                    npro += 1
                    if md > pworst:
                        pworst, pworst_q = md, q
            print("%-16s %-9s %6d %10d %9.3f%% %8d   at every Q%s; propagated: %d Qs, max %d%s" % (
                name, peer, len(qs), n, 100.0 * eq / max(n, 1), worst, (" (worst: %s)" % worst_q) if worst else "",
                npro, pworst, (" (%s)" % pworst_q) if pworst > 1 else ""))
            if peer == "ort-dis" and worst > 1:
                fails.append((name, "a Q tensor beyond 1 unit of ORT's literal graph"))
        # the unmodified model: jit == ref, and the share identical with ORT's fused outputs
        mref, e1 = engine([a.qdqc, "run", model, "--engine=ref"] + oin, os.path.join(wd, "mref"))
        mjit, e2 = engine([a.qdqc, "run", model, "--engine=jit"] + oin, os.path.join(wd, "mjit"))
        mall, e3 = engine([a.peer_python, a.ort_run, model, "--opt", "all", "--threads", "1"] + oin,
                          os.path.join(wd, "mall"))
        if mref is None or mjit is None:
            print("%-16s %-9s ERROR: %s" % (name, "qdqc", e1 or e2))
            fails.append((name, "qdqc run error"))
            continue
        for k in sorted(mref):
            x, j = mref[k], mjit.get(k)
            same = j is not None and j.shape == x.shape and np.array_equal(x.view(np.uint8), j.view(np.uint8))
            print("%-16s %-9s %6s %10d %9.3f%% %8s   output %s" % (
                name, "jit", "", x.size, 100.0 * (np.sum(x == j) / x.size if j is not None and j.shape == x.shape else 0),
                "-", k))
            if not same:
                fails.append((name, "jit != ref"))
            if mall is not None and k in mall:
                y = mall[k]
                eqf = float(np.mean(x == y)) if y.shape == x.shape else 0.0
                rel = float(np.max(np.abs(x.astype(np.float64) - y)) / max(1e-30, float(np.max(np.abs(y)))))
                print("%-16s %-9s %6s %10d %9.3f%% %8.1e   output %s: bit-identical share, max |diff| / max |ORT|" % (
                    name, "ort-all", "", x.size, 100 * eqf, rel, k))
            elif e3:
                print("%-16s %-9s ERROR: %s" % (name, "ort-all", e3))
    print("%d models, %d failed checks" % (len(models), len(fails)))
    for f in fails:
        print("FAILED: %s: %s" % f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
