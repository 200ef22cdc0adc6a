#!/usr/bin/python3
"""dynq_models.py: ONNX models in the layout of ONNX Runtime's dynamic quantization
(onnxruntime.quantization.quantize_dynamic, MatMul -> MatMulInteger), deterministic, with a
numpy evaluation of their literal ONNX semantics.

For every MatMul with a constant weight W [K, N], quantize_dynamic writes
    DynamicQuantizeLinear(x) -> x_q (u8), x_scale, x_zero_point    (one per input tensor, shared
                                                                     by all its consumers)
    MatMulInteger(x_q, W_q, x_zero_point, W_zero_point) -> Cast(to=FLOAT)
    Mul(x_scale, W_scale) -> Mul(cast, .)                            (the MatMul's output)
and leaves the model's own bias Add after it (float). W_q is int8 with zero point 0 (QInt8,
symmetric) or uint8 with a computed zero point (QUInt8); per tensor, or per column with
per_channel (W_scale and W_zero_point of shape [N]). MatMuls of two activations stay float
(MatMulConstBOnly, quantize_dynamic's default).

    dynq_models.py --write DIR [--bert]   writes DIR/<name>.onnx and DIR/<name>/<input>.npy
                                          (the small test models; --bert: also the encoder
                                          layer of bench/dynq_bert.sh, hidden 256, 4 heads,
                                          seq 128)

As a module: MODELS (name -> builder), build(name) -> (ModelProto, feeds), literal(model,
feeds) -> outputs (numpy, the ONNX semantics step by step in f32, exact for DynamicQuantizeLinear,
MatMulInteger, Cast, Mul, Add, Relu; None when the model has other float ops)."""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = np.float32


class B:
    """A graph under construction (names as quantize_dynamic writes them)."""

    def __init__(self, name, seed, opset=17):
        self.name, self.opset = name, opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.feeds, self.shapes = {}, {}
        self.dq = {}  # float tensor -> (x_q, x_scale, x_zero_point): one DynamicQuantizeLinear each
        self.k = 0

    def uniq(self, base):
        self.k += 1
        return "%s_%d" % (base, self.k)

    def input(self, name, shape, scale=1.0, offset=0.0):
        x = (self.rng.standard_normal(shape) * scale + offset).astype(F32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.feeds[name] = x
        self.shapes[name] = tuple(shape)
        return name

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, outs=None, nout=1, **attrs):
        outs = outs or [self.uniq(op.lower()) for _ in range(nout)]
        self.nodes.append(helper.make_node(op, ins, outs, name=self.uniq(op), **attrs))
        return outs[0] if nout == 1 else outs

    def output(self, name, shape):
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))

    def model(self):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, producer_name="qdqc-dynq_models", opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8
        onnx.checker.check_model(m, full_check=True)
        return m

    # quantize_dynamic's rewrite of MatMul(x, W) ---------------------------------------------------
    def quantize_weight(self, w, wtype, per_channel):
        """W_q, W_scale, W_zero_point as quantize_dynamic computes them (reduce_range off)."""
        axis = 0 if per_channel else None
        if wtype == "i8":  # QInt8: symmetric, zero point 0, [-127, 127]
            amax = np.max(np.abs(w), axis=axis)
            scale = (np.maximum(amax, 1e-8) * 2 / F32(254)).astype(F32)
            zp = np.zeros_like(scale, np.int8)
            q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        else:  # QUInt8: asymmetric over [min(0, w), max(0, w)]
            lo = np.minimum(np.min(w, axis=axis), 0)
            hi = np.maximum(np.max(w, axis=axis), 0)
            scale = (np.maximum(hi - lo, 1e-8) / F32(255)).astype(F32)
            zp = np.clip(np.rint(-lo / scale), 0, 255).astype(np.uint8)
            q = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
        return q, np.asarray(scale, F32), np.asarray(zp)

    def dyn_matmul(self, x, k, n, wtype="i8", per_channel=False, bias=True, wscale=1.0):
        w = (self.rng.standard_normal((k, n)) * np.sqrt(1.0 / k) * wscale).astype(F32)
        if x not in self.dq:
            base = x + "_quantized"
            self.dq[x] = self.node("DynamicQuantizeLinear", [x], [base, x + "_scale", x + "_zero_point"], nout=3)
        xq, xs, xz = self.dq[x]
        q, s, z = self.quantize_weight(w, wtype, per_channel)
        wn = self.uniq("W")
        wq, ws, wz = self.init(wn + "_quantized", q), self.init(wn + "_scale", s), self.init(wn + "_zero_point", z)
        mi = self.node("MatMulInteger", [xq, wq, xz, wz], [wn + "_output_quantized"])
        c = self.node("Cast", [mi], [mi + "_cast_output"], to=TensorProto.FLOAT)
        sm = self.node("Mul", [xs, ws], [wn + "_scales_mul:0"])
        y = self.node("Mul", [c, sm], [self.uniq("MatMul_output")])
        if bias:
            bv = (self.rng.standard_normal(n) * 0.1).astype(F32)
            y = self.node("Add", [y, self.init(self.uniq("bias"), bv)])
        return y


