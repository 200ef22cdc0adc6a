#!/usr/bin/python3
"""maxpool_indices.py QDQC: MaxPool's Indices output end to end.

Builds small ONNX models (python3-onnx) with MaxPool nodes whose Indices output is used: float
1-D/2-D/3-D pools (row- and column-major storage_order, padding, strides, dilations, batch and
channel offsets), an int8 QDQ maxpool (Q -> DQ -> MaxPool -> Q -> DQ, which the passes turn
into an integer maxpool), a QDQ conv followed by the maxpool (the code generator's NHWC layout
planning must leave the maxpool NCHW) and a float maxpool followed by a quantize (the quantize
must not move before the maxpool: it would create ties). Inputs are drawn from a few values so
that most windows hold several equal maxima: ONNX picks the first one in row-major window
order.

For each model and each of --engine=ref/jit x --passes= / default pipeline, every output must
equal, bit for bit, an independent numpy implementation of ONNX MaxPool (and of
QuantizeLinear/DequantizeLinear). Prints one line per run and "N runs, M failed"; exit 1 on
any failure. Run with /usr/bin/python3."""
import itertools
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh


# ---- numpy oracle ----
def quantize(x, s, z, lo, hi):
    return np.clip(np.rint(x.astype(np.float32) / np.float32(s)) + z, lo, hi)


def dequantize(q, s, z):
    return ((q.astype(np.int32) - z).astype(np.float32) * np.float32(s)).astype(np.float32)


def maxpool(x, k, strides, pads, dil, storage_order):
    """ONNX MaxPool: first maximum of the taps inside the input (row-major window order);
    indices = flat index in x, column-major over the spatial axes when storage_order=1."""
    n, c = x.shape[:2]
    sp = x.shape[2:]
    ns = len(sp)
    out_sp = [(sp[i] + pads[i] + pads[ns + i] - ((k[i] - 1) * dil[i] + 1)) // strides[i] + 1
              for i in range(ns)]
    y = np.zeros((n, c) + tuple(out_sp), x.dtype)
    idx = np.zeros(y.shape, np.int64)
    isp = int(np.prod(sp))
    colst = [int(np.prod(sp[:i])) for i in range(ns)]   # column-major strides
    rowst = [int(np.prod(sp[i + 1:])) for i in range(ns)]
    for b, ch in itertools.product(range(n), range(c)):
        base = (b * c + ch) * isp
        for o in itertools.product(*[range(d) for d in out_sp]):
            best, bi = None, None
            for t in itertools.product(*[range(kk) for kk in k]):
                ii = [o[a] * strides[a] - pads[a] + t[a] * dil[a] for a in range(ns)]
                if any(ii[a] < 0 or ii[a] >= sp[a] for a in range(ns)):
                    continue
                v = x[(b, ch) + tuple(ii)]
                if best is None or v > best:
                    best, bi = v, ii
            y[(b, ch) + o] = best
            st = colst if storage_order else rowst
            idx[(b, ch) + o] = base + sum(bi[a] * st[a] for a in range(ns))
    return y, idx


# ---- models ----
def init(name, arr):
    return nh.from_array(np.asarray(arr), name)


def pool_node(inp, outs, k, strides, pads, dil, so, name="pool"):
    return h.make_node("MaxPool", [inp], outs, name=name, kernel_shape=k, strides=strides,
                       pads=pads, dilations=dil, storage_order=so)


def model(nodes, ins, outs, inits=()):
    g = h.make_graph(nodes, "g", ins, outs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="maxpool_indices")
    m.ir_version = 7
    return m


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


CASES = []


def float_case(name, shape, k, strides, pads, dil, so, rng):
    x = rng.integers(0, 3, shape).astype(np.float32)  # many ties
    y, idx = maxpool(x, k, strides, pads, dil, so)
    m = model([pool_node("x", ["y", "idx"], k, strides, pads, dil, so)],
              [vi("x", TP.FLOAT, shape)], [vi("y", TP.FLOAT, y.shape), vi("idx", TP.INT64, y.shape)])
    CASES.append((name, m, {"x": x}, {"y": y, "idx": idx}))


S, Z = 0.05, 3  # int8 activation parameters


