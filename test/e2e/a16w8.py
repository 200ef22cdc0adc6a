#!/usr/bin/python3
"""a16w8.py QDQC [--out DIR] [--only NAME,...] [--isa A,B] [--write DIR] [--ir NAME] [--list]:
16-bit activations with 8-bit weights (A16W8) end to end.

ONNX opset-21 QDQ models with INT16/UINT16 activations, written here with python3-onnx: convs
(3x3, 1x1, strided, padded, dilated, grouped, depthwise), MatMul and Gemm with int8 weights per
channel, ONNX Runtime style (integer initializers behind DequantizeLinear, int32 bias) and
PyTorch style (f32 weights through Q->DQ, f32 bias); a long K with full-range uint16 inputs
(the int64 accumulator), fused Relu/Clip, residual adds, concat of u8 and i16 operands, max/
average/global pools, ReduceMean, Mul, standalone Relu/Clip, 8->16 and 16->8 requantization,
a conv without an output quantizer (f32 epilogue) and a ConvTranspose (stays float).
Scales are calibrated on the model's own float values (numpy), inputs include the extremes.

Checks per model, each printed PASS/FAIL:
  - fold: `--report` lists the integer ops the model must become (e.g. 3 qconv int16xint8),
    and no float conv/matmul/gemm unless the model says so;
  - literal vs integer: `--engine=ref --passes=` (the graph as imported) against the default
    pipeline, float and fixed requantization: within one output step for models whose output
    comes from their first rounding op (the documented bound, docs/numerics.md), else the
    largest difference is printed;
  - jit == ref: `--engine=jit` equals `--engine=ref` bit for bit on every GEMM path given
    (default: generic, avx2, avx512vnni where the host can run them), float and fixed, and on
    2 threads for the first path;
  - text IR: the IR after the pipeline parses back and prints the same.
--write DIR saves the models (for test/e2e/cross.py: AArch64 under qemu, AVX-VNNI);
--ir NAME prints the IR after the pipeline of one model. Prints "N checks, M failed"; exit 1
on any failure. Run with /usr/bin/python3."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

F32 = np.float32
RANGE = {TP.INT8: (-128, 127), TP.UINT8: (0, 255), TP.INT16: (-32768, 32767),
         TP.UINT16: (0, 65535)}
NPT = {TP.INT8: np.int8, TP.UINT8: np.uint8, TP.INT16: np.int16, TP.UINT16: np.uint16}


def quant(x, s, z, dt):
    lo, hi = RANGE[dt]
    return np.clip(np.rint(x.astype(F32) / F32(s)).astype(np.float64) + z, lo, hi)


def dequant(q, s, z):
    return ((q - z).astype(F32) * F32(s)).astype(F32)


def conv_np(x, w, b, stride, pad, dil, group):
    n, c, hh, ww = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (hh + pad[0] + pad[2] - dil * (kh - 1) - 1) // stride + 1
    ow = (ww + pad[1] + pad[3] - dil * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    mg = m // group
    for g in range(group):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * mg:(g + 1) * mg]
        for i in range(kh):
            for j in range(kw):
                xs = xg[:, :, i * dil:i * dil + stride * oh:stride, j * dil:j * dil + stride * ow:stride]
                y[:, g * mg:(g + 1) * mg] += np.einsum("nchw,oc->nohw", xs, wg[:, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(F32)


class T:
    def __init__(self, name, val):
        self.name, self.val = name, val


class B:
    """A graph builder that also computes each value in numpy (for calibration)."""

    def __init__(self, name, seed):
        self.name, self.nodes, self.inits, self.inputs, self.outputs = name, [], [], [], []
        self.k, self.rng, self.feeds = 0, np.random.default_rng(seed), {}

    def fresh(self, b):
        self.k += 1
        return "%s%d" % (b, self.k)

    def const(self, arr, b="c"):
        n = self.fresh(b)
        self.inits.append(nh.from_array(np.asarray(arr), n))
        return n

    def node(self, op, ins, val, **attrs):
        out = self.fresh(op.lower())
        self.nodes.append(h.make_node(op, ins, [out], name=out, **attrs))
        return T(out, val)

    def inp(self, shape, kind="normal"):
        n = "x%d" % len(self.inputs)
        r = self.rng
        if kind == "normal":
            v = r.standard_normal(shape).astype(F32)
        else:  # non-negative with a heavy tail
            v = np.abs(r.standard_normal(shape)).astype(F32) ** 2
        self.inputs.append(h.make_tensor_value_info(n, TP.FLOAT, list(shape)))
        self.feeds[n] = v
        return T(n, v)

    def params(self, v, dt, zero=None):
        lo, hi = RANGE[dt]
        if dt in (TP.INT16, TP.INT8):  # symmetric
            s = F32(max(float(np.abs(v).max()), 1e-6) / hi)
            return s, 0
        vmin, vmax = min(float(v.min()), 0.0), max(float(v.max()), 1e-6)
        s = F32((vmax - vmin) / (hi - lo))
        z = int(np.clip(round(-vmin / float(s)), lo, hi)) if zero is None else zero
        return s, z

    def q(self, t, dt, s=None, z=None):
        if s is None:
            s, z = self.params(t.val, dt)
        zn = self.const(np.array(z, NPT[dt]), "zp")
        sn = self.const(np.array(s, F32), "s")
        r = self.node("QuantizeLinear", [t.name, sn, zn], quant(t.val, s, z, dt))
        r.s, r.z, r.dt, r.sn, r.zn = s, z, dt, sn, zn
        return r

    def dq(self, qt):
        return self.node("DequantizeLinear", [qt.name, qt.sn, qt.zn], dequant(qt.val, qt.s, qt.z))

    def fq(self, t, dt, s=None, z=None):
        return self.dq(self.q(t, dt, s, z))

    def weights(self, shape, axis, style, wdt=TP.INT8):
        """(float values as dequantized, the DQ output name) of per-channel int8 weights."""
        r = self.rng
        wf = (r.standard_normal(shape) * 0.2).astype(F32)
        nch = shape[axis]
        red = tuple(i for i in range(len(shape)) if i != axis)
        amax = np.maximum(np.abs(wf).max(axis=red), 1e-6)
        bshape = [1] * len(shape)
        bshape[axis] = nch
        if wdt == TP.INT8:
            ws, wz = (amax / 127).astype(F32), np.zeros(nch, np.int8)
        else:
            ws = (2 * amax / 255).astype(F32)
            wz = np.full(nch, 128, np.uint8)
        wq = np.clip(np.rint(wf / ws.reshape(bshape)) + wz.reshape(bshape).astype(np.int64),
                     *RANGE[wdt]).astype(NPT[wdt])
        wd = ((wq.astype(np.int64) - wz.reshape(bshape)).astype(F32) * ws.reshape(bshape)).astype(F32)
        sn, zn = self.const(ws, "ws"), self.const(wz, "wz")
        if style == "ort":
            wn = self.const(wq, "w")
        else:  # torch: f32 weights quantized in the graph
            wn = self.node("QuantizeLinear", [self.const(wf, "wf"), sn, zn], None, axis=axis).name
        d = self.node("DequantizeLinear", [wn, sn, zn], wd, axis=axis)
        return wd, d.name, ws

    def bias(self, m, xs, ws, style):
        bf = (self.rng.standard_normal(m) * 0.5).astype(F32)
        if style == "ort":
            bsc = (F32(xs) * ws).astype(F32)
            bq = np.clip(np.rint(bf.astype(np.float64) / bsc.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
            d = self.node("DequantizeLinear", [self.const(bq, "b"), self.const(bsc, "bs"),
                                               self.const(np.zeros(m, np.int32), "bz")],
                          (bq.astype(np.float64) * bsc).astype(F32), axis=0)
            return d.val, d.name
        return bf, self.const(bf, "bf")

    def conv(self, x, xs, m, k=3, stride=1, pad=1, dil=1, group=1, style="ort", bias=True,
             wdt=TP.INT8):
        c = x.val.shape[1]
        wd, wn, ws = self.weights((m, c // group, k, k), 0, style, wdt)
        ins = [x.name, wn]
        bv = None
        if bias:
            bv, bn = self.bias(m, xs, ws, style)
            ins.append(bn)
        p = [pad] * 4
        y = conv_np(x.val, wd, bv, stride, p, dil, group)
        return self.node("Conv", ins, y, kernel_shape=[k, k], strides=[stride, stride], pads=p,
                         dilations=[dil, dil], group=group)

    def matmul(self, x, xs, n, style="ort", bias=True):
        kk = x.val.shape[-1]
        wd, wn, ws = self.weights((kk, n), 1, style)
        y = self.node("MatMul", [x.name, wn], (x.val @ wd).astype(F32))
        if bias:
            bv, bn = self.bias(n, xs, ws, "torch")
            y = self.node("Add", [y.name, bn], (y.val + bv).astype(F32))
        return y

    def gemm(self, x, xs, n, style="ort"):
        kk = x.val.shape[-1]
        wd, wn, ws = self.weights((n, kk), 0, style)
        bv, bn = self.bias(n, xs, ws, style)
        return self.node("Gemm", [x.name, wn, bn], (x.val @ wd.T + bv).astype(F32), transB=1)

    def T(self, name):
        return T(name, None)

    def op(self, op, ts, val, **attrs):
        return self.node(op, [t.name for t in ts], val, **attrs)

    def out(self, t):
        self.outputs.append(h.make_tensor_value_info(t.name, TP.FLOAT, list(t.val.shape)))
        t.out_scale = getattr(t, "s", None)

    def model(self):
        g = h.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
        m.ir_version = 10
        return m


def avgpool_np(x, k, s, p):
    """count_include_pad = 0"""
    n, c, hh, ww = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    one = np.pad(np.ones((hh, ww), F32), p)
    oh, ow = (hh + 2 * p - k) // s + 1, (ww + 2 * p - k) // s + 1
    y = np.zeros((n, c, oh, ow), F32)
    cnt = np.zeros((oh, ow), F32)
    for i in range(k):
        for j in range(k):
            y += xp[:, :, i:i + s * oh:s, j:j + s * ow:s]
            cnt += one[i:i + s * oh:s, j:j + s * ow:s]
    return (y / cnt).astype(F32)


def maxpool_np(x, k, s):
    n, c, hh, ww = x.shape
    oh, ow = (hh - k) // s + 1, (ww - k) // s + 1
    y = np.full((n, c, oh, ow), -np.inf, F32)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, x[:, :, i:i + s * oh:s, j:j + s * ow:s])
    return y


# ---- the models: (builder function, expected integer ops, single rounding, float ops allowed) ----

MODELS = {}


def model(name, expect, single=True, float_ok=()):
    def deco(fn):
        MODELS[name] = (fn, expect, single, float_ok)
        return fn
    return deco


@model("conv3x3_i16_relu", {"qconv": 1}, single=True)
def _(b):
    xq = b.q(b.inp((1, 16, 10, 10)), TP.INT16)
    x = b.dq(xq)
    c = b.conv(x, xq.s, 24)
    r = b.op("Relu", [c], np.maximum(c.val, 0))
    return b.dq(b.q(r, TP.INT16))


@model("conv3x3_u16_asym_torch", {"qconv": 1})
def _(b):
    xq = b.q(b.inp((2, 8, 9, 7)), TP.UINT16)
    x = b.dq(xq)
    c = b.conv(x, xq.s, 20, style="torch")
    return b.dq(b.q(c, TP.UINT16))


@model("conv_u16_relu_out_u16", {"qconv": 1})
def _(b):
    """PyTorch-style relu output quantizer (uint16, zero point 0): the relu folds away."""
    xq = b.q(b.inp((1, 8, 8, 8), "pos"), TP.UINT16)
    x = b.dq(xq)
    c = b.conv(x, xq.s, 16, style="torch")
    r = b.op("Relu", [c], np.maximum(c.val, 0))
    return b.dq(b.q(r, TP.UINT16))


@model("conv_wide_k2304_u16", {"qconv": 1})
def _(b):
    """K = 3*3*256 with full-range uint16 inputs (zero point 0): the int64 accumulator."""
    xin = b.inp((1, 256, 6, 6), "pos")
    xin.val[:, :, :2, :] = xin.val.max()  # two rows of the far end
    xq = b.q(xin, TP.UINT16)
    x = b.dq(xq)
    c = b.conv(x, xq.s, 32, bias=True)
    return b.dq(b.q(c, TP.INT16))


@model("conv_wide_1x1_i16_c2048", {"qconv": 1})
def _(b):
    xin = b.inp((1, 2048, 3, 3))
    xin.val[:, :, 0, :] = np.sign(xin.val[:, :, 0, :]) * np.abs(xin.val).max()
    xq = b.q(xin, TP.INT16)
    c = b.conv(b.dq(xq), xq.s, 24, k=1, pad=0)
    return b.dq(b.q(c, TP.INT16))


@model("conv_1x1_stride2_i16", {"qconv": 1})
def _(b):
    xq = b.q(b.inp((1, 32, 9, 9)), TP.INT16)
    c = b.conv(b.dq(xq), xq.s, 40, k=1, stride=2, pad=0)
    return b.dq(b.q(c, TP.INT16))


@model("conv_dil2_pad2_u16", {"qconv": 1})
def _(b):
    xq = b.q(b.inp((1, 12, 11, 11)), TP.UINT16)
    c = b.conv(b.dq(xq), xq.s, 8, k=3, pad=2, dil=2)
    return b.dq(b.q(c, TP.UINT16))


@model("conv_grouped_i16", {"qconv": 1})
def _(b):
    xq = b.q(b.inp((1, 16, 8, 8)), TP.INT16)
    c = b.conv(b.dq(xq), xq.s, 32, group=4)
    return b.dq(b.q(c, TP.INT16))


@model("conv_depthwise_u16", {"qconv": 1})
def _(b):
    xq = b.q(b.inp((1, 24, 9, 9)), TP.UINT16)
    c = b.conv(b.dq(xq), xq.s, 24, group=24, stride=2)
    return b.dq(b.q(c, TP.UINT16))


@model("conv_u8_weights_i16", {"qconv": 1})
def _(b):
    """uint8 weights with zero point 128 (the row sums of A)."""
    xq = b.q(b.inp((1, 8, 7, 7)), TP.INT16)
    c = b.conv(b.dq(xq), xq.s, 12, wdt=TP.UINT8)
    return b.dq(b.q(c, TP.INT16))


@model("conv_i16_to_u8", {"qconv": 1})
def _(b):
    xq = b.q(b.inp((1, 16, 8, 8)), TP.INT16)
    c = b.conv(b.dq(xq), xq.s, 16)
    r = b.op("Relu", [c], np.maximum(c.val, 0))
    return b.dq(b.q(r, TP.UINT8))


@model("conv_u8_to_i16", {"qconv": 1})
def _(b):
    xq = b.q(b.inp((1, 16, 8, 8)), TP.UINT8)
    c = b.conv(b.dq(xq), xq.s, 16)
    return b.dq(b.q(c, TP.INT16))


@model("conv_i16_f32_out", {"qconv": 1})
def _(b):
    """No output quantizer (TensorRT style): the f32 epilogue of the int64 accumulator."""
    xq = b.q(b.inp((1, 64, 6, 6)), TP.INT16)
    return b.conv(b.dq(xq), xq.s, 16)


@model("matmul_i16_bias", {"qmatmul": 1})
def _(b):
    xq = b.q(b.inp((2, 5, 96)), TP.INT16)
    y = b.matmul(b.dq(xq), xq.s, 48)
    return b.dq(b.q(y, TP.INT16))


@model("gemm_u16_ort", {"qmatmul": 1})
def _(b):
    xq = b.q(b.inp((7, 130)), TP.UINT16)
    y = b.gemm(b.dq(xq), xq.s, 33)
    return b.dq(b.q(y, TP.UINT16))


@model("residual_add_relu_i16", {"qconv": 2, "qadd": 1}, single=False)
def _(b):
    xq = b.q(b.inp((1, 16, 8, 8)), TP.INT16)
    x = b.dq(xq)
    c1 = b.conv(x, xq.s, 16)
    r1 = b.op("Relu", [c1], np.maximum(c1.val, 0))
    a = b.q(r1, TP.INT16)
    c2 = b.conv(b.dq(a), a.s, 16)
    c2q = b.q(c2, TP.INT16)
    s = b.op("Add", [b.dq(c2q), x], b.dq(c2q).val + x.val)
    r = b.op("Relu", [s], np.maximum(s.val, 0))
    return b.dq(b.q(r, TP.INT16))


@model("add_mul_sub_i16", {"qadd": 1, "qmul": 1, "qsub": 1}, single=False)
def _(b):
    aq = b.q(b.inp((1, 4, 6, 6)), TP.INT16)
    bq = b.q(b.inp((1, 4, 6, 6), "pos"), TP.UINT16)
    a, c = b.dq(aq), b.dq(bq)
    s = b.op("Add", [a, c], a.val + c.val)
    m = b.op("Mul", [a, c], a.val * c.val)
    sq, mq = b.q(s, TP.INT16), b.q(m, TP.INT16)
    d = b.op("Sub", [b.dq(sq), b.dq(mq)], b.dq(sq).val - b.dq(mq).val)
    return b.dq(b.q(d, TP.INT16))


@model("concat_u8_i16", {"concat": 1, "requantize": 2})
def _(b):
    aq = b.q(b.inp((1, 3, 5, 5), "pos"), TP.UINT8)
    cq = b.q(b.inp((1, 5, 5, 5)), TP.INT16)
    a, c = b.dq(aq), b.dq(cq)
    k = b.op("Concat", [a, c], np.concatenate([a.val, c.val], 1), axis=1)
    return b.dq(b.q(k, TP.INT16))


@model("pools_i16", {"maxpool": 1, "qavgpool": 2, "qreduce_mean": 1}, single=False)
def _(b):
    xq = b.q(b.inp((1, 6, 9, 9)), TP.INT16)
    x = b.dq(xq)
    mp = b.op("MaxPool", [x], maxpool_np(x.val, 3, 2), kernel_shape=[3, 3], strides=[2, 2])
    mpq = b.q(mp, TP.INT16, xq.s, xq.z)
    m = b.dq(mpq)
    ap = b.op("AveragePool", [m], avgpool_np(m.val, 2, 1, 1), kernel_shape=[2, 2],
              pads=[1, 1, 1, 1], count_include_pad=0)
    apq = b.q(ap, TP.INT16)
    a = b.dq(apq)
    g = b.op("GlobalAveragePool", [a], a.val.mean(axis=(2, 3), keepdims=True))
    gq = b.q(g, TP.INT16)
    rm = b.op("ReduceMean", [a, b.T(b.const(np.array([2, 3], np.int64)))],
              a.val.mean(axis=(2, 3), keepdims=True), keepdims=1)
    rmq = b.q(rm, TP.UINT16)
    o = b.op("Add", [b.dq(gq), b.dq(rmq)], b.dq(gq).val + b.dq(rmq).val)
    return b.dq(b.q(o, TP.INT16))


@model("relu_clip_16", {"requantize": 2})
def _(b):
    xq = b.q(b.inp((1, 4, 7, 7)), TP.INT16)
    x = b.dq(xq)
    r = b.op("Relu", [x], np.maximum(x.val, 0))
    rq = b.q(r, TP.UINT16)
    c = b.op("Clip", [b.dq(rq), b.T(b.const(np.array(0.25, F32))), b.T(b.const(np.array(1.5, F32)))],
             None)
    c.val = np.clip(b.dq(rq).val, 0.25, 1.5)
    return b.dq(b.q(c, TP.UINT8))


@model("requant_u8_i16_u8", {"requantize": 2})
def _(b):
    xq = b.q(b.inp((1, 3, 6, 6)), TP.UINT8)
    yq = b.q(b.dq(xq), TP.INT16)
    return b.dq(b.q(b.dq(yq), TP.UINT8, xq.s * 1.5, 100))


@model("convtranspose_i16_stays_float", {}, float_ok=("ConvTranspose",))
def _(b):
    xq = b.q(b.inp((1, 4, 5, 5)), TP.INT16)
    x = b.dq(xq)
    wd, wn, ws = b.weights((4, 6, 3, 3), 1, "ort")
    y = b.node("ConvTranspose", [x.name, wn], np.ones((1, 6, 7, 7), F32))
    return b.dq(b.q(y, TP.INT16, F32(0.001), 0))


@model("net_a16w8", {"qconv": 4, "qadd": 1, "qmatmul": 1}, single=False)
def _(b):
    """Stem conv, maxpool, a residual block, a strided conv, global pool, classifier."""
    xq = b.q(b.inp((1, 3, 16, 16)), TP.INT16)
    c = b.conv(b.dq(xq), xq.s, 16, stride=1)
    r = b.op("Relu", [c], np.maximum(c.val, 0))
    rq = b.q(r, TP.INT16)
    mp = b.op("MaxPool", [b.dq(rq)], maxpool_np(b.dq(rq).val, 2, 2), kernel_shape=[2, 2],
              strides=[2, 2])
    mq = b.q(mp, TP.INT16, rq.s, rq.z)
    x = b.dq(mq)
    c1 = b.conv(x, mq.s, 16)
    r1q = b.q(b.op("Relu", [c1], np.maximum(c1.val, 0)), TP.INT16)
    c2 = b.conv(b.dq(r1q), r1q.s, 16)
    c2q = b.q(c2, TP.INT16)
    s = b.op("Add", [b.dq(c2q), x], b.dq(c2q).val + x.val)
    sq = b.q(b.op("Relu", [s], np.maximum(s.val, 0)), TP.INT16)
    c3 = b.conv(b.dq(sq), sq.s, 32, stride=2)
    c3q = b.q(b.op("Relu", [c3], np.maximum(c3.val, 0)), TP.INT16)
    gp = b.op("GlobalAveragePool", [b.dq(c3q)], b.dq(c3q).val.mean(axis=(2, 3), keepdims=True))
    gq = b.q(gp, TP.INT16)
    fl = b.op("Flatten", [b.dq(gq)], b.dq(gq).val.reshape(1, 32))
    y = b.gemm(fl, gq.s, 10)
    return b.dq(b.q(y, TP.INT16))


# ---- running ----

def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def host_isas():
    flags = set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    isas = ["generic"]
    if "avx2" in flags:
        isas.append("avx2")
    if "avx512_vnni" in flags and "avx512bw" in flags:
        isas.append("avx512vnni")
    return isas


class Checks:
    def __init__(self):
        self.n = self.bad = 0

    def check(self, ok, what):
        self.n += 1
        self.bad += not ok
        print("%s %s" % ("PASS" if ok else "FAIL", what), flush=True)


def make(name, seed):
    fn, expect, single, float_ok = MODELS[name]
    b = B(name, seed)
    y = fn(b)
    b.out(y)
    return b, y, expect, single, float_ok


def out_steps(a, c, step):
    if step is None:
        d = np.abs(a.astype(np.float64) - c.astype(np.float64))
        return float(d.max()) / max(float(np.abs(a).max()), 1e-30), "relative"
    return float(np.abs(a.astype(np.float64) - c.astype(np.float64)).max()) / float(step), "steps"


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    qdqc = args.pop(0)
    opts = {}
    while args:
        a = args.pop(0)
        if a in ("--out", "--only", "--isa", "--write", "--ir") and args:
            opts[a] = args.pop(0)
        elif a == "--list":
            opts[a] = True
        else:
            print("a16w8.py: unknown argument %s" % a, file=sys.stderr)
            return 2
    names = list(MODELS)
    if "--list" in opts:
        print("\n".join(names))
        return 0
    if "--only" in opts:
        names = [n for n in opts["--only"].split(",") if n]
    isas = opts["--isa"].split(",") if "--isa" in opts else host_isas()
    out = opts.get("--out") or tempfile.mkdtemp(prefix="a16w8_")
    os.makedirs(out, exist_ok=True)
    if "--ir" in opts:
        b, _, _, _, _ = make(opts["--ir"], 1)
        p = os.path.join(out, opts["--ir"] + ".onnx")
        onnx.save(b.model(), p)
        rc, text = run([qdqc, p, "-o", "-"])
        print(text, end="")
        return rc
    ck = Checks()
    for i, name in enumerate(names):
        b, y, expect, single, float_ok = make(name, 100 + i)
        path = os.path.join(opts.get("--write", out), name + ".onnx")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        onnx.save(b.model(), path)
        inputs = []
        for k, v in b.feeds.items():
            f = os.path.join(out, "%s.%s.npy" % (name, k))
            np.save(f, v)
            inputs += ["--input", "%s=%s" % (k, f)]
        # fold: the report
        rc, rep = run([qdqc, path, "--report"])
        ok = rc == 0
        for op, cnt in expect.items():
            lines = [ln for ln in rep.splitlines() if ": %s" % op in ln and "(boundary)" not in ln]
            got = len(lines)
            ok = ok and got == cnt
            if op in ("qconv", "qmatmul"):
                ok = ok and all("int16x" in ln or "uint16x" in ln or "int8x" in ln for ln in lines)
        floats = [ln for ln in rep.splitlines() if ": float " in ln and
                  any(o in ln for o in ("float conv", "float matmul", "float gemm"))]
        ok = ok and (bool(floats) == bool(float_ok))
        ck.check(ok, "%s fold %s" % (name, ",".join("%s=%d" % kv for kv in expect.items())))
        if not ok:
            print(rep)
        res = {}
        for variant, flags in (("float", []), ("fixed", ["--requant=fixed"])):
            ref = os.path.join(out, name, variant, "ref")
            lit = os.path.join(out, name, variant, "lit")
            rc1, t1 = run([qdqc, "run", path, "--engine=ref", "--output-dir", ref] + flags + inputs)
            rc2, t2 = run([qdqc, "run", path, "--engine=ref", "--passes=", "--output-dir", lit] +
                          flags + inputs)
            if rc1 or rc2:
                ck.check(False, "%s %s ref runs: %s" % (name, variant, (t1 + t2)[-400:]))
                continue
            a = np.load(os.path.join(ref, y.name + ".npy"))
            c = np.load(os.path.join(lit, y.name + ".npy"))
            step = None  # the output dequantize's scale (none: a float output)
            src = [n for n in b.nodes if n.output[0] == y.name][0]
            if src.op_type == "DequantizeLinear":
                sv = [t for t in b.inits if t.name == src.input[1]][0]
                step = float(nh.to_array(sv))
            d, unit = out_steps(a, c, step)
            if single:
                ck.check(d <= 1.0 + 1e-3, "%s %s literal vs integer within 1 step (max %.3g %s)"
                         % (name, variant, d, unit))
            else:
                print("INFO %s %s literal vs integer: max %.3g %s" % (name, variant, d, unit))
            res[variant] = a
            for j, isa in enumerate(isas):
                for threads in ([1, 2] if j == 0 else [1]):
                    jd = os.path.join(out, name, variant, "jit_%s_%d" % (isa, threads))
                    rc, t = run([qdqc, "run", path, "--engine=jit", "--isa=" + isa,
                                 "--threads", str(threads), "--output-dir", jd] + flags + inputs)
                    if rc:
                        ck.check(False, "%s %s jit %s: %s" % (name, variant, isa, t[-400:]))
                        continue
                    jv = np.load(os.path.join(jd, y.name + ".npy"))
                    same = jv.tobytes() == a.tobytes()
                    ck.check(same, "%s %s jit == ref (%s, %d thread%s)%s" % (
                        name, variant, isa, threads, "s" if threads > 1 else "",
                        "" if same else ": %d of %d differ" % (int((jv != a).sum()), a.size)))
        # text IR round trip
        ir1 = os.path.join(out, name + ".qir")
        rc, t = run([qdqc, path, "-o", ir1])
        rc2, t2 = run([qdqc, "opt", ir1, "--passes=", "-o", "-"]) if rc == 0 else (1, t)
        ok = rc == 0 and rc2 == 0 and t2 == open(ir1).read()
        ck.check(ok, "%s text IR round trip" % name)
    print("%d checks, %d failed" % (ck.n, ck.bad))
    return 1 if ck.bad else 0


if __name__ == "__main__":
    sys.exit(main())