# ---- the models ----------------------------------------------------------------------------------

def lin_s8_pt():
    """x [16, 32] -> Linear(32, 24): QInt8 weights per tensor (zero point 0), a bias Add."""
    b = B("lin_s8_pt", 1)
    x = b.input("x", (16, 32))
    y = b.dyn_matmul(x, 32, 24, "i8", False)
    b.nodes[-1].output[0] = "y"
    b.output("y", (16, 24))
    return b


def lin_u8_pc():
    """x [1, 16, 32] (skewed: after a GELU-like shift) -> Linear(32, 40): QUInt8 weights per
    column with their zero points, per-column scales, a bias Add."""
    b = B("lin_u8_pc", 2)
    x = b.input("x", (1, 16, 32), scale=0.7, offset=0.9)
    y = b.dyn_matmul(x, 32, 40, "u8", True)
    b.nodes[-1].output[0] = "y"
    b.output("y", (1, 16, 40))
    return b


def qkv_shared():
    """One DynamicQuantizeLinear shared by three MatMulIntegers (Q, K, V projections of one
    input; QInt8 per column), no bias, three outputs."""
    b = B("qkv_shared", 3)
    x = b.input("x", (24, 48))
    for nm in ("q", "k", "v"):
        y = b.dyn_matmul(x, 48, 48, "i8", True, bias=False)
        b.nodes[-1].output[0] = nm
        b.output(nm, (24, 48))
    return b


def mlp(name="mlp", m=8, d=64, h=128, wtype="u8", seed=4):
    """x [m, d] -> Linear(d, h) -> Relu -> Linear(h, d): two dynamically quantized MatMuls
    (the second quantizes the Relu's output: zero point 0), `wtype` (QUInt8 per tensor by
    default) then QInt8 per column."""
    b = B(name, seed)
    x = b.input("x", (m, d))
    t = b.node("Relu", [b.dyn_matmul(x, d, h, wtype, False)])
    b.dyn_matmul(t, h, d, "i8", True)
    b.nodes[-1].output[0] = "y"
    b.output("y", (m, d))
    return b


def bert_layer(name="bert_layer", seq=16, hidden=32, heads=2, ffn=4, seed=5):
    """A BERT encoder layer as quantize_dynamic leaves it: x [1, seq, hidden] -> Q, K, V linears
    (dynamic, sharing one DynamicQuantizeLinear) -> heads -> Q K^T / sqrt(dh) -> Softmax -> . V
    (activation x activation: float) -> output linear (dynamic) -> residual Add ->
    LayerNormalization -> FFN (dynamic linear, GELU as x * 0.5 * (1 + Erf(x / sqrt 2)), dynamic
    linear) -> residual Add -> LayerNormalization. QInt8 weights per column."""
    b = B(name, seed)
    dh = hidden // heads
    x = b.input("x", (1, seq, hidden))

    def lin(t, k, n):
        return b.dyn_matmul(t, k, n, "i8", True)

    def split_heads(t, perm):
        r = b.node("Reshape", [t, b.init(b.uniq("shape"), np.array([1, seq, heads, dh], np.int64))])
        return b.node("Transpose", [r], perm=perm)

    q = split_heads(lin(x, hidden, hidden), [0, 2, 1, 3])
    kt = split_heads(lin(x, hidden, hidden), [0, 2, 3, 1])
    v = split_heads(lin(x, hidden, hidden), [0, 2, 1, 3])
    s = b.node("Div", [b.node("MatMul", [q, kt]), b.init(b.uniq("sqrt_dh"), np.array(np.sqrt(dh), F32))])
    p = b.node("Softmax", [s], axis=-1)
    o = b.node("Transpose", [b.node("MatMul", [p, v])], perm=[0, 2, 1, 3])
    o = b.node("Reshape", [o, b.init(b.uniq("shape"), np.array([1, seq, hidden], np.int64))])
    h = b.node("Add", [lin(o, hidden, hidden), x])

    def ln(t):
        g = b.init(b.uniq("gamma"), (1 + 0.1 * b.rng.standard_normal(hidden)).astype(F32))
        be = b.init(b.uniq("beta"), (0.1 * b.rng.standard_normal(hidden)).astype(F32))
        return b.node("LayerNormalization", [t, g, be], axis=-1, epsilon=1e-5)

    h = ln(h)
    f = lin(h, hidden, ffn * hidden)
    e = b.node("Erf", [b.node("Div", [f, b.init(b.uniq("sqrt2"), np.array(np.sqrt(2.0), F32))])])
    one = b.init(b.uniq("one"), np.array(1.0, F32))
    half = b.init(b.uniq("half"), np.array(0.5, F32))
    gelu = b.node("Mul", [b.node("Mul", [f, half]), b.node("Add", [e, one])])
    y = ln(b.node("Add", [lin(gelu, ffn * hidden, hidden), h]))
    b.nodes[-1].output[0] = "y"
    b.output("y", (1, seq, hidden))
    return b


