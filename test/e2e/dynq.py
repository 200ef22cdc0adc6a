#!/usr/bin/python3
"""dynq.py QDQC [--ort]: ONNX Runtime's dynamic quantization (quantize_dynamic: DynamicQuantizeLinear
-> MatMulInteger -> Cast -> Mul [-> Add]) through qdqc, on the models of dynq_models.py.

For every model, on its seeded input:
  1. the pipeline folds every MatMulInteger chain into one matmul_integer with its epilogue
     (no cast or mul of the chain left in `qdqc MODEL -o -`);
  2. the reference interpreter after the default pipeline equals, bit for bit, the graph as
     imported (--passes=) and the numpy evaluation of the ONNX definitions
     (dynq_models.literal; the models with float ops beyond the chain have none);
  3. the JIT equals the reference bit for bit on every x86 kernel path the host can run
     (generic, avx2, avxvnni, avx512vnni), one and two threads;
  4. with --ort (the peer environment's ONNX Runtime, test/peer/peerenv.py; missing: an error):
     ONNX Runtime with graph optimizations disabled (the literal graph) and `all` (its fused
     DynamicQuantizeMatMul / MatMulIntegerToFloat kernels) on the same input: max |diff| per
     output, which must be 0 for --opt disabled on the models without other float ops.
Prints one line per check and "N passed, M failed"; exit 0 iff nothing failed."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import dynq_models  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "test", "peer"))
import peerenv  # noqa: E402

npass = nfail = 0


def report(ok, what):
    global npass, nfail
    if ok:
        npass += 1
    else:
        nfail += 1
    print("%s %s" % ("PASS" if ok else "FAIL", what), flush=True)


def run(qdqc, model, d, feeds, out, extra):
    cmd = [qdqc, "run", model, "--output-dir", out] + extra
    for k in feeds:
        cmd += ["--input", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return {f[:-4]: np.load(os.path.join(out, f)) for f in sorted(os.listdir(out))}, ""


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def maxdiff(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0


def host_isas():
    flags = open("/proc/cpuinfo").read().split("\nflags")[1].split("\n")[0].split() if os.path.exists("/proc/cpuinfo") else []
    return ["generic"] + [i for i, f in (("avx2", "avx2"), ("avxvnni", "avx_vnni"), ("avx512vnni", "avx512_vnni")) if f in flags]


def main():
    argv = sys.argv[1:]
    ort = "--ort" in argv
    argv = [a for a in argv if a != "--ort"]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc = argv[0]
    why = peerenv.check() if ort else None
    if why:
        print("ERROR: ONNX Runtime peer missing: %s" % why)
        return 1
    have_ort = ort
    isas = host_isas()
    with tempfile.TemporaryDirectory() as tmp:
        for name in dynq_models.MODELS:
            model, feeds = dynq_models.build(name)
            d = os.path.join(tmp, name)
            os.makedirs(d)
            mp = os.path.join(d, "model.onnx")
            onnx.save(model, mp)
            for k, v in feeds.items():
                np.save(os.path.join(d, k + ".npy"), v)
            # 1. folded
            r = subprocess.run([qdqc, mp, "-o", "-"], capture_output=True, text=True)
            nmi = sum(1 for n in model.graph.node if n.op_type == "MatMulInteger")
            folded = r.stdout.count("matmul_integer ")
            leftover = [ln for ln in r.stdout.splitlines() if " = cast " in ln]
            report(r.returncode == 0 and folded == nmi and not leftover,
                   "%s: %d of %d MatMulInteger chains folded into matmul_integer%s" %
                   (name, folded, nmi, "" if not leftover else ", cast left: " + leftover[0].strip()))
            # 2. reference: pipeline == as imported == numpy
            ref, err = run(qdqc, mp, d, feeds, os.path.join(d, "ref"), ["--engine=ref"])
            lit, err2 = run(qdqc, mp, d, feeds, os.path.join(d, "lit"), ["--engine=ref", "--passes="])
            if ref is None or lit is None:
                report(False, "%s: reference failed: %s" % (name, err or err2))
                continue
            report(all(same(ref[k], lit[k]) for k in lit),
                   "%s: reference, default pipeline == the graph as imported (bit for bit)" % name)
            want = dynq_models.literal(model, feeds)
            if want is not None:
                bad = [k for k in want if not same(ref[k], want[k])]
                report(not bad, "%s: reference == numpy evaluation of the ONNX graph%s" %
                       (name, "" if not bad else ": %s differs by %g" % (bad[0], maxdiff(ref[bad[0]], want[bad[0]]))))
            # 3. JIT == reference on every kernel path, 1 and 2 threads
            for isa in isas:
                for th in ("1", "2"):
                    got, err = run(qdqc, mp, d, feeds, os.path.join(d, "jit_%s_%s" % (isa, th)),
                                   ["--engine=jit", "--isa=" + isa, "--threads", th])
                    ok = got is not None and all(same(ref[k], got[k]) for k in ref)
                    report(ok, "%s: JIT == reference, --isa=%s, %s thread(s)%s" %
                           (name, isa, th, "" if got is not None else ": " + err))
            # 4. ONNX Runtime
            if not have_ort:
                continue
            for opt in ("disabled", "all"):
                od = os.path.join(d, "ort_" + opt)
                cmd = [peerenv.python(), peerenv.ORT_RUN, mp, "--output-dir", od, "--opt", opt, "--threads", "1"]
                for k in feeds:
                    cmd += ["--input", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    report(False, "%s: ONNX Runtime --opt %s failed: %s" % (name, opt, r.stderr.strip()))
                    continue
                diffs = {k: maxdiff(np.load(os.path.join(od, k + ".npy")), ref[k]) for k in ref}
                worst = max(diffs.values())
                rel = worst / max(max(float(np.max(np.abs(v))) for v in ref.values()), 1e-30)
                exact = all(np.load(os.path.join(od, k + ".npy")).tobytes() == ref[k].tobytes() for k in ref)
                must = opt == "disabled" and want is not None
                report(exact or not must, "%s: ONNX Runtime --opt %s vs qdqc: %s" %
                       (name, opt, "bit-identical" if exact else "max |diff| %.3g (%.2g of the largest output)" % (worst, rel)))
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
