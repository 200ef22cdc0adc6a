#!/usr/bin/python3
"""torch_qat.py QDQC --cache DIR [--only a,b] [--no-ort] [--peer-python PY] [--keep DIR]

Real PyTorch QAT exports end to end: test/models/torch_qat.py writes (or
finds in its cache under DIR) torchvision's quantizable ResNet-18, MobileNetV2,
MobileNetV3-small and ShuffleNetV2, fake-quantized and exported by torch 1.13 at opset 13.
For each model, on the export's seeded input:
  qdqc run --engine=jit     (default pipeline, compiled code)
  qdqc run --engine=ref     (integer reference interpreter after the same pipeline)
  ORT --opt disabled        (bench/ort_run.py, 1 thread: literal QDQ float semantics)
  ORT --opt all             (its fused kernels) on a copy whose [1]-shaped Q/DQ scales and zero
                            points are rank 0 (ORT 1.30 refuses the original at --opt all:
                            QLinearAdd wants scalars, test/models/README.md); same numbers
Checks: the JIT equals the reference bit for bit (exit 1 otherwise). Against ONNX Runtime it
prints elements compared / equal / max |difference| in units of the output's quantization
step (the scale of the DequantizeLinear that produces the logits) and fails beyond
ORT_BOUND units (the bounds and their causes: docs/agreement.md). A missing ONNX Runtime is an
error unless --no-ort.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "test", "models", "torch_qat.py")
ORT_RUN = os.path.join(ROOT, "bench", "ort_run.py")
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402
# max |qdqc - ORT| in output units, per model and peer (docs/agreement.md, "PyTorch QAT exports")
ORT_BOUND = {"ort-dis": 4.0, "ort-all": 4.0}


def run(cmd, timeout=900):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def output_scale(model):
    """Scale of the DequantizeLinear producing the first graph output (None: not a DQ)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model, load_external_data=False)
    out = m.graph.output[0].name
    consts = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    ident = {n.output[0]: n.input[0] for n in m.graph.node if n.op_type == "Identity"}
    for n in m.graph.node:
        if out in n.output and n.op_type == "DequantizeLinear":
            s = n.input[1]
            while s not in consts and s in ident:  # torch shares parameters through Identity
                s = ident[s]
            return float(np.asarray(consts[s]).reshape(-1)[0])
    return None


def scalarize(src, dst):
    """Copy of src whose 1-element [1]-shaped per-tensor Q/DQ scales and zero points are rank
    0 (the same numbers; what ORT's QLinearAdd/Mul/AveragePool type inference wants)."""
    import onnx
    m = onnx.load(src)
    names = set()
    for n in m.graph.node:
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            names.update(n.input[1:3])
    for t in m.graph.initializer:
        if t.name in names and list(t.dims) == [1]:
            del t.dims[:]
    for n in m.graph.node:
        if n.op_type == "Constant" and n.output[0] in names:
            t = n.attribute[0].t
            if list(t.dims) == [1]:
                del t.dims[:]
    onnx.save(m, dst)


def load_dir(d):
    return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qdqc")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--peer-python", default=peerenv.python())
    ap.add_argument("--keep", help="keep the outputs in this directory")
    a = ap.parse_args()
    gen = [sys.executable, GEN, "--cache", a.cache] + (["--only", a.only] if a.only else [])
    rc, out, err = run(gen)
    if rc == 77:
        print(err.strip())
        return 77
    if rc != 0:
        print("ERROR: %s failed (%d):\n%s" % (" ".join(gen), rc, err[-2000:]))
        return 1
    mdir = out.strip().splitlines()[-1]
    names = [n for n in (a.only.split(",") if a.only else
                         ["resnet18_qat", "mobilenetv2_qat", "mobilenetv3s_qat", "shufflenetv2_qat"]) if n]
    if not a.no_ort:
        why = peerenv.check(a.peer_python)
        if why:
            print("ERROR: ONNX Runtime peer missing: %s" % why)
            return 1
    fails = []
    work = a.keep or tempfile.mkdtemp(prefix="qdqc-torch-")
    os.makedirs(work, exist_ok=True)
    print("%-18s %-8s %-8s %9s %9s %10s" % ("model", "peer", "output", "compared", "equal", "max diff"))
    for name in names:
        model = os.path.join(mdir, name + ".onnx")
        inp = os.path.join(mdir, name, "input.npy")
        scale = output_scale(model)
        res = {}
        engines = [("ref", [a.qdqc, "run", model, "--engine=ref", "--input", inp]),
                   ("jit", [a.qdqc, "run", model, "--engine=jit", "--input", inp])]
        if not a.no_ort:
            scal = os.path.join(work, name + ".scalar.onnx")
            scalarize(model, scal)
            engines += [("ort-dis", [a.peer_python, ORT_RUN, model, "--opt", "disabled", "--threads", "1",
                                     "--input", "input=" + inp]),
                        ("ort-all", [a.peer_python, ORT_RUN, scal, "--opt", "all", "--threads", "1",
                                     "--input", "input=" + inp])]
        for eng, cmd in engines:
            d = os.path.join(work, name, eng)
            rc, out, err = run(cmd + ["--output-dir", d])
            if rc != 0:
                print("%-18s %-8s FAIL: exit %d: %s" % (name, eng, rc, err.strip()[-400:]))
                fails.append((name, eng + " failed"))
                continue
            res[eng] = load_dir(d)
        if "ref" not in res:
            continue
        for o, base in sorted(res["ref"].items()):
            for eng in ("jit", "ort-dis", "ort-all"):
                if eng not in res:
                    continue
                other = res[eng].get(o)
                if other is None or other.shape != base.shape:
                    print("%-18s %-8s %-8s missing or misshapen output" % (name, eng, o))
                    fails.append((name, eng + " output"))
                    continue
                x, y = base.astype(np.float64).ravel(), other.astype(np.float64).ravel()
                eq = int((x == y).sum())
                md = float(np.abs(x - y).max() / (scale or 1.0))
                print("%-18s %-8s %-8s %9d %9d %10.4g %s" % (name, eng, o, x.size, eq, md,
                                                             "units" if scale else "abs"))
                if eng == "jit" and eq != x.size:
                    fails.append((name, "jit == ref"))
                elif eng in ORT_BOUND and md > ORT_BOUND[eng] + 1e-6:
                    fails.append((name, "within %g units of %s" % (ORT_BOUND[eng], eng)))
        sys.stdout.flush()
    print("%d models, %d failed checks" % (len(names), len(fails)))
    for f in fails:
        print("FAILED: %s: %s" % f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