MODELS = {
    "lin_s8_pt": lin_s8_pt,
    "lin_u8_pc": lin_u8_pc,
    "qkv_shared": qkv_shared,
    "mlp": mlp,
    "bert_layer": bert_layer,
}
BENCH = {"bert_layer_256": lambda: bert_layer("bert_layer_256", seq=128, hidden=256, heads=4, seed=6),
         "mlp_256": lambda: mlp("mlp_256", 128, 256, 1024, "i8", seed=7)}
LITERAL_OPS = {"DynamicQuantizeLinear", "MatMulInteger", "Cast", "Mul", "Add", "Relu"}


def build(name):
    b = (MODELS.get(name) or BENCH[name])()
    return b.model(), b.feeds


# ---- the literal ONNX semantics in numpy (f32 where ONNX computes in f32) ------------------------

def _dql(x):
    """DynamicQuantizeLinear (ONNX; scale 1 for an all-zero input, as ONNX Runtime)."""
    mn, mx = min(F32(0), x.min()), max(F32(0), x.max())
    s = F32(1) if mx == mn else F32(F32(mx - mn) / F32(255))
    zp = np.rint(np.clip(F32(F32(0) - F32(mn / s)), F32(0), F32(255)))
    q = np.clip(np.rint((x / s).astype(F32)) + zp, 0, 255).astype(np.uint8)
    return q, np.array(s, F32), np.array(zp, np.uint8)


def _matmul_integer(a, b, za, zb):
    acc = np.matmul(a.astype(np.int64) - np.int64(za), b.astype(np.int64) - zb.astype(np.int64))
    return ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)  # int32, wrapped


def literal(model, feeds):
    """The model's outputs by the ONNX definitions, or None if it has other ops."""
    v = dict(feeds)
    for t in model.graph.initializer:
        v[t.name] = numpy_helper.to_array(t)
    for nd in model.graph.node:
        if nd.op_type not in LITERAL_OPS:
            return None
        x = [v[i] for i in nd.input]
        if nd.op_type == "DynamicQuantizeLinear":
            r = _dql(x[0])
        elif nd.op_type == "MatMulInteger":
            r = (_matmul_integer(*x),)
        elif nd.op_type == "Cast":
            r = (x[0].astype(F32),)
        elif nd.op_type == "Mul":
            r = ((x[0] * x[1]).astype(F32),)
        elif nd.op_type == "Add":
            r = ((x[0] + x[1]).astype(F32),)
        else:
            r = (np.maximum(x[0], F32(0)),)
        for o, val in zip(nd.output, r):
            v[o] = val
    return {o.name: v[o.name] for o in model.graph.output}


def write(d, names):
    os.makedirs(d, exist_ok=True)
    for n in names:
        m, feeds = build(n)
        onnx.save(m, os.path.join(d, n + ".onnx"))
        os.makedirs(os.path.join(d, n), exist_ok=True)
        for k, val in feeds.items():
            np.save(os.path.join(d, n, k + ".npy"), val)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", metavar="DIR", required=True)
    ap.add_argument("--bert", action="store_true", help="also the hidden-256 encoder layer")
    ap.add_argument("--only", help="comma-separated model names")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(MODELS) + (list(BENCH) if a.bert else [])
    write(a.write, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
