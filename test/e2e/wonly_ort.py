#!/usr/bin/python3
"""wonly_ort.py QDQC [--out DIR] [--full] [--peer-python PY] [--no-ref]: weight-only models against ONNX
Runtime's literal output.

Models from bench/gen_wonly_mlp.py (float activations, DequantizeLinear of constant weights ->
MatMul): decoder linears with int8 weights per column and int4 weights in blocks of 32 and 128
along K (DequantizeLinear-21), at batch 1 and 16, and an int8 MLP with ReLU between its layers.
By default small shapes of the same kind (K = 512, N = 640 and 1376, a 3-layer 256-wide MLP);
--full: the LLaMA-7B shapes of the benchmark (K = 4096, N = 4096 and 11008; docs/performance.md).

For each model: `qdqc run` (JIT) and ONNX Runtime 1.30 with --opt disabled (bench/ort_run.py, one
thread: DequantizeLinear to f32 weights, then an f32 MatMul) on the same seeded input, and
  - every element of |qdqc - ORT| within the bound of docs/agreement.md ("Weight-only models"),
    computed per element in float64: for a layer with K inputs and G blocks along K,
        E_out = E_in @ A + (2K + G + 3) 2^-24 (|h| + E_in) @ A,   A = |w - zp| * scale,
    E_0 = 0, h the float64 forward pass (ReLU is 1-Lipschitz, so E passes it unchanged): each
    engine's f32 result is within (K + G + 1) 2^-24 (qdqc: its defined order of fmas,
    docs/numerics.md) or (K + 1) 2^-24 plus one rounding of each dequantized weight (ORT: any
    order of f32 sums) of the exact value, relative to the sum of |products|;
  - the JIT equals `qdqc run --engine=ref` bit for bit (skipped with --no-ref);
  - informational: what ORT --opt all makes of the graph (MatMulNBits with its bits, block
    size and accuracy level, or DequantizeLinear + MatMul) and its largest difference from qdqc
    relative to the output's largest magnitude.
--self-test moves one element of qdqc's output by twice its bound: every model must then FAIL.
Prints one line per model ("PASS|FAIL NAME: ort-dis max |diff| D, bound ratio R ...") and "N
models, M failed"; exit 1 on a failure (a missing ONNX Runtime is one)."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402
import gen_wonly_mlp  # noqa: E402

U = 2.0 ** -24
SMALL_LINEARS = [("lin_i8_b1", 1, 512, 640, 8, 0), ("lin_i4g32_b1", 1, 512, 640, 4, 32),
                 ("lin_i4g128_b1", 1, 512, 1376, 4, 128), ("lin_i8_b16", 16, 512, 640, 8, 0),
                 ("lin_i4g32_b16", 16, 512, 1376, 4, 32), ("lin_i4g128_b16", 16, 512, 640, 4, 128)]
SMALL_MLPS = [("mlp_i8_256_b1", 1, 256, 3)]


def layers(path):
    """[(W, A, K, G)] per DequantizeLinear -> MatMul layer, in order: W = (w - zp) * scale and
    A = |W| as float64 [K, N], G the blocks along K."""
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    out = []
    for n in m.graph.node:
        if n.op_type != "DequantizeLinear":
            continue
        t = inits[n.input[0]]
        if t.data_type == gen_wonly_mlp.INT4:
            b = np.frombuffer(t.raw_data, np.uint8)
            nib = np.empty(b.size * 2, np.int16)
            nib[0::2], nib[1::2] = b & 15, b >> 4
            w = np.where(nib >= 8, nib - 16, nib)[:int(np.prod(t.dims))].reshape(tuple(t.dims))
        else:
            w = numpy_helper.to_array(t).astype(np.int16)
        s = numpy_helper.to_array(inits[n.input[1]]).astype(np.float64)
        zp = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64) if len(n.input) > 2 else 0.0
        bs = next((a.i for a in n.attribute if a.name == "block_size"), 0)
        k = w.shape[0]
        g = -(-k // bs) if bs else 1
        if bs:
            s = np.repeat(s, bs, axis=0)[:k]
            zp = np.repeat(zp, bs, axis=0)[:k] if np.ndim(zp) else zp
        wf = (w.astype(np.float64) - zp) * s
        out.append((wf, np.abs(wf), k, g))
    return out


def bound(path, x):
    """The per-element bound E on |qdqc - ORT| (module docstring)."""
    h = x.astype(np.float64)
    e = np.zeros_like(h)
    ls = layers(path)
    for i, (wf, a, k, g) in enumerate(ls):
        e = e @ a + (2 * k + g + 3) * U * ((np.abs(h) + e) @ a)
        h = h @ wf
        if i + 1 < len(ls):
            h = np.maximum(h, 0)
    return e


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd[:3]), (r.stderr or r.stdout).strip()[-600:]))
    return r.stdout


def ort_graph(path):
    """ORT --opt all's rewrite of the model, as 'Op(attr=v, ...)' per node."""
    m = onnx.load(path, load_external_data=False)
    keep = ("bits", "block_size", "accuracy_level")
    return ", ".join("%s(%s)" % (n.op_type, ", ".join("%s=%d" % (a.name, a.i) for a in n.attribute if a.name in keep))
                     if any(a.name in keep for a in n.attribute) else n.op_type for n in m.graph.node)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qdqc")
    ap.add_argument("--out", default=None)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--peer-python", default=peerenv.python())
    ap.add_argument("--no-ref", action="store_true")
    ap.add_argument("--self-test", action="store_true",
                    help="move one element of qdqc's output by twice its bound (must FAIL)")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    ort_run = peerenv.ORT_RUN
    why = peerenv.check(a.peer_python)
    if why:
        print("ERROR: ONNX Runtime peer missing: %s" % why)
        return 1
    linears = [l for l in gen_wonly_mlp.LINEARS] if a.full else SMALL_LINEARS
    mlps = [m for m in gen_wonly_mlp.MLPS if m[1] == 1] if a.full else SMALL_MLPS
    for name, m, k, n, bits, block in linears:
        gen_wonly_mlp.build_linear(name, m, k, n, bits, block, out)
    for name, m, d, layers in mlps:
        gen_wonly_mlp.build(name, m, d, layers, out)
    fails = 0
    names = [l[0] for l in linears] + [m[0] for m in mlps]
    for name in names:
        path = os.path.join(out, name + ".onnx")
        inp = os.path.join(out, name, "input.npy")
        x = np.load(inp)
        try:
            dj = os.path.join(out, name, "jit")
            run([a.qdqc, "run", path, "--input", "x=" + inp, "--output-dir", dj])
            yq = np.load(os.path.join(dj, "y.npy"))
            same = None
            if not a.no_ref:
                dr = os.path.join(out, name, "ref")
                run([a.qdqc, "run", path, "--engine=ref", "--input", "x=" + inp, "--output-dir", dr])
                same = np.load(os.path.join(dr, "y.npy")).tobytes() == yq.tobytes()
            yo = {}
            for opt in ("disabled", "all"):
                do = os.path.join(out, name, "ort_" + opt)
                os.makedirs(do, exist_ok=True)
                run([a.peer_python, ort_run, path, "--input", "x=" + inp, "--output-dir", do, "--opt", opt,
                     "--threads", "1", "--save-optimized", os.path.join(do, "graph.onnx")])
                yo[opt] = np.load(os.path.join(do, "y.npy"))
        except (RuntimeError, OSError) as e:
            print("FAIL %s: %s" % (name, e))
            fails += 1
            continue
        e = bound(path, x)
        if a.self_test:
            yq = yq.copy()
            yq.flat[0] += np.float32(2 * e.flat[0] + 1e-30)
        diff = np.abs(yq.astype(np.float64) - yo["disabled"].astype(np.float64))
        ratio = float(np.max(diff / np.maximum(e, 1e-300)))
        ok = bool(np.all(diff <= e)) and same is not False
        big = float(np.max(np.abs(yo["disabled"])))
        print("%s %s: ort-dis max |diff| %.3g (%.2g of max |y|), bound ratio %.2g; jit %s ref; "
              "ort-all %.2g of max |y|, graph %s" % (
                  "PASS" if ok else "FAIL", name, float(diff.max()), float(diff.max()) / big, ratio,
                  "==" if same else "!=" if same is False else "(not run)",
                  float(np.max(np.abs(yq - yo["all"]))) / big,
                  ort_graph(os.path.join(out, name, "ort_all", "graph.onnx"))))
        fails += not ok
    print("%d models, %d failed" % (len(names), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
