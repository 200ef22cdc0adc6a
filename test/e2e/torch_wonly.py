#!/usr/bin/python3
"""torch_wonly.py QDQC --cache DIR [--no-ort] [--peer-python PY] [--self-test]: PyTorch 1.13 weight-only
fake-quant exports with 4- and 6-bit weights end to end.

test/models/torch_wonly.py writes (or finds in DIR) cnn_w4, cnn_w6, mlp_w4 and mlp_w6: float
activations, every Conv / Gemm weight behind QuantizeLinear -> Clip(quant_min, quant_max) ->
DequantizeLinear per output channel (w4: [-8, 7], w6: [-32, 31]). For each model:
  - the default pipeline turns every Conv into wconv and every Gemm into wmatmul, with integer
    weights inside [quant_min, quant_max] that use both ends of the range somewhere;
  - `qdqc run` (JIT, 2 threads) equals `--engine=ref` bit for bit;
  - ONNX Runtime --opt disabled (bench/ort_run.py, one thread: the literal float graph) agrees
    element by element within the bound E of docs/agreement.md ("Weight-only models"),
    propagated through the graph in float64 from E = 0 at the input:
      Conv / Gemm:       E' = op(E, |W|) + (2K + 6) 2^-24 (op(|h| + E, |W|) + |b|)
      Relu, Flatten:     E' = E
      GlobalAveragePool: E' = mean(E) + (HW + 3) 2^-24 mean(|h| + E)
    with W the dequantized weights, K the products per output, h the float64 forward pass (each
    engine is within (K + 2) resp. (K + 3) 2^-24 of the exact value, relative to the sum of
    |products| and |bias|, per layer: docs/numerics.md).
--self-test moves one output element of qdqc by twice its bound: every ORT check must FAIL.
Prints "NAME ort-dis max |diff| D, bound ratio R" and "N models, M failed checks"; exit 1 on a
failure; 77 (skip) without PyTorch."""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402
U = 2.0 ** -24
RANGES = {"w4": (-8, 7), "w6": (-32, 31)}


def conv64(x, w, strides, pads, dil, group):
    ns = x.ndim - 2
    n, c = x.shape[:2]
    m, ks = w.shape[0], w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[ns + i]) for i in range(ns)])
    osz = [(x.shape[2 + i] + pads[i] + pads[ns + i] - dil[i] * (ks[i] - 1) - 1) // strides[i] + 1 for i in range(ns)]
    cg, mg = c // group, m // group
    y = np.zeros([n, m] + osz)
    for kidx in np.ndindex(*ks):
        sl = tuple(slice(kidx[i] * dil[i], kidx[i] * dil[i] + strides[i] * (osz[i] - 1) + 1, strides[i]) for i in range(ns))
        for g in range(group):
            xs = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            ws = w[(slice(g * mg, (g + 1) * mg), slice(None)) + kidx]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc...->nm...", xs, ws)
    return y


def attrs(n):
    return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}


