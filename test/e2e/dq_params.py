#!/usr/bin/python3
"""dq_params.py QDQC [--out DIR]: every DequantizeLinear reads its integers with its own
parameters, end to end.

ONNX lets a DequantizeLinear's scale, zero point (an omitted one is 0) and axis differ from
those of the QuantizeLinear before it: the DQ reinterprets the integers. Each model here has
such a pair after an op that the passes turn into an integer op (MaxPool, Relu -> lut,
ConvTranspose, Conv, Add, AveragePool, Concat, Reshape moved after the Q, a requantize, a
duplicate Q merged, a DQ with its own parameters feeding a Conv), per tensor and per channel,
u8 and i8. For each model:
  - `qdqc MODEL --emit=ir --verify-each` must succeed (the verifier requires a dequantize's
    parameters to equal its operand type's when that type carries any);
  - `qdqc run --engine=jit` must equal `qdqc run --engine=ref` bit for bit (default pipeline),
    and so must the AOT object (`qdqc MODEL -o model.o` linked with test/e2e/cross_driver.c);
  - `--engine=ref` after the default pipeline must equal `--engine=ref --passes=` (the graph
    as imported) exactly, or within one step of the final DQ's scale for the convolutions
    (integer accumulation against the literal float one, docs/numerics.md);
  - `--engine=ref --passes=` must equal an independent numpy evaluation of the ONNX graph
    (QuantizeLinear / DequantizeLinear / the op), exactly for the selection ops, within one
    step for the convolutions and averages.
Prints one line per check and "N checks, M failed"; exit 1 on any failure. --out DIR keeps
the models and outputs. Run with /usr/bin/python3."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

F32 = np.float32
HERE = os.path.dirname(os.path.abspath(__file__))


# ---- numpy oracle: ONNX QuantizeLinear / DequantizeLinear (f32 arithmetic) ----
def bcast(p, x, axis):
    p = np.asarray(p)
    if p.ndim == 0 or p.size == 1:
        return p.reshape(())
    shape = [1] * x.ndim
    shape[axis] = p.size
    return p.reshape(shape)


def quantize(x, s, z, dtype, axis=1):
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    s = bcast(np.asarray(s, F32), x, axis)
    z = bcast(np.asarray(z, np.int64), x, axis)
    return np.clip(np.rint(x.astype(F32) / s) + z, lo, hi).astype(dtype)


def dequantize(q, s, z, axis=1):
    s = bcast(np.asarray(s, F32), q, axis)
    z = bcast(np.asarray(z, np.int64), q, axis)
    return ((q.astype(np.int64) - z).astype(F32) * s).astype(F32)


# ---- model building ----
class M:
    """A graph under construction; every tensor's numpy value is computed as it is added."""

    def __init__(self, name, x):
        self.name, self.nodes, self.inits, self.vals = name, [], [], {"x": x}
        self.k = 0

    def fresh(self, base):
        self.k += 1
        return "%s_%d" % (base, self.k)

    def const(self, arr, base="c"):
        n = self.fresh(base)
        self.inits.append(nh.from_array(np.asarray(arr), n))
        self.vals[n] = np.asarray(arr)
        return n

    def node(self, op, ins, val, **attrs):
        out = self.fresh(op.lower())
        self.nodes.append(h.make_node(op, ins, [out], name=out, **attrs))
        self.vals[out] = val
        return out

    def q(self, x, s, z, dtype=np.uint8, axis=None):
        """QuantizeLinear(x, s, z) (axis attribute only when given)."""
        ins = [x, self.const(np.asarray(s, F32), "s"), self.const(np.asarray(z, dtype), "zp")]
        attrs = {} if axis is None else {"axis": axis}
        return self.node("QuantizeLinear", ins,
                         quantize(self.vals[x], s, z, dtype, 1 if axis is None else axis), **attrs)

    def dq(self, q, s, z=None, axis=None):
        """DequantizeLinear(q, s[, z]); z None: the zero point input is omitted (0)."""
        ins = [q, self.const(np.asarray(s, F32), "s")]
        if z is not None:
            ins.append(self.const(np.asarray(z, self.vals[q].dtype), "zp"))
        attrs = {} if axis is None else {"axis": axis}
        return self.node("DequantizeLinear", ins,
                         dequantize(self.vals[q], s, 0 if z is None else z,
                                    1 if axis is None else axis), **attrs)

    def model(self, outs):
        x = self.vals["x"]
        g = h.make_graph(self.nodes, self.name,
                         [h.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
                         [h.make_tensor_value_info(o, TP.FLOAT, list(self.vals[o].shape))
                          for o in outs], initializer=self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="dq_params")
        m.ir_version = 7
        onnx.checker.check_model(m, full_check=True)
        return m


def maxpool_1x2(x):
    return np.maximum(x[..., :-1], x[..., 1:])


def conv2d(x, w, b, pad):
    n, c, hh, ww = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return (y + b.reshape(1, -1, 1, 1)).astype(F32)


def conv_transpose_s2(x, w, b):
    """ConvTranspose 3x3, stride 2, pads 1, output_padding 1 (H -> 2H); w is [C, M, 3, 3]."""
    n, c, hh, ww = x.shape
    m = w.shape[1]
    full = np.zeros((n, m, 2 * hh + 1, 2 * ww + 1))
    for i in range(3):
        for j in range(3):
            full[:, :, i:i + 2 * hh:2, j:j + 2 * ww:2] += np.einsum(
                "nchw,cm->nmhw", x.astype(np.float64), w[:, :, i, j])
    # output position o is full position o + pad; output_padding adds the last row/column
    return (full[:, :, 1:, 1:] + b.reshape(1, -1, 1, 1)).astype(F32)


# ---- cases: (name, model, outputs, exact) ----
def cases():
    rng = np.random.default_rng(17)
    out = []

    def issue_input():
        return np.array([-0.5, 0.5, 1.0, 1.0], F32).reshape(1, 1, 1, 4)

    # the issue's repro: [1.5 2 2]; the JIT gave [0.5 1 1]
    b = M("maxpool_zp_omitted", issue_input())
    a = b.dq(b.q("x", 0.1, 10), 0.1, 10)
    y = b.dq(b.q(b.node("MaxPool", [a], maxpool_1x2(b.vals[a]), kernel_shape=[1, 2]), 0.1, 10),
             0.1)
    out.append((b, [y], True))

    b = M("relu_zp_omitted", issue_input())
    a = b.dq(b.q("x", 0.1, 10), 0.1, 10)
    y = b.dq(b.q(b.node("Relu", [a], np.maximum(b.vals[a], 0)), 0.1, 10), 0.1)
    out.append((b, [y], True))

    x = rng.standard_normal((1, 4, 6, 6)).astype(F32)
    b = M("relu_scale_differs", x)
    a = b.dq(b.q("x", 0.02, 128), 0.02, 128)
    y = b.dq(b.q(b.node("Relu", [a], np.maximum(b.vals[a], 0)), 0.015, 3), 0.04, 7)
    out.append((b, [y], True))

    b = M("maxpool_scale_differs_i8", x)
    a = b.dq(b.q("x", 0.03, -4, np.int8), 0.03, -4)
    mp = b.node("MaxPool", [a], maxpool_1x2(b.vals[a]), kernel_shape=[1, 2])
    y = b.dq(b.q(mp, 0.03, -4, np.int8), 0.05)
    out.append((b, [y], True))

    # per-channel DQ (axis 1) of a per-tensor Q's integers
    b = M("maxpool_dq_per_channel", x)
    a = b.dq(b.q("x", 0.02, 128), 0.02, 128)
    mp = b.node("MaxPool", [a], maxpool_1x2(b.vals[a]), kernel_shape=[1, 2])
    y = b.dq(b.q(mp, 0.02, 128), np.array([0.01, 0.02, 0.03, 0.04], F32),
             np.array([120, 128, 130, 0], np.uint8), axis=1)
    out.append((b, [y], True))

    # a requantize (different Q after the pool) read with yet other parameters
    b = M("maxpool_requantize", x)
    a = b.dq(b.q("x", 0.02, 128), 0.02, 128)
    mp = b.node("MaxPool", [a], maxpool_1x2(b.vals[a]), kernel_shape=[1, 2])
    y = b.dq(b.q(mp, 0.03, 100), 0.03)
    out.append((b, [y], True))

    # Reshape then Q (the Q moves before the reshape), read with another zero point
    b = M("reshape_q_moved", x)
    r = b.node("Reshape", ["x", b.const(np.array([1, 4, 36], np.int64), "shape")],
               x.reshape(1, 4, 36))
    y = b.dq(b.q(r, 0.02, 128), 0.02, 120)
    out.append((b, [y], True))

    # two identical Qs of x: one read with its own parameters, one with others
    b = M("duplicate_q", x)
    a = b.dq(b.q("x", 0.02, 128), 0.02, 128)
    y1 = b.dq(b.q(b.node("Relu", [a], np.maximum(b.vals[a], 0)), 0.02, 128), 0.02, 128)
    y2 = b.dq(b.q("x", 0.02, 128), 0.01)
    out.append((b, [y1, y2], True))

    # Add of two dequantized activations, its Q read with another scale and zero point
    b = M("add_scale_differs", x)
    a1 = b.dq(b.q("x", 0.02, 128), 0.02, 128)
    a2 = b.dq(b.q("x", 0.03, 120), 0.03, 120)
    s = b.node("Add", [a1, a2], (b.vals[a1].astype(np.float64) + b.vals[a2]).astype(F32))
    y = b.dq(b.q(s, 0.04, 128), 0.05, 100)
    out.append((b, [y], True))

    b = M("concat_zp_omitted", x)
    a1 = b.dq(b.q("x", 0.02, 128), 0.02, 128)
    a2 = b.dq(b.q("x", 0.03, 120), 0.03, 120)
    c = b.node("Concat", [a1, a2], np.concatenate([b.vals[a1], b.vals[a2]], 1), axis=1)
    y = b.dq(b.q(c, 0.03, 128), 0.03)
    out.append((b, [y], True))

    b = M("avgpool_scale_differs", x)
    a = b.dq(b.q("x", 0.02, 128), 0.02, 128)
    av = b.vals[a].astype(np.float64)
    pool = ((av[..., 0::2, 0::2] + av[..., 0::2, 1::2] + av[..., 1::2, 0::2] +
             av[..., 1::2, 1::2]) / 4).astype(F32)
    p = b.node("AveragePool", [a], pool, kernel_shape=[2, 2], strides=[2, 2])
    y = b.dq(b.q(p, 0.01, 128), 0.02, 64)
    out.append((b, [y], False))

    # ConvTranspose: per-channel int8 weights on axis 1, int32 bias, u8 output read with a
    # different scale and the zero point omitted
    x8 = rng.standard_normal((1, 8, 8, 8)).astype(F32)
    b = M("convtranspose_dq_differs", x8)
    a = b.dq(b.q("x", 0.025, 128), 0.025, 128)
    wq = rng.integers(-127, 128, (8, 6, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, 6) * 0.004).astype(F32)
    w = b.dq(b.const(wq, "w"), ws, np.zeros(6, np.int8), axis=1)
    bq = rng.integers(-2000, 2000, 6).astype(np.int32)
    bs = (F32(0.025) * ws).astype(F32)
    bias = b.dq(b.const(bq, "b"), bs, np.zeros(6, np.int32), axis=0)
    ct = b.node("ConvTranspose", [a, w, bias],
                conv_transpose_s2(b.vals[a], b.vals[w], b.vals[bias]), strides=[2, 2],
                pads=[1, 1, 1, 1], output_padding=[1, 1], kernel_shape=[3, 3])
    y = b.dq(b.q(ct, 0.05, 128), 0.03)
    out.append((b, [y], False))

    # the DQ with its own parameters feeds a Conv: the conv still folds, reading the cast
    b = M("maxpool_dq_differs_then_conv", x8)
    a = b.dq(b.q("x", 0.025, 128), 0.025, 128)
    mp = b.node("MaxPool", [a], maxpool_1x2(b.vals[a]), kernel_shape=[1, 2])
    md = b.dq(b.q(mp, 0.025, 128), 0.02, 120)
    wq = rng.integers(-127, 128, (4, 8, 1, 1)).astype(np.int8)
    w = b.dq(b.const(wq, "w"), F32(0.01), np.int8(0))
    cv = b.node("Conv", [md, w], conv2d(b.vals[md], b.vals[w], np.zeros(4), 0))
    y = b.dq(b.q(cv, 0.05, 128), 0.05, 128)
    out.append((b, [y], False))

    # Conv with a per-tensor Q read by a per-channel DQ
    b = M("conv_dq_per_channel", x8)
    a = b.dq(b.q("x", 0.025, 128), 0.025, 128)
    wq = rng.integers(-127, 128, (4, 8, 3, 3)).astype(np.int8)
    w = b.dq(b.const(wq, "w"), F32(0.005), np.int8(0))
    cv = b.node("Conv", [a, w], conv2d(b.vals[a], b.vals[w], np.zeros(4), 1), pads=[1, 1, 1, 1])
    y = b.dq(b.q(cv, 0.05, 128), np.array([0.05, 0.04, 0.06, 0.05], F32),
             np.array([128, 120, 140, 0], np.uint8), axis=1)
    out.append((b, [y], False))
    return out


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc = argv[1]
    keep = argv[argv.index("--out") + 1] if "--out" in argv else None
    tmpdir = None if keep else tempfile.TemporaryDirectory(prefix="dq_params.")
    tmp = keep or tmpdir.name
    nchk = nfail = 0

    def report(ok, what):
        nonlocal nchk, nfail
        nchk += 1
        nfail += not ok
        print("%s %s" % ("PASS" if ok else "FAIL", what))

    for b, outs, exact in cases():
        d = os.path.join(tmp, b.name)
        os.makedirs(d, exist_ok=True)
        mp = os.path.join(d, "model.onnx")
        onnx.save(b.model(outs), mp)
        xp = os.path.join(d, "x.npy")
        np.save(xp, b.vals["x"])
        rc, msg = run([qdqc, mp, "--emit=ir", "--verify-each", "-o", os.path.join(d, "ir.qir")])
        report(rc == 0, "%s verify-each%s" % (b.name, "" if rc == 0 else ": " + msg.strip()))
        res = {}
        for tag, args in (("ref-literal", ["--engine=ref", "--passes="]),
                          ("ref", ["--engine=ref"]), ("jit", ["--engine=jit"])):
            od = os.path.join(d, tag)
            rc, msg = run([qdqc, "run", mp, "--input", "x=" + xp, "--output-dir", od] + args)
            if rc != 0:
                report(False, "%s %s: %s" % (b.name, tag, msg.strip()))
                continue
            res[tag] = [np.load(os.path.join(od, o + ".npy")) for o in outs]
        # the AOT object: the same build as the JIT (docs/abi.md), linked with a C driver
        obj, exe = os.path.join(d, "model.o"), os.path.join(d, "aot")
        rc, msg = run([qdqc, mp, "-o", obj])
        if rc == 0:
            rc, msg = run(["cc", "-O1", "-o", exe, os.path.join(HERE, "cross_driver.c"), obj,
                           "-lm"])
        if rc == 0:
            xb = os.path.join(d, "x.bin")
            b.vals["x"].tofile(xb)
            args = [exe, "1", xb, str(len(outs))]
            for o in outs:
                args += [os.path.join(d, o + ".aot.bin"), str(b.vals[o].size * 4)]
            rc, msg = run(args)
        if rc != 0:
            report(False, "%s aot: %s" % (b.name, msg.strip()))
        else:
            res["aot"] = [np.fromfile(os.path.join(d, o + ".aot.bin"), F32).reshape(
                b.vals[o].shape) for o in outs]
        if len(res) != 4:
            continue
        for k, o in enumerate(outs):
            oracle = b.vals[o]
            # one step of the final dequantize: its largest scale
            step = float(np.max(b.vals[b.nodes[-1].input[1]])) if k == len(outs) - 1 else 0
            for tag, want, tol in (("jit == ref", res["ref"][k], 0.0),
                                   ("aot == ref", res["ref"][k], 0.0),
                                   ("ref == ref-literal", res["ref-literal"][k],
                                    0.0 if exact else step * 1.0001),
                                   ("ref-literal == numpy", oracle,
                                    0.0 if exact else step * 1.0001)):
                got = {"jit == ref": res["jit"][k], "aot == ref": res["aot"][k],
                       "ref == ref-literal": res["ref"][k]}.get(tag, res["ref-literal"][k])
                diff = float(np.max(np.abs(got.astype(np.float64) - want))) \
                    if got.shape == want.shape else float("inf")
                ok = got.dtype == want.dtype and diff <= tol and \
                    (tol > 0 or np.array_equal(got, want))
                report(ok, "%s %s %s (max diff %g, %d elements)" % (b.name, o, tag, diff,
                                                                     want.size))
    print("%d checks, %d failed" % (nchk, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