def qdq_case(name, rng, with_conv, so):
    """x -> Q -> DQ [-> conv(int8 weights) -> Q -> DQ] -> MaxPool(y, idx) -> Q -> DQ."""
    shape = (2, 3, 6, 6)
    x = (rng.integers(-6, 7, shape) * 0.02).astype(np.float32)  # several floats per int8 step
    k, st, pd, dl = [3, 3], [2, 2], [1, 1, 1, 1], [1, 1]
    inits = [init("s", np.float32(S)), init("z", np.int8(Z))]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="qx"),
             h.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dqx")]
    xd = dequantize(quantize(x, S, Z, -128, 127), S, Z)
    src = "xd"
    if with_conv:
        w = (np.arange(3 * 3 * 1 * 1) % 5 - 2).astype(np.int8).reshape(3, 3, 1, 1)
        inits += [init("w", w), init("ws", np.float32(0.5)), init("wz", np.int8(0))]
        nodes += [h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dqw"),
                  h.make_node("Conv", ["xd", "wd"], ["c"], name="conv"),
                  h.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"], name="qc"),
                  h.make_node("DequantizeLinear", ["cq", "s", "z"], ["cd"], name="dqc")]
        wd = dequantize(w, 0.5, 0)
        c = np.einsum("oi,nihw->nohw", wd[:, :, 0, 0].astype(np.float64),
                      xd.astype(np.float64)).astype(np.float32)
        xd = dequantize(quantize(c, S, Z, -128, 127), S, Z)
        src = "cd"
    y, idx = maxpool(xd, k, st, pd, dl, so)
    yq = dequantize(quantize(y, S, Z, -128, 127), S, Z)
    nodes += [pool_node(src, ["p", "idx"], k, st, pd, dl, so),
              h.make_node("QuantizeLinear", ["p", "s", "z"], ["pq"], name="qp"),
              h.make_node("DequantizeLinear", ["pq", "s", "z"], ["y"], name="dqp")]
    m = model(nodes, [vi("x", TP.FLOAT, shape)],
              [vi("y", TP.FLOAT, y.shape), vi("idx", TP.INT64, y.shape)], inits)
    CASES.append((name, m, {"x": x}, {"y": yq, "idx": idx}))


def float_then_quantize_case(name, rng):
    """MaxPool on float values that differ below one quantization step, then Q -> DQ: the
    indices must be those of the float maxima (a quantize moved before the maxpool would make
    the values equal and pick the first)."""
    shape = (2, 3, 6, 6)
    x = (rng.integers(0, 40, shape) * 0.001 + 0.2).astype(np.float32)  # steps < S
    k, st, pd, dl = [2, 2], [2, 2], [0, 0, 0, 0], [1, 1]
    y, idx = maxpool(x, k, st, pd, dl, 0)
    yq = dequantize(quantize(y, S, Z, -128, 127), S, Z)
    inits = [init("s", np.float32(S)), init("z", np.int8(Z))]
    nodes = [pool_node("x", ["p", "idx"], k, st, pd, dl, 0),
             h.make_node("QuantizeLinear", ["p", "s", "z"], ["pq"], name="qp"),
             h.make_node("DequantizeLinear", ["pq", "s", "z"], ["y"], name="dqp")]
    m = model(nodes, [vi("x", TP.FLOAT, shape)],
              [vi("y", TP.FLOAT, y.shape), vi("idx", TP.INT64, y.shape)], inits)
    CASES.append((name, m, {"x": x}, {"y": yq, "idx": idx}))


def build():
    rng = np.random.default_rng(7)
    float_case("f2d_rowmajor", (2, 3, 7, 6), [3, 2], [2, 1], [1, 0, 1, 1], [1, 2], 0, rng)
    float_case("f2d_colmajor", (2, 3, 7, 6), [3, 2], [2, 1], [1, 0, 1, 1], [1, 2], 1, rng)
    float_case("f1d_colmajor", (2, 2, 9), [3], [2], [1, 1], [1], 1, rng)
    float_case("f3d_rowmajor", (1, 2, 4, 5, 3), [2, 2, 2], [1, 2, 1], [0, 1, 0, 0, 0, 1],
               [1, 1, 2], 0, rng)
    float_case("f3d_colmajor", (1, 2, 4, 5, 3), [2, 2, 2], [1, 2, 1], [0, 1, 0, 0, 0, 1],
               [1, 1, 2], 1, rng)
    qdq_case("qdq_i8", rng, False, 0)
    qdq_case("qdq_i8_colmajor", rng, False, 1)
    qdq_case("qdq_conv_i8", rng, True, 0)
    float_then_quantize_case("float_then_q", rng)


def main():
    qdqc = sys.argv[1]
    build()
    runs = fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, ins, want in CASES:
            mp = os.path.join(tmp, name + ".onnx")
            onnx.save(m, mp)
            args = []
            for k, v in ins.items():
                p = os.path.join(tmp, "%s.%s.npy" % (name, k))
                np.save(p, v)
                args += ["--input", "%s=%s" % (k, p)]
            for eng, passes in itertools.product(("ref", "jit"), (["--passes="], [])):
                od = os.path.join(tmp, "%s.%s.%d" % (name, eng, len(passes)))
                cmd = [qdqc, "run", mp, "--engine=" + eng, "--output-dir", od] + args + passes
                r = subprocess.run(cmd, capture_output=True, text=True)
                runs += 1
                tag = "%s engine=%s %s" % (name, eng, "--passes=" if passes else "default")
                if r.returncode != 0:
                    fails += 1
                    print("FAIL %s: exit %d\n%s" % (tag, r.returncode, r.stderr))
                    continue
                bad = []
                for o, e in want.items():
                    got = np.load(os.path.join(od, o + ".npy"))
                    if got.dtype != e.dtype or got.shape != e.shape or \
                            got.tobytes() != e.tobytes():
                        bad.append("%s: got %s%s %s, want %s%s %s" % (
                            o, got.dtype, got.shape, got.ravel()[:12], e.dtype, e.shape,
                            e.ravel()[:12]))
                if bad:
                    fails += 1
                    print("FAIL %s\n  %s" % (tag, "\n  ".join(bad)))
                else:
                    print("PASS %s" % tag)
    print("%d runs, %d failed" % (runs, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