def evaluate(path, x):
    """(h, E) of the graph output: float64 forward pass and the bound (module docstring); and
    the integer weights of every DequantizeLinear (for the range check)."""
    m = onnx.load(path)
    vals = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    h, e = {m.graph.input[0].name: x.astype(np.float64)}, {m.graph.input[0].name: np.zeros(x.shape)}
    ints = []
    for n in m.graph.node:
        a = attrs(n)
        o = n.output[0]
        if n.op_type == "Constant":
            vals[o] = numpy_helper.to_array(a["value"])
        elif n.op_type == "Identity":
            vals[o] = vals[n.input[0]]
        elif n.op_type == "QuantizeLinear":  # of a constant f32 weight: ONNX's f32 division
            w, s, z = (vals[i] for i in n.input)
            ax = a.get("axis", 1)
            shp = [1] * w.ndim
            shp[ax] = -1
            q = np.rint(w.astype(np.float32) / s.astype(np.float32).reshape(shp)) + z.astype(np.float32).reshape(shp)
            vals[o] = np.clip(q, -128, 127).astype(np.int8)
        elif n.op_type == "Clip" and n.input[0] in vals:
            vals[o] = np.clip(vals[n.input[0]], vals[n.input[1]], vals[n.input[2]])
        elif n.op_type == "DequantizeLinear":
            q, s, z = (vals[i] for i in n.input)
            ints.append(q)
            shp = [1] * q.ndim
            shp[a.get("axis", 1)] = -1
            vals[o] = (q.astype(np.float64) - z.astype(np.float64).reshape(shp)) * s.astype(np.float64).reshape(shp)
        elif n.op_type in ("Conv", "Gemm"):
            xi, w = n.input[0], vals[n.input[1]]
            b = vals[n.input[2]].astype(np.float64) if len(n.input) > 2 else np.zeros(w.shape[0])
            hx, ex = h[xi], e[xi]
            if n.op_type == "Conv":
                ns = w.ndim - 2
                args = (a.get("strides", [1] * ns), a.get("pads", [0] * 2 * ns), a.get("dilations", [1] * ns), a.get("group", 1))
                op = lambda v, ww: conv64(v, ww, *args)  # noqa: E731
                bb = b.reshape([1, -1] + [1] * ns)
            else:
                assert a.get("transB", 0) == 1 and a.get("alpha", 1.0) == 1.0 and a.get("beta", 1.0) == 1.0
                op = lambda v, ww: v @ ww.T  # noqa: E731
                bb = b
            k = int(np.prod(w.shape[1:]))
            h[o] = op(hx, w) + bb
            e[o] = op(ex, np.abs(w)) + (2 * k + 6) * U * (op(np.abs(hx) + ex, np.abs(w)) + np.abs(bb))
        elif n.op_type == "Relu":
            h[o], e[o] = np.maximum(h[n.input[0]], 0), e[n.input[0]]
        elif n.op_type == "GlobalAveragePool":
            hx, ex = h[n.input[0]], e[n.input[0]]
            cnt = int(np.prod(hx.shape[2:]))
            ax = tuple(range(2, hx.ndim))
            h[o] = hx.mean(axis=ax, keepdims=True)
            e[o] = ex.mean(axis=ax, keepdims=True) + (cnt + 3) * U * (np.abs(hx) + ex).mean(axis=ax, keepdims=True)
        elif n.op_type == "Flatten":
            h[o], e[o] = (v[n.input[0]].reshape(v[n.input[0]].shape[0], -1) for v in (h, e))
        else:
            raise RuntimeError("%s: op %s not modelled by the bound" % (path, n.op_type))
    y = m.graph.output[0].name
    return h[y], e[y], ints


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd[:3]), (r.stderr or r.stdout).strip()[-600:]))
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qdqc")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--peer-python", default=peerenv.python())
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    r = subprocess.run([sys.executable, os.path.join(ROOT, "test", "models", "torch_wonly.py"), "--cache", a.cache],
                       capture_output=True, text=True)
    if r.returncode == 77:
        print(r.stderr.strip())
        return 77
    if r.returncode:
        print("FAIL export: " + r.stderr.strip()[-800:])
        return 1
    d = r.stdout.strip().splitlines()[-1]
    ort_run = peerenv.ORT_RUN
    why = None if a.no_ort else peerenv.check(a.peer_python)
    if why:
        print("ERROR: ONNX Runtime peer missing: %s" % why)
        return 1
    names = ["cnn_w4", "cnn_w6", "mlp_w4", "mlp_w6"]
    fails = 0

    def check(ok, what):
        nonlocal fails
        fails += not ok
        print("%s %s" % ("PASS" if ok else "FAIL", what))

    for name in names:
        path = os.path.join(d, name + ".onnx")
        inp = os.path.join(d, name, "input.npy")
        x = np.load(inp)
        lo, hi = RANGES[name[-2:]]
        ir = run([a.qdqc, path, "--emit=ir"])
        m = onnx.load(path)
        nconv = sum(n.op_type == "Conv" for n in m.graph.node)
        ngemm = sum(n.op_type == "Gemm" for n in m.graph.node)
        check(ir.count("= wconv ") == nconv and ir.count("= wmatmul ") == ngemm and " conv " not in ir,
              "%s: %d convs -> wconv, %d gemms -> wmatmul" % (name, nconv, ngemm))
        h, e, ints = evaluate(path, x)
        allv = np.concatenate([q.reshape(-1).astype(np.int32) for q in ints])
        check(allv.min() == lo and allv.max() == hi, "%s: weights in [%d, %d], both ends used" % (name, lo, hi))
        outs = {}
        for eng in ("jit", "ref"):
            od = os.path.join(d, name, eng)
            run([a.qdqc, "run", path, "--engine=" + eng, "--threads", "2", "--input", "input=" + inp, "--output-dir", od])
            outs[eng] = np.load(os.path.join(od, "y.npy"))
        check(outs["jit"].tobytes() == outs["ref"].tobytes(), "%s: jit == ref bit for bit" % name)
        if a.no_ort:
            continue
        od = os.path.join(d, name, "ort_disabled")
        os.makedirs(od, exist_ok=True)
        run([a.peer_python, ort_run, path, "--input", "input=" + inp, "--output-dir", od, "--opt", "disabled", "--threads", "1"])
        yo = np.load(os.path.join(od, "y.npy")).astype(np.float64)
        yq = outs["jit"].astype(np.float64)
        if a.self_test:
            yq.flat[0] += 2 * e.flat[0] + 1e-30
        diff = np.abs(yq - yo)
        ratio = float(np.max(diff / np.maximum(e, 1e-300)))
        check(bool(np.all(diff <= e)), "%s ort-dis max |diff| %.3g (%.2g of max |y|), bound ratio %.2g" % (
            name, float(diff.max()), float(diff.max()) / float(np.abs(yo).max()), ratio))
    print("%d models, %d failed checks" % (len(names), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
