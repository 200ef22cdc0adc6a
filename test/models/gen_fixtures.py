#!/usr/bin/python3
"""Generate the QDQ ONNX fixture models used by qdqc's tests.

Run with Debian's interpreter (python3-onnx 1.12, python3-numpy):

    /usr/bin/python3 test/models/gen_fixtures.py                 # writes test/models/fixtures/*.onnx
    /usr/bin/python3 test/models/gen_fixtures.py --out DIR       # somewhere else
    /usr/bin/python3 test/models/gen_fixtures.py --full DIR      # also the 224x224 ResNet-18 /
                                                                 # MobileNetV2 benchmark models (not committed)
    /usr/bin/python3 test/models/gen_fixtures.py --inputs DIR    # the calibration input (and numpy
                                                                 # reference output) of every model as .npy
    /usr/bin/python3 test/models/gen_fixtures.py --check-ort     # run every fixture in ONNX Runtime
                                                                 # (bench/ort_run.py, opt disabled and all)
    /usr/bin/python3 test/models/gen_fixtures.py --list          # names and descriptions

Everything is deterministic: weights come from seeded numpy Generators, activation scales are
calibrated by a float64 numpy forward pass of the (fake-quantized) graph on a seeded input and then
rounded to 12 significant bits, so running the script twice gives byte-identical files.

Three export styles (see /work/shared/DOMAIN.md):
  torch : PyTorch fake-quant export. Per-tensor activation Q->DQ with scale/zero point stored as
          1-element [1]-shaped tensors; weights fp32 constant -> Q(per-channel int8 symmetric,
          axis 0) -> DQ; fp32 bias; explicit Relu / Clip(0, 6) before the Q; torch-like names
          ("/layer1/layer1.0/conv1/Conv_output_0", "onnx::Conv_12").
  ort   : onnxruntime.quantization.quantize_static (QDQ format). Scalar scales/zero points,
          asymmetric activations (uint8 by default) with nonzero zero points, int8 weight
          initializers behind DQ (per-channel axis 0), int32 bias initializer behind DQ with scale
          s_x*s_w[c] and zero point 0, Q after every op; Relu/Clip after Conv removed and folded
          into the following Q's range (zero point at the bottom of the range).
  trt   : TensorRT / pytorch-quantization / ModelOpt. Symmetric int8 everywhere (zero point 0),
          scale = amax/127, fp32 weights behind Q->DQ per channel (ConvTranspose axis 1), fp32
          bias, no Q on Conv outputs: each consumer's input carries its own Q->DQ (a tensor feeding
          two consumers gets two Q nodes), residual Add inputs quantized.
"""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(HERE, "fixtures")
PRODUCER = "qdqc-gen_fixtures"
IR_FOR_OPSET = {13: 7, 14: 7, 17: 8, 21: 10}

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.uint16): TensorProto.UINT16,
}
# 16-bit activations (A16W8) need opset 21 (INT16/UINT16 QuantizeLinear)
QTYPES = {"u8": (0, 255, np.uint8), "i8": (-128, 127, np.int8), "u16": (0, 65535, np.uint16),
          "i16": (-32768, 32767, np.int16)}


# --------------------------------------------------------------------------------------------------
# Reference evaluator (numpy). Float ops run in float64; Q/DQ follow ONNX exactly in float32.
# --------------------------------------------------------------------------------------------------

def _ints(attrs, key, default):
    v = attrs.get(key, default)
    return list(v) if isinstance(v, (list, tuple)) else v


def _bcast_param(p, x, axis):
    """Reshape a per-axis parameter so that it broadcasts along `axis` of x."""
    p = np.asarray(p)
    if p.size == 1:
        return p.reshape(())
    shape = [1] * x.ndim
    shape[axis % x.ndim] = p.size
    return p.reshape(shape)


def ref_quantize(x, scale, zp, axis=1):
    zp = np.zeros((), np.uint8) if zp is None else np.asarray(zp)
    info = np.iinfo(zp.dtype)
    xs = np.asarray(x, np.float32)
    s = _bcast_param(np.asarray(scale, np.float32), xs, axis)
    z = _bcast_param(zp, xs, axis).astype(np.float64)
    y = np.round((xs / s).astype(np.float32)).astype(np.float64) + z  # np.round: half to even
    return np.clip(y, info.min, info.max).astype(zp.dtype)


def ref_dequantize(x, scale, zp, axis=1):
    x = np.asarray(x)
    zp = np.zeros((), x.dtype) if zp is None else np.asarray(zp)
    s = _bcast_param(np.asarray(scale, np.float32), x, axis)
    z = _bcast_param(zp, x, axis).astype(np.int64)
    return ((x.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


def ref_conv(x, w, b, attrs):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    g = attrs.get("group", 1)
    s = _ints(attrs, "strides", [1, 1])
    d = _ints(attrs, "dilations", [1, 1])
    p = _ints(attrs, "pads", [0, 0, 0, 0])
    assert attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
    assert c == cg * g and m % g == 0
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    hp, wp = xp.shape[2], xp.shape[3]
    oh = (hp - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (kw - 1) - 1) // s[1] + 1
    xg = xp.reshape(n, g, cg, hp, wp)
    wg = w.reshape(g, m // g, cg, kh, kw)
    out = np.zeros((n, g, m // g, oh * ow))
    for i in range(kh):
        for j in range(kw):
            patch = xg[:, :, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                       j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]].reshape(n, g, cg, oh * ow)
            if cg == 1 and m == g:  # depthwise: elementwise
                out += wg[None, :, :, 0, i, j, None] * patch
            else:
                out += np.matmul(wg[None, :, :, :, i, j], patch)
    out = out.reshape(n, m, oh, ow)
    if b is not None:
        out += b.astype(np.float64).reshape(1, m, 1, 1)
    return out


def ref_conv_transpose(x, w, b, attrs):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    g = attrs.get("group", 1)
    cg = c // g
    m = mg * g
    s = _ints(attrs, "strides", [1, 1])
    d = _ints(attrs, "dilations", [1, 1])
    p = _ints(attrs, "pads", [0, 0, 0, 0])
    op = _ints(attrs, "output_padding", [0, 0])
    hf = s[0] * (h - 1) + d[0] * (kh - 1) + 1 + op[0]
    wf = s[1] * (wd - 1) + d[1] * (kw - 1) + 1 + op[1]
    full = np.zeros((n, g, mg, hf, wf))
    xg = x.reshape(n, g, cg, h * wd)
    wg = w.reshape(g, cg, mg, kh, kw)
    for i in range(kh):
        for j in range(kw):
            contrib = np.matmul(wg[None, :, :, :, i, j].transpose(0, 1, 3, 2), xg).reshape(n, g, mg, h, wd)
            full[:, :, :, i * d[0]: i * d[0] + s[0] * (h - 1) + 1: s[0],
                 j * d[1]: j * d[1] + s[1] * (wd - 1) + 1: s[1]] += contrib
    full = full.reshape(n, m, hf, wf)
    out = full[:, :, p[0]: hf - p[2], p[1]: wf - p[3]]
    if b is not None:
        out = out + b.astype(np.float64).reshape(1, m, 1, 1)
    return out


def _pool_windows(x, attrs, pad_value):
    k = _ints(attrs, "kernel_shape", None)
    s = _ints(attrs, "strides", [1, 1])
    p = _ints(attrs, "pads", [0, 0, 0, 0])
    assert attrs.get("ceil_mode", 0) == 0
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])), constant_values=pad_value)
    oh = (xp.shape[2] - k[0]) // s[0] + 1
    ow = (xp.shape[3] - k[1]) // s[1] + 1
    for i in range(k[0]):
        for j in range(k[1]):
            yield xp[:, :, i: i + s[0] * (oh - 1) + 1: s[0], j: j + s[1] * (ow - 1) + 1: s[1]]


def ref_maxpool(x, attrs):
    out = None
    for win in _pool_windows(x.astype(np.float64), attrs, -np.inf):
        out = win.copy() if out is None else np.maximum(out, win)
    return out


def ref_avgpool(x, attrs):
    tot = None
    cnt = None
    ones = np.ones((1, 1) + x.shape[2:])
    include = attrs.get("count_include_pad", 0)
    for win, one in zip(_pool_windows(x.astype(np.float64), attrs, 0.0), _pool_windows(ones, attrs, 1.0 if include else 0.0)):
        tot = win.copy() if tot is None else tot + win
        cnt = one.copy() if cnt is None else cnt + one
    return tot / cnt


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def ref_eval(op, ins, attrs):
    """Evaluate one ONNX node. `ins` are numpy arrays (None for omitted optional inputs)."""
    f = lambda v: np.asarray(v, np.float64)  # noqa: E731
    if op == "QuantizeLinear":
        return [ref_quantize(ins[0], ins[1], ins[2] if len(ins) > 2 else None, attrs.get("axis", 1))]
    if op == "DequantizeLinear":
        return [ref_dequantize(ins[0], ins[1], ins[2] if len(ins) > 2 else None, attrs.get("axis", 1))]
    if op == "Conv":
        return [ref_conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, attrs)]
    if op == "ConvTranspose":
        return [ref_conv_transpose(ins[0], ins[1], ins[2] if len(ins) > 2 else None, attrs)]
    if op == "MatMul":
        return [np.matmul(f(ins[0]), f(ins[1]))]
    if op == "Gemm":
        a, b = f(ins[0]), f(ins[1])
        if attrs.get("transA", 0):
            a = a.T
        if attrs.get("transB", 0):
            b = b.T
        y = attrs.get("alpha", 1.0) * (a @ b)
        if len(ins) > 2 and ins[2] is not None:
            y = y + attrs.get("beta", 1.0) * f(ins[2])
        return [y]
    if op in ("Add", "Sub", "Mul", "Div"):
        a, b = ins
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            r = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op](a, b) if op != "Div" else a // b
            return [r.astype(a.dtype)]
        return [{"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](f(a), f(b))]
    if op == "Relu":
        return [np.maximum(f(ins[0]), 0.0)]
    if op == "Clip":
        lo = -np.inf if len(ins) < 2 or ins[1] is None else float(ins[1])
        hi = np.inf if len(ins) < 3 or ins[2] is None else float(ins[2])
        return [np.clip(f(ins[0]), lo, hi)]
    if op == "LeakyRelu":
        x = f(ins[0])
        return [np.where(x >= 0, x, attrs.get("alpha", 0.01) * x)]
    if op == "Sigmoid":
        return [1.0 / (1.0 + np.exp(-f(ins[0])))]
    if op == "Tanh":
        return [np.tanh(f(ins[0]))]
    if op == "HardSigmoid":
        return [np.clip(attrs.get("alpha", 0.2) * f(ins[0]) + attrs.get("beta", 0.5), 0.0, 1.0)]
    if op == "HardSwish":
        x = f(ins[0])
        return [x * np.clip(x / 6.0 + 0.5, 0.0, 1.0)]
    if op == "Softmax":
        return [_softmax(f(ins[0]), attrs.get("axis", -1))]
    if op == "BatchNormalization":
        x, g, b, m, v = (f(t) for t in ins)
        sh = (1, -1) + (1,) * (x.ndim - 2)
        eps = attrs.get("epsilon", 1e-5)
        return [(x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * g.reshape(sh) + b.reshape(sh)]
    if op == "MaxPool":
        return [ref_maxpool(ins[0], attrs)]
    if op == "AveragePool":
        return [ref_avgpool(ins[0], attrs)]
    if op == "GlobalAveragePool":
        return [np.mean(f(ins[0]), axis=(2, 3), keepdims=True)]
    if op == "Concat":
        return [np.concatenate(ins, axis=attrs["axis"])]
    if op == "Reshape":
        shape = [int(v) for v in ins[1]]
        shape = [ins[0].shape[i] if v == 0 else v for i, v in enumerate(shape)]
        return [ins[0].reshape(shape)]
    if op == "Flatten":
        ax = attrs.get("axis", 1)
        x = ins[0]
        return [x.reshape(int(np.prod(x.shape[:ax])), -1)]
    if op == "Transpose":
        return [np.transpose(ins[0], attrs.get("perm"))]
    if op == "Identity":
        return [ins[0]]
    if op == "Shape":
        return [np.array(ins[0].shape, np.int64)]
    if op == "Gather":
        return [np.take(ins[0], ins[1], axis=attrs.get("axis", 0))]
    if op == "Unsqueeze":
        x = ins[0]
        for a in sorted(int(v) for v in ins[1]):
            x = np.expand_dims(x, a)
        return [x]
    # transformer-export ops: comparisons, logic, selection, reductions
    if op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"):
        fn = {"Equal": np.equal, "Less": np.less, "LessOrEqual": np.less_equal,
              "Greater": np.greater, "GreaterOrEqual": np.greater_equal,
              "And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}[op]
        return [fn(ins[0], ins[1])]
    if op == "Not":
        return [np.logical_not(ins[0])]
    if op == "Where":
        return [np.where(ins[0], ins[1], ins[2])]
    if op == "Expand":
        return [ins[0] * np.ones([int(v) for v in ins[1]], ins[0].dtype)]
    if op == "Tile":
        return [np.tile(ins[0], [int(v) for v in ins[1]])]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2]).astype(ins[0].dtype)]
    if op == "Cast":
        dt = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64,
              TensorProto.INT32: np.int32, TensorProto.BOOL: np.bool_}[attrs["to"]]
        return [np.asarray(ins[0]).astype(dt)]
    if op in ("ReduceSum", "ReduceMax", "ReduceMin"):
        axes = tuple(int(v) for v in (ins[1] if len(ins) > 1 and ins[1] is not None
                                       else attrs.get("axes", range(ins[0].ndim))))
        fn = {"ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min}[op]
        x = f(ins[0]) if ins[0].dtype.kind == "f" else ins[0]
        return [fn(x, axis=axes, keepdims=bool(attrs.get("keepdims", 1)))]
    if op == "ArgMax":
        r = np.argmax(ins[0], axis=attrs.get("axis", 0))
        if attrs.get("keepdims", 1):
            r = np.expand_dims(r, attrs.get("axis", 0))
        return [r.astype(np.int64)]
    if op == "Einsum":
        return [np.einsum(attrs["equation"].decode() if isinstance(attrs["equation"], bytes)
                          else attrs["equation"], *[f(t) for t in ins])]
    raise NotImplementedError(op)


def run_model(model, feeds):
    """Run a whole ModelProto with the reference evaluator (nodes must be topologically sorted)."""
    vals = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    vals.update(feeds)
    for nd in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in nd.attribute}
        ins = [vals[i] if i else None for i in nd.input]
        for name, v in zip(nd.output, ref_eval(nd.op_type, ins, attrs)):
            vals[name] = v
    return {o.name: np.asarray(vals[o.name]).astype(np.float32) if vals[o.name].dtype == np.float64 else vals[o.name]
            for o in model.graph.output}


# --------------------------------------------------------------------------------------------------
# Graph builder that evaluates as it builds (so scales can be calibrated from real values).
# --------------------------------------------------------------------------------------------------

def round_scale(s):
    """Round a positive scale to 12 significant bits (keeps files stable across BLAS builds)."""
    s = float(s)
    if s <= 0 or not np.isfinite(s):
        return np.float32(1.0)
    m, e = np.frexp(s)
    return np.float32(np.ldexp(np.round(m * 4096.0) / 4096.0, e))


class Builder:
    def __init__(self, name, style="ort", act="u8", opset=13, seed=0, doc=""):
        assert style in ("ort", "torch", "trt")
        self.name = name
        self.style = style
        self.act = "i8" if style == "trt" else act
        self.opset = opset
        self.doc = doc
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.vals = {}
        self.qinfo = {}      # DQ output name -> (scale, zero point) of the per-tensor quantization
        self.pending = {}    # ort style: tensor -> activation folded into its next Q ("relu"/"relu6")
        self.used = set()
        self.counter = 0
        self.scope = []
        self.feeds = {}

    # names ----------------------------------------------------------------------------------------
    def uniq(self, base):
        name = base
        k = 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name

    def tname(self, op, kind="output"):
        """Name for a node output in the builder's style."""
        self.counter += 1
        if self.style == "torch":
            path = "/" + "/".join(self.scope) + "/" if self.scope else "/"
            return self.uniq(f"{path}{op}_{kind}_0")
        prefix = ".".join(self.scope) + "." if self.scope else ""
        return self.uniq(f"{prefix}{op.lower()}_{self.counter}")

    def iname(self, base):
        """Initializer name."""
        self.counter += 1
        if self.style == "torch" and base.startswith("onnx::"):
            return self.uniq(f"{base}_{self.counter}")
        prefix = ".".join(self.scope) + "." if self.scope else ""
        return self.uniq(prefix + base)

    class _Scope:
        def __init__(self, b, s):
            self.b, self.s = b, s

        def __enter__(self):
            self.b.scope.append(self.s)

        def __exit__(self, *a):
            self.b.scope.pop()

    def under(self, s):
        return Builder._Scope(self, s)

    # graph ----------------------------------------------------------------------------------------
    def input(self, name, shape, data=None):
        if data is None:
            data = self.rng.standard_normal(shape).astype(np.float32)
        self.used.add(name)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.vals[name] = data
        self.feeds[name] = data
        return name

    def init(self, base, arr, exact_name=False):
        arr = np.asarray(arr)
        name = base if exact_name else self.iname(base)
        if exact_name:
            self.used.add(name)
        self.inits.append(numpy_helper.from_array(arr, name))
        self.vals[name] = arr
        return name

    def node(self, op, ins, nout=1, outs=None, domain=None, **attrs):
        if outs is None:
            outs = [self.tname(op) if nout == 1 else self.tname(op, f"output{i}") for i in range(nout)]
        node_name = self.uniq(("/" + "/".join(self.scope) + "/" if self.style == "torch" else "") + f"{op}_{self.counter}")
        self.nodes.append(helper.make_node(op, list(ins), list(outs), name=node_name, **attrs))
        vals = ref_eval(op, [self.vals[i] if i else None for i in ins], attrs)
        for o, v in zip(outs, vals):
            self.vals[o] = v
        return outs[0] if len(outs) == 1 else outs

    def output(self, name, out_name=None):
        if out_name is not None and out_name != name and name not in self.feeds:
            # rename the producing node's output
            out_name = self.uniq(out_name)
            for nd in self.nodes:
                for i, o in enumerate(nd.output):
                    if o == name:
                        nd.output[i] = out_name
                for i, o in enumerate(nd.input):
                    if o == name:
                        nd.input[i] = out_name
            self.vals[out_name] = self.vals.pop(name)
            if name in self.qinfo:
                self.qinfo[out_name] = self.qinfo.pop(name)
            name = out_name
        v = self.vals[name]
        self.outputs.append(helper.make_tensor_value_info(name, NP_TO_ONNX[np.dtype(np.float32) if v.dtype == np.float64 else v.dtype], list(v.shape)))
        return name

    def model(self):
        Builder.last = self
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(graph, producer_name=PRODUCER, producer_version="1",
                              opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = IR_FOR_OPSET.get(self.opset, 8)
        m.model_version = 1
        if self.doc:
            m.doc_string = self.doc
        return m

    # quantization ---------------------------------------------------------------------------------
    def _pt(self, arr):
        """Per-tensor parameter: [1]-shaped for the torch style, scalar otherwise."""
        arr = np.asarray(arr)
        return arr.reshape([1]) if self.style == "torch" else arr.reshape([])

    def calib(self, x, act=None, sym=None, fold=None):
        """Pick (scale, zero point) for tensor x from its traced values."""
        act = act or self.act
        qmin, qmax, _ = QTYPES[act]
        v = np.asarray(self.vals[x], np.float64)
        if fold == "relu":
            v = np.maximum(v, 0)
        elif fold == "relu6":
            v = np.clip(v, 0, 6)
        sym = (self.style == "trt") if sym is None else sym
        if sym:
            amax = float(np.max(np.abs(v)))
            scale = round_scale(amax / float(qmax))  # 127 for i8, 255 for u8
            zp = 0
        else:
            lo, hi = min(0.0, float(v.min())), max(0.0, float(v.max()))
            if fold:
                lo = 0.0
            scale = round_scale((hi - lo) / (qmax - qmin))
            zp = int(np.clip(np.round(qmin - lo / float(scale)), qmin, qmax))
        return scale, zp

    def qdq(self, x, act=None, sym=None, scale=None, zp=None, like=None):
        """Insert QuantizeLinear -> DequantizeLinear on x; returns the DQ output.
        `like` copies the quantization parameters of another DQ output (pass-through ops)."""
        act = act or self.act
        fold = self.pending.pop(x, None)
        if like is not None:
            scale, zp = self.qinfo[like]
        if scale is None:
            scale, zp = self.calib(x, act, sym, fold)
        dt = QTYPES[act][2]
        s = self.init("onnx::QuantizeLinear" if self.style == "torch" else f"{x.split('/')[-1]}_scale", self._pt(np.float32(scale)))
        z = self.init("onnx::QuantizeLinear" if self.style == "torch" else f"{x.split('/')[-1]}_zero_point", self._pt(np.array(zp, dt)))
        q = self.node("QuantizeLinear", [x, s, z])
        d = self.node("DequantizeLinear", [q, s, z])
        self.qinfo[d] = (np.float32(scale), int(zp))
        return d

    def fold_act(self, x, kind):
        """Relu/Relu6 after an op: explicit node (torch/trt), folded into the next Q (ort)."""
        if self.style == "ort":
            self.pending[x] = kind
            return x
        if kind == "relu":
            return self.node("Relu", [x])
        lo = self.init("onnx::Clip" if self.style == "torch" else "clip_min", np.array(0.0, np.float32))
        hi = self.init("onnx::Clip" if self.style == "torch" else "clip_max", np.array(6.0, np.float32))
        return self.node("Clip", [x, lo, hi])

    def weight(self, w, axis=0, per_channel=True, wdtype="i8", sym=True):
        """Quantized weight behind DQ. Returns (dq name, per-channel scales as float32 array)."""
        w = np.asarray(w, np.float32)
        qmin, qmax, dt = QTYPES[wdtype]
        red = tuple(i for i in range(w.ndim) if i != axis)
        if per_channel:
            if sym:
                amax = np.max(np.abs(w), axis=red)
                scale = (np.maximum(amax, 1e-8) / np.float32(127.0 if wdtype == "i8" else 255.0)).astype(np.float32)
                zp = np.zeros(scale.shape, dt)
            else:
                lo = np.minimum(np.min(w, axis=red), 0)
                hi = np.maximum(np.max(w, axis=red), 0)
                scale = (np.maximum(hi - lo, 1e-8) / np.float32(qmax - qmin)).astype(np.float32)
                zp = np.clip(np.round(qmin - lo / scale), qmin, qmax).astype(dt)
            sc_arr, zp_arr = scale, zp
        else:
            amax = float(np.max(np.abs(w)))
            scale = np.float32(amax / (127.0 if wdtype == "i8" else 255.0))
            zp = np.array(0, dt)
            sc_arr, zp_arr = self._pt(scale), self._pt(zp)
        attrs = {"axis": axis} if per_channel else {}
        if self.style == "ort":
            wq = ref_quantize(w, sc_arr, zp_arr, axis)
            wi = self.init("weight_quantized", wq)
            s = self.init("weight_scale", sc_arr)
            z = self.init("weight_zero_point", zp_arr)
            d = self.node("DequantizeLinear", [wi, s, z], **attrs)
        else:
            wi = self.init("weight" if self.style == "trt" else "onnx::Conv", w)
            s = self.init("weight_scale" if self.style == "trt" else "onnx::QuantizeLinear", sc_arr)
            z = self.init("weight_zero_point" if self.style == "trt" else "onnx::QuantizeLinear", zp_arr)
            q = self.node("QuantizeLinear", [wi, s, z], **attrs)
            d = self.node("DequantizeLinear", [q, s, z], **attrs)
        return d, np.broadcast_to(np.asarray(scale, np.float32), (w.shape[axis],)).copy()

    def bias(self, b, x, wscale):
        """fp32 bias (torch/trt) or int32 bias behind DQ with scale s_x*s_w (ort)."""
        b = np.asarray(b, np.float32)
        if self.style != "ort" or x not in self.qinfo:
            return self.init("bias" if self.style != "torch" else "onnx::Conv", b)
        sx = self.qinfo[x][0]
        bs = (np.float32(sx) * wscale).astype(np.float32)
        bq = np.clip(np.round(b / bs), -2**31, 2**31 - 1).astype(np.int32)
        bi = self.init("bias_quantized", bq)
        if np.all(bs == bs[0]):  # per-tensor weights: per-tensor bias
            s = self.init("bias_scale", self._pt(bs[:1]))
            z = self.init("bias_zero_point", self._pt(np.zeros(1, np.int32)))
            return self.node("DequantizeLinear", [bi, s, z])
        s = self.init("bias_scale", bs)
        z = self.init("bias_zero_point", np.zeros(bs.shape, np.int32))
        return self.node("DequantizeLinear", [bi, s, z], axis=0)

    # layers ---------------------------------------------------------------------------------------
    def conv(self, x, cout, k=3, stride=1, pad=None, group=1, dil=1, bias=True, per_channel=True,
             wdtype="i8", wsym=True, weights=None, quant_w=True):
        cin = self.vals[x].shape[1]
        kh, kw = (k, k) if isinstance(k, int) else k
        if pad is None:
            pad = [dil * (kh // 2), dil * (kw // 2), dil * (kh // 2), dil * (kw // 2)]
        elif isinstance(pad, int):
            pad = [pad] * 4
        if weights is None:
            fan_in = cin // group * kh * kw
            w = (self.rng.standard_normal((cout, cin // group, kh, kw)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
            b = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
        else:
            w, b = weights
        if quant_w:
            wd, ws = self.weight(w, 0, per_channel, wdtype, wsym)
        else:
            wd, ws = self.init("weight", w), None
        ins = [x, wd]
        if bias:
            ins.append(self.bias(b, x, ws) if quant_w else self.init("bias", b))
        attrs = dict(kernel_shape=[kh, kw], pads=list(pad), strides=[stride, stride])
        if group != 1:
            attrs["group"] = group
        if dil != 1:
            attrs["dilations"] = [dil, dil]
        return self.node("Conv", ins, **attrs)

    def gemm(self, x, nout, per_channel=True, bias=True):
        k = self.vals[x].shape[1]
        w = (self.rng.standard_normal((nout, k)) * np.sqrt(1.0 / k)).astype(np.float32)
        b = (self.rng.standard_normal(nout) * 0.1).astype(np.float32)
        wd, ws = self.weight(w, 0, per_channel)
        ins = [x, wd] + ([self.bias(b, x, ws)] if bias else [])
        return self.node("Gemm", ins, alpha=1.0, beta=1.0, transB=1)

    def out_q(self, y, act=None):
        """Q->DQ after an op's output unless the style leaves it float (trt)."""
        if self.style == "trt":
            return y
        return self.qdq(y, act)

    def in_q(self, x, act=None):
        """Q->DQ at a consumer's input (trt style only; others already quantized the producer)."""
        if self.style == "trt" and x not in self.qinfo:
            return self.qdq(x, act)
        return x


def check(model):
    # python3-onnx 1.12 knows opsets up to 17: the opset-21 models (16-bit activations) are
    # checked by ONNX Runtime 1.30 instead (--check-ort, test/peer/compare_ort.py)
    if max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) <= 17:
        onnx.checker.check_model(model, full_check=True)
    return model


# --------------------------------------------------------------------------------------------------
# Per-op fixtures. Default layout is the ort style (int8 weight initializers, int32 bias, scalar
# scales) with u8 or i8 (asymmetric) activations; names: <op>[_variant]_<pt|pc>_<u8|i8>.onnx.
# --------------------------------------------------------------------------------------------------

FIXTURES = []  # (file name, description, builder function)


def fixture(name, desc):
    def deco(fn):
        FIXTURES.append((name, desc, fn))
        return fn
    return deco


def _seed(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def single(name, act, fn, shape=(1, 8, 8, 8), style="ort", opset=13, doc=""):
    """input -> Q -> DQ -> fn(...) -> Q -> DQ -> output."""
    b = Builder(name.rsplit(".", 1)[0], style=style, act=act, opset=opset, seed=_seed(name), doc=doc)
    x = b.input("input", shape)
    xq = b.qdq(x)
    y = fn(b, xq)
    if y not in b.qinfo:
        y = b.qdq(y)
    b.output(y, "output")
    return check(b.model())


def _conv_fixture(name, act, pc, doc, **kw):
    shape = kw.pop("shape", (1, 8, 8, 8))
    cout = kw.pop("cout", 8)
    relu = kw.pop("relu", None)
    style = kw.pop("style", "ort")

    def body(b, x):
        y = b.conv(x, cout, per_channel=pc, **kw)
        if relu:
            y = b.fold_act(y, relu)
        return y
    return lambda: single(name, act, body, shape=shape, style=style, doc=doc)


CONV_CASES = [
    # (stem, description, conv kwargs, variants)
    ("conv3x3", "Conv 3x3 pad 1, 8->8 channels, 1x8x8x8", dict(k=3),
     [("pt", "u8"), ("pc", "u8"), ("pt", "i8"), ("pc", "i8")]),
    ("conv1x1", "Conv 1x1 (pointwise), 8->16 channels", dict(k=1, cout=16), [("pc", "u8"), ("pc", "i8")]),
    ("conv3x3s2", "Conv 3x3 stride 2 pad 1 (8x8 -> 4x4)", dict(k=3, stride=2), [("pc", "u8"), ("pc", "i8")]),
    ("convdw", "depthwise Conv 3x3 group=C=8", dict(k=3, group=8), [("pt", "u8"), ("pc", "u8"), ("pc", "i8")]),
    ("convgrp", "grouped Conv 3x3 group=2, 8->8", dict(k=3, group=2), [("pc", "u8"), ("pc", "i8")]),
    ("convdil", "dilated Conv 3x3 dilation 2 pad 2", dict(k=3, dil=2), [("pc", "u8"), ("pc", "i8")]),
    ("conv1x3", "non-square Conv 1x3, pads [0,1,0,1], odd input 1x8x7x9", dict(k=(1, 3), shape=(1, 8, 7, 9)),
     [("pc", "u8")]),
    ("conv5x5nopad", "Conv 5x5 without padding, stride 1, no bias", dict(k=5, pad=0, bias=False), [("pc", "i8")]),
    ("convasympad", "Conv 3x3 stride 2 with asymmetric pads [0,0,1,1] (TF-style SAME)", dict(k=3, stride=2, pad=[0, 0, 1, 1]),
     [("pc", "u8")]),
    ("convwide", "Conv 3x3 3->32 channels on 1x3x16x16 (stem-like, few input channels)", dict(k=3, cout=32, shape=(1, 3, 16, 16)),
     [("pc", "u8"), ("pc", "i8")]),
    ("conv3x3relu", "Conv 3x3 -> Relu -> Q (explicit Relu fused before Q)", dict(k=3, relu="relu", style="torch"),
     [("pc", "u8"), ("pc", "i8")]),
    ("conv3x3clip", "Conv 3x3 -> Clip(0,6) -> Q (Relu6 fused before Q)", dict(k=3, relu="relu6", style="torch"),
     [("pc", "u8"), ("pc", "i8")]),
    ("conv3x3reluq", "Conv 3x3 with Relu folded into the output Q (ORT quantizer drops Relu; zero point at range bottom)",
     dict(k=3, relu="relu"), [("pc", "u8"), ("pc", "i8")]),
    ("conv3x3wzp", "Conv 3x3 with asymmetric per-channel int8 weights (unequal nonzero weight zero points)",
     dict(k=3, wsym=False), [("pc", "u8")]),
    ("conv3x3wu8", "Conv 3x3 with asymmetric per-channel uint8 weights (u8 x u8)", dict(k=3, wsym=False, wdtype="u8"),
     [("pc", "u8")]),
]

for _stem, _desc, _kw, _vars in CONV_CASES:
    for _g, _a in _vars:
        _n = f"{_stem}_{_g}_{_a}.onnx"
        _style = _kw.get("style", "ort")
        _d = f"{_desc}; {'per-channel' if _g == 'pc' else 'per-tensor'} int8 weights, {_a} activations, {_style} layout"
        fixture(_n, _d)(_conv_fixture(_n, _a, _g == "pc", _d, **dict(_kw)))


def _float_island_conv(b, x):
    # a module skipped from quantization: plain fp32 Conv between DQ and Q
    return b.conv(x, 8, quant_w=False)


for _a in ("u8", "i8"):
    fixture(f"floatconv_{_a}.onnx", f"float island: unquantized fp32 Conv (weights not behind DQ) between DQ and Q, {_a}")(
        (lambda a: lambda: single(f"floatconv_{a}", a, _float_island_conv))(_a))


def _convtranspose(b, x, pc, axis=1, group=1):
    cin = b.vals[x].shape[1]
    cout = 4 * group if group > 1 else 6
    w = (b.rng.standard_normal((cin, cout // group, 3, 3)) * np.sqrt(2.0 / (cin * 9 / 4))).astype(np.float32)
    bias = (b.rng.standard_normal(cout) * 0.1).astype(np.float32)
    wd, ws = b.weight(w, axis, pc)
    if pc and group > 1:
        # ws has one entry per axis-1 slot (cout/group); bias channels repeat per group
        ws = np.tile(ws, group)
    bd = b.bias(bias, x, ws if ws.size == cout else np.full(cout, ws[0], np.float32))
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])
    if group > 1:
        attrs["group"] = group
    return b.node("ConvTranspose", [x, wd, bd], **attrs)


for _g, _a in (("pt", "u8"), ("pc", "u8"), ("pc", "i8")):
    _n = f"convtranspose_{_g}_{_a}.onnx"
    fixture(_n, f"ConvTranspose 3x3 stride 2 pad 1 output_padding 1 (8x8 -> 16x16), 8->6 channels, "
                f"{'per-channel (axis 1)' if _g == 'pc' else 'per-tensor'} weights, {_a}")(
        (lambda n, a, pc: lambda: single(n, a, lambda b, x: _convtranspose(b, x, pc)))(_n, _a, _g == "pc"))
fixture("convtranspose_grp_pc_u8.onnx", "grouped ConvTranspose group=2, per-channel weights on axis 1 (per slot within group), u8")(
    lambda: single("convtranspose_grp_pc_u8", "u8", lambda b, x: _convtranspose(b, x, True, group=2)))


def _matmul_w(b, x, pc, n=12):
    k = b.vals[x].shape[-1]
    w = (b.rng.standard_normal((k, n)) * np.sqrt(1.0 / k)).astype(np.float32)
    wd, _ = b.weight(w, 1, pc)
    return b.node("MatMul", [x, wd])


for _g, _a in (("pt", "u8"), ("pc", "u8"), ("pt", "i8"), ("pc", "i8")):
    _n = f"matmul_{_g}_{_a}.onnx"
    fixture(_n, f"MatMul [1,8,16] x const [16,12], {'per-channel (axis 1, per output column)' if _g == 'pc' else 'per-tensor'} int8 weights, {_a}")(
        (lambda n, a, pc: lambda: single(n, a, lambda b, x: _matmul_w(b, x, pc), shape=(1, 8, 16)))(_n, _a, _g == "pc"))


def _matmul_act(b, x):
    y = b.input("input_b", (1, 16, 8))
    yq = b.qdq(y)
    return b.node("MatMul", [x, yq])


for _a in ("u8", "i8"):
    fixture(f"matmul_act_{_a}.onnx", f"MatMul of two quantized activations [1,8,16] x [1,16,8] (attention-like), {_a}")(
        (lambda a: lambda: single(f"matmul_act_{a}", a, _matmul_act, shape=(1, 8, 16)))(_a))

for _g, _a in (("pt", "u8"), ("pc", "u8"), ("pt", "i8"), ("pc", "i8")):
    _n = f"gemm_{_g}_{_a}.onnx"
    fixture(_n, f"Gemm transB=1 [1,32] x W[10,32]^T + bias, {'per-channel (axis 0)' if _g == 'pc' else 'per-tensor'} int8 weights, int32 bias, {_a}")(
        (lambda n, a, pc: lambda: single(n, a, lambda b, x: b.gemm(x, 10, per_channel=pc), shape=(1, 32)))(_n, _a, _g == "pc"))


def _linear(b, x, pc=True, n=12):
    """nn.Linear on a rank-3 input as exported: MatMul with the quantized weight [K,N], then Add
    of the bias (int32 behind DQ with scale s_x*s_w[n] in the ort style, fp32 in the torch style)."""
    k = b.vals[x].shape[-1]
    w = (b.rng.standard_normal((k, n)) * np.sqrt(1.0 / k)).astype(np.float32)
    bias = (b.rng.standard_normal(n) * 0.1).astype(np.float32)
    wd, ws = b.weight(w, 1, pc)
    m = b.node("MatMul", [x, wd])
    return b.node("Add", [m, b.bias(bias, x, ws)])


for _a in ("u8", "i8"):
    fixture(f"linear_pc_{_a}.onnx", f"nn.Linear as MatMul [1,8,16] x const [16,12] + Add(int32 bias behind DQ, scale s_x*s_w[n]), per-channel int8 weights, {_a}")(
        (lambda a: lambda: single(f"linear_pc_{a}", a, _linear, shape=(1, 8, 16)))(_a))


def _gemm_transa(b, x, n=10):
    """Gemm transA=1 on a [K,M] activation, alpha 0.5, beta 2 with an int32 C (ort) or fp32 C."""
    k = b.vals[x].shape[0]
    w = (b.rng.standard_normal((k, n)) * np.sqrt(1.0 / k)).astype(np.float32)
    c = (b.rng.standard_normal(n) * 0.05).astype(np.float32)
    wd, ws = b.weight(w, 1, True)
    return b.node("Gemm", [x, wd, b.bias(c, x, ws * np.float32(0.5))], alpha=0.5, beta=2.0, transA=1)


for _a in ("u8", "i8"):
    fixture(f"gemmta_pc_{_a}.onnx", f"Gemm transA=1 [32,4]^T x W[32,10], alpha 0.5, beta 2, per-channel (axis 1) int8 weights, int32 C with scale s_x*s_w[n]*alpha, {_a}")(
        (lambda a: lambda: single(f"gemmta_pc_{a}", a, _gemm_transa, shape=(32, 4)))(_a))


def _binary(op, bshape=None, scale_b=3.0):
    def body(b, x):
        shape = b.vals[x].shape if bshape is None else bshape
        y = b.input("input_b", shape, (b.rng.standard_normal(shape) * scale_b).astype(np.float32))
        return b.node(op, [x, b.qdq(y)])
    return body


for _a in ("u8", "i8"):
    fixture(f"add_{_a}.onnx", f"Add of two quantized activations with different scales (ranges ~1 and ~3), {_a}")(
        (lambda a: lambda: single(f"add_{a}", a, _binary("Add")))(_a))
    fixture(f"add_bcast_{_a}.onnx", f"Add with broadcast: [1,8,8,8] + quantized [1,8,1,1], different scales, {_a}")(
        (lambda a: lambda: single(f"add_bcast_{a}", a, _binary("Add", (1, 8, 1, 1))))(_a))
    fixture(f"mul_{_a}.onnx", f"Mul of two quantized activations with different scales, {_a}")(
        (lambda a: lambda: single(f"mul_{a}", a, _binary("Mul", scale_b=0.5)))(_a))


def _add_const(b, x):
    c = (b.rng.standard_normal((1, 8, 1, 1)) * 0.5).astype(np.float32)
    ci = b.init("const", ref_quantize(c, np.float32(np.max(np.abs(c)) / 127), np.int8(0)))
    cs = b.init("const_scale", np.float32(np.max(np.abs(c)) / 127))
    cz = b.init("const_zero_point", np.int8(0))
    return b.node("Add", [x, b.node("DequantizeLinear", [ci, cs, cz])])


fixture("add_const_u8.onnx", "Add of an activation and a quantized int8 constant [1,8,1,1] behind DQ, u8")(
    lambda: single("add_const_u8", "u8", _add_const))


def _concat(b, x):
    parts = [x]
    for i, sc in enumerate((0.3, 4.0)):
        shape = (1, 4 + 4 * i, 8, 8)
        y = b.input(f"input_{i + 1}", shape, (b.rng.standard_normal(shape) * sc + 0.5 * i).astype(np.float32))
        parts.append(b.qdq(y))
    return b.node("Concat", parts, axis=1)


for _a in ("u8", "i8"):
    fixture(f"concat_{_a}.onnx", f"Concat axis 1 of three quantized inputs (8, 4, 8 channels) with different scales and zero points, {_a}")(
        (lambda a: lambda: single(f"concat_{a}", a, _concat))(_a))


def _passthrough(op, **attrs):
    def body(b, x):
        if op == "Reshape":
            shp = b.init("shape", np.array([1, 8, 64], np.int64))
            y = b.node("Reshape", [x, shp])
        else:
            y = b.node(op, [x], **attrs)
        return b.qdq(y, like=x)  # same scale and zero point: pure data movement
    return body


_PASS = [
    ("maxpool", "MaxPool", dict(kernel_shape=[2, 2], strides=[2, 2]), "MaxPool 2x2 stride 2"),
    ("maxpool3s2", "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), "MaxPool 3x3 stride 2 pad 1"),
    ("reshape", "Reshape", {}, "Reshape [1,8,8,8] -> [1,8,64]"),
    ("flatten", "Flatten", dict(axis=1), "Flatten axis 1"),
    ("transpose", "Transpose", dict(perm=[0, 2, 3, 1]), "Transpose NCHW -> NHWC"),
]
for _s, _op, _at, _d in _PASS:
    for _a in ("u8", "i8"):
        fixture(f"{_s}_{_a}.onnx", f"{_d} between DQ and Q with identical scale/zero point (pass-through), {_a}")(
            (lambda s, a, op, at: lambda: single(f"{s}_{a}", a, _passthrough(op, **at)))(_s, _a, _op, _at))


def _requant(op, **attrs):
    def body(b, x):
        return b.node(op, [x], **attrs)
    return body


_POOLS = [
    ("avgpool", "AveragePool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), "AveragePool 3x3 s1 pad 1 (count_include_pad=0)"),
    ("avgpoolinc", "AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
     "AveragePool 3x3 s2 pad 1 count_include_pad=1"),
    ("avgpool2", "AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2]), "AveragePool 2x2 s2"),
    ("gap", "GlobalAveragePool", {}, "GlobalAveragePool"),
]
for _s, _op, _at, _d in _POOLS:
    for _a in ("u8", "i8"):
        fixture(f"{_s}_{_a}.onnx", f"{_d} between DQ and Q (own output scale), {_a}")(
            (lambda s, a, op, at: lambda: single(f"{s}_{a}", a, _requant(op, **at)))(_s, _a, _op, _at))

_ACTS = [
    ("relu", "Relu", {}, "Relu between DQ and Q"),
    ("leakyrelu", "LeakyRelu", dict(alpha=0.1), "LeakyRelu alpha 0.1 between DQ and Q (LUT candidate)"),
    ("sigmoid", "Sigmoid", {}, "Sigmoid between DQ and Q (LUT candidate)"),
    ("tanh", "Tanh", {}, "Tanh between DQ and Q (LUT candidate)"),
    ("softmax", "Softmax", dict(axis=-1), "float island: Softmax (axis -1) between DQ and Q"),
]
for _s, _op, _at, _d in _ACTS:
    for _a in ("u8", "i8"):
        fixture(f"{_s}_{_a}.onnx", f"{_d}, {_a}")(
            (lambda s, a, op, at: lambda: single(f"{s}_{a}", a, _requant(op, **at)))(_s, _a, _op, _at))

for _a in ("u8", "i8"):
    fixture(f"hardswish_{_a}.onnx", f"HardSwish between DQ and Q (LUT candidate), opset 14, {_a}")(
        (lambda a: lambda: single(f"hardswish_{a}", a, _requant("HardSwish"), opset=14))(_a))


def _hsig_mul(b, x):
    return b.node("Mul", [x, b.node("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5)])


fixture("hardsigmoidmul_i8.onnx", "x * HardSigmoid(x) (hardswish as PyTorch exports it below opset 14) between DQ and Q, i8")(
    lambda: single("hardsigmoidmul_i8", "i8", _hsig_mul))


def _clip_only(b, x):
    lo = b.init("min", np.array(0.0, np.float32))
    hi = b.init("max", np.array(1.0, np.float32))
    return b.node("Clip", [x, lo, hi])


fixture("clip_u8.onnx", "Clip(0, 1) between DQ and Q, u8")(lambda: single("clip_u8", "u8", _clip_only))


def _softmax_island(b, x):
    # a chain of float ops between DQ and Q: Conv output (quantized) -> DQ -> Softmax -> Mul -> Q
    y = b.node("Softmax", [x], axis=1)
    two = b.init("two", np.array(2.0, np.float32))
    return b.node("Mul", [y, two])


fixture("softmaxisland_u8.onnx", "float island: DQ -> Softmax(axis 1) -> Mul(2) -> Q, u8")(
    lambda: single("softmaxisland_u8", "u8", _softmax_island))


# PyTorch-style variants of the per-op fixtures: [1]-shaped per-tensor scales/zero points, fp32
# weights -> Q -> DQ, fp32 bias. Named torch_<op>_<u8|i8>.onnx. They show where ONNX Runtime trips
# over [1]-shaped quantization parameters (see README.md).
TORCH_SET = [
    ("conv3x3_pc", "Conv 3x3 pad 1, per-channel weights", lambda b, x: b.conv(x, 8), (1, 8, 8, 8), 13),
    ("conv3x3_pt", "Conv 3x3 pad 1, per-tensor weights ([1]-shaped weight scale)", lambda b, x: b.conv(x, 8, per_channel=False), (1, 8, 8, 8), 13),
    ("convtranspose_pc", "ConvTranspose 3x3 s2, per-channel weights axis 1", lambda b, x: _convtranspose(b, x, True), (1, 8, 8, 8), 13),
    ("matmul_pc", "MatMul with const weights, per-channel axis 1", lambda b, x: _matmul_w(b, x, True), (1, 8, 16), 13),
    ("matmul_act", "MatMul of two activations", _matmul_act, (1, 8, 16), 13),
    ("gemm_pc", "Gemm transB=1, per-channel weights, fp32 bias", lambda b, x: b.gemm(x, 10), (1, 32), 13),
    ("linear_pc", "nn.Linear as MatMul + Add(fp32 bias), per-channel weights axis 1", _linear, (1, 8, 16), 13),
    ("add", "Add of two activations with different scales", _binary("Add"), (1, 8, 8, 8), 13),
    ("mul", "Mul of two activations", _binary("Mul", scale_b=0.5), (1, 8, 8, 8), 13),
    ("concat", "Concat of three activations with different scales", _concat, (1, 8, 8, 8), 13),
    ("maxpool", "MaxPool 2x2 s2, same qparams", _passthrough("MaxPool", kernel_shape=[2, 2], strides=[2, 2]), (1, 8, 8, 8), 13),
    ("reshape", "Reshape, same qparams", _passthrough("Reshape"), (1, 8, 8, 8), 13),
    ("transpose", "Transpose, same qparams", _passthrough("Transpose", perm=[0, 2, 3, 1]), (1, 8, 8, 8), 13),
    ("avgpool", "AveragePool 3x3 s1 pad 1", _requant("AveragePool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), (1, 8, 8, 8), 13),
    ("gap", "GlobalAveragePool", _requant("GlobalAveragePool"), (1, 8, 8, 8), 13),
    ("sigmoid", "Sigmoid", _requant("Sigmoid"), (1, 8, 8, 8), 13),
    ("leakyrelu", "LeakyRelu alpha 0.1", _requant("LeakyRelu", alpha=0.1), (1, 8, 8, 8), 13),
    ("softmax", "Softmax axis -1", _requant("Softmax", axis=-1), (1, 8, 8, 8), 13),
    ("hardswish", "HardSwish (opset 14)", _requant("HardSwish"), (1, 8, 8, 8), 14),
]
for _s, _d, _body, _shape, _ops in TORCH_SET:
    for _a in ("u8", "i8"):
        _n = f"torch_{_s}_{_a}.onnx"
        fixture(_n, f"PyTorch style ([1]-shaped per-tensor qparams, fp32 weights -> Q -> DQ): {_d}, {_a}")(
            (lambda n, a, body, shape, ops: lambda: single(n, a, body, shape=shape, style="torch", opset=ops))(_n, _a, _body, _shape, _ops))


# --------------------------------------------------------------------------------------------------
# Style fixtures
# --------------------------------------------------------------------------------------------------

def style_torch_conv_relu():
    b = Builder("style_torch_conv_relu", "torch", "u8", seed=101,
                doc="PyTorch fake-quant style: [1]-shaped per-tensor qparams, fp32 weights -> Q(pc) -> DQ, fp32 bias")
    x = b.qdq(b.input("input", (1, 3, 16, 16)))
    with b.under("conv1"):
        y = b.qdq(b.fold_act(b.conv(x, 8), "relu"))
    with b.under("conv2"):
        y = b.qdq(b.fold_act(b.conv(y, 8, stride=2), "relu"))
    with b.under("conv3"):
        y = b.qdq(b.conv(y, 4, k=1))
    b.output(y, "output")
    return check(b.model())


def style_torch_conv_bn_relu():
    b = Builder("style_torch_conv_bn_relu", "torch", "u8", seed=102,
                doc="PyTorch export keeping BatchNormalization: Conv -> BatchNormalization -> Relu -> Q")
    x = b.qdq(b.input("input", (1, 8, 8, 8)))
    with b.under("conv"):
        y = b.conv(x, 8)
    with b.under("bn"):
        y = _bn(b, y)
    y = b.qdq(b.fold_act(y, "relu"))
    b.output(y, "output")
    return check(b.model())


def style_torch_conv_div_bn_relu():
    b = Builder("style_torch_conv_div_bn_relu", "torch", "i8", seed=103,
                doc="PyTorch QAT ConvBn2d export: Conv(no bias) -> Div(per-channel) -> BatchNormalization -> Relu -> Q")
    x = b.qdq(b.input("input", (1, 8, 8, 8)))
    with b.under("conv"):
        y = b.conv(x, 8, bias=False)
    with b.under("bn"):
        f = (b.rng.uniform(0.5, 2.0, (1, 8, 1, 1))).astype(np.float32)
        y = b.node("Div", [y, b.init("onnx::Div", f)])
        y = _bn(b, y)
    y = b.qdq(b.fold_act(y, "relu"))
    b.output(y, "output")
    return check(b.model())


def _bn(b, y):
    c = b.vals[y].shape[1]
    g = b.rng.uniform(0.5, 1.5, c).astype(np.float32)
    be = (b.rng.standard_normal(c) * 0.1).astype(np.float32)
    mu = (b.rng.standard_normal(c) * 0.1).astype(np.float32)
    var = b.rng.uniform(0.5, 2.0, c).astype(np.float32)
    ins = [y] + [b.init(n, v) for n, v in (("bn.weight", g), ("bn.bias", be), ("bn.running_mean", mu), ("bn.running_var", var))]
    return b.node("BatchNormalization", ins, epsilon=1e-5)


def style_ort_qs():
    b = Builder("style_ort_qs", "ort", "u8", seed=104,
                doc="onnxruntime quantize_static QDQ style: u8 asymmetric activations, int8 weights, int32 bias")
    x = b.qdq(b.input("input", (1, 3, 16, 16)))
    y = b.qdq(b.fold_act(b.conv(x, 8), "relu"))
    y = b.qdq(b.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2]), like=y)
    z = b.qdq(b.fold_act(b.conv(y, 8), "relu6"))
    y = b.qdq(b.node("Add", [y, z]))
    y = b.qdq(b.node("GlobalAveragePool", [y]))
    y = b.qdq(b.node("Flatten", [y], axis=1), like=y)
    y = b.qdq(b.gemm(y, 10))
    b.output(y, "output")
    return check(b.model())


def style_trt():
    b = Builder("style_trt", "trt", "i8", seed=105,
                doc="TensorRT/ModelOpt style: symmetric int8, scale=amax/127, no Q on conv outputs, quantized residual add")
    x = b.input("input", (1, 8, 8, 8))
    with b.under("conv1"):
        y = b.fold_act(b.conv(b.in_q(x), 8), "relu")
    with b.under("conv2"):
        y = b.conv(b.in_q(y), 8)
    y = b.fold_act(b.node("Add", [b.qdq(y), b.qdq(x)]), "relu")
    y = b.node("MaxPool", [b.in_q(y)], kernel_shape=[2, 2], strides=[2, 2])
    with b.under("conv3"):
        y = b.conv(b.in_q(y), 4, k=1)
    b.output(y, "output")
    return check(b.model())


fixture("style_torch_conv_relu.onnx", "PyTorch fake-quant: 3 convs, [1]-shaped u8 per-tensor qparams, fp32 weights -> Q(pc, axis 0) -> DQ, fp32 bias, explicit Relu")(style_torch_conv_relu)
fixture("style_torch_conv_bn_relu.onnx", "PyTorch: Conv -> BatchNormalization -> Relu -> Q, u8")(style_torch_conv_bn_relu)
fixture("style_torch_conv_div_bn_relu.onnx", "PyTorch QAT ConvBn2d: Conv(no bias) -> Div(per-channel) -> BatchNormalization -> Relu -> Q, i8")(style_torch_conv_div_bn_relu)
fixture("style_ort_qs.onnx", "ORT quantize_static: u8 asym activations, int8 weight initializers, int32 bias (s_x*s_w), Conv/MaxPool/Add/GAP/Flatten/Gemm, Relu folded into Q")(style_ort_qs)
fixture("style_trt.onnx", "TensorRT/ModelOpt: symmetric int8, fp32 weights -> Q -> DQ, fp32 bias, no Q on conv outputs, residual Add with quantized inputs, float output")(style_trt)


# --------------------------------------------------------------------------------------------------
# Networks
# --------------------------------------------------------------------------------------------------

def _torch_flatten(b, x):
    """PyTorch's dynamic flatten: Shape -> Gather(0) -> Unsqueeze -> Concat([n, -1]) -> Reshape."""
    with b.under("Flatten"):
        shp = b.node("Shape", [x])
        idx = b.init("onnx::Gather", np.array(0, np.int64))
        n = b.node("Gather", [shp, idx], axis=0)
        ax = b.init("onnx::Unsqueeze", np.array([0], np.int64))
        n1 = b.node("Unsqueeze", [n, ax])
        m1 = b.init("onnx::Concat", np.array([-1], np.int64))
        s = b.node("Concat", [n1, m1], axis=0)
        return b.node("Reshape", [x, s])


def resnet(name, style, act="u8", size=32, widths=(8, 16, 32), blocks=(1, 1, 1), classes=10, stem=7, seed=7):
    """ResNet-style QDQ network. The full ResNet-18 is widths (64,128,256,512), blocks (2,2,2,2),
    size 224, classes 1000. 16-bit activations (act i16/u16, int8 weights: A16W8) at opset 21."""
    b = Builder(name, style, act, seed=seed, opset=21 if act in ("i16", "u16") else 13,
                doc=f"ResNet-style QDQ network ({style} export style)")
    x = b.input("input", (1, 3, size, size), (b.rng.standard_normal((1, 3, size, size))).astype(np.float32))
    x = b.qdq(x)
    with b.under("conv1"):
        y = b.fold_act(b.conv(x, widths[0], k=stem, stride=2), "relu")
    y = b.out_q(y)
    with b.under("maxpool"):
        y0 = b.in_q(y)
        y = b.node("MaxPool", [y0], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    if style != "trt":
        y = b.qdq(y, like=y0)
    cin = widths[0]
    for li, (w, n) in enumerate(zip(widths, blocks)):
        for bi in range(n):
            stride = 2 if (li > 0 and bi == 0) else 1
            with b.under(f"layer{li + 1}"), b.under(f"layer{li + 1}.{bi}"):
                with b.under("conv1"):
                    h = b.fold_act(b.conv(b.in_q(y), w, stride=stride), "relu")
                h = b.out_q(h)
                with b.under("conv2"):
                    h = b.conv(b.in_q(h), w)
                h = b.qdq(h)  # residual-add input is quantized in every style
                if stride != 1 or cin != w:
                    with b.under("downsample"):
                        idn = b.qdq(b.conv(b.in_q(y), w, k=1, stride=stride))
                else:
                    idn = b.qdq(y) if style == "trt" else y
                y = b.fold_act(b.node("Add", [h, idn]), "relu")
                y = b.out_q(y)
            cin = w
    with b.under("avgpool"):
        y = b.node("GlobalAveragePool", [b.in_q(y)])
    y = b.out_q(y)
    if style == "torch":
        y = _torch_flatten(b, y)
    else:
        y0 = y
        y = b.node("Flatten", [y], axis=1)
        if style == "ort":
            y = b.qdq(y, like=y0)
    with b.under("fc"):
        y = b.gemm(b.in_q(y), classes)
    y = b.out_q(y)
    b.output(y, "logits")
    return b


MBV2_FULL = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
MBV2_SMALL = [(1, 8, 1, 1), (4, 12, 2, 2), (4, 16, 2, 2)]


def mobilenetv2(name, style, act="u8", size=32, cfg=MBV2_SMALL, stem=16, last=64, classes=10, seed=11):
    """MobileNetV2-style QDQ network (inverted residuals, Relu6 as Clip(0,6), depthwise 3x3)."""
    b = Builder(name, style, act, seed=seed, doc=f"MobileNetV2-style QDQ network ({style} export style)")
    x = b.input("input", (1, 3, size, size))
    x = b.qdq(x)
    with b.under("features.0"):
        y = b.out_q(b.fold_act(b.conv(x, stem, stride=2), "relu6"))
    cin = stem
    idx = 1
    for t, c, n, s in cfg:
        for i in range(n):
            stride = s if i == 0 else 1
            with b.under(f"features.{idx}"):
                h = y
                if t != 1:
                    with b.under("conv.0"):
                        h = b.out_q(b.fold_act(b.conv(b.in_q(h), cin * t, k=1), "relu6"))
                with b.under("conv.1"):
                    h = b.out_q(b.fold_act(b.conv(b.in_q(h), cin * t, k=3, stride=stride, group=cin * t), "relu6"))
                with b.under("conv.2"):
                    h = b.conv(b.in_q(h), c, k=1)
                if stride == 1 and cin == c:
                    h = b.qdq(h)  # residual-add input is quantized in every style
                    y = b.out_q(b.node("Add", [b.qdq(y) if style == "trt" else y, h]))
                else:
                    y = b.out_q(h)
            cin = c
            idx += 1
    with b.under(f"features.{idx}"):
        y = b.out_q(b.fold_act(b.conv(b.in_q(y), last, k=1), "relu6"))
    y = b.out_q(b.node("GlobalAveragePool", [b.in_q(y)]))
    if style == "torch":
        y = _torch_flatten(b, y)
    else:
        y0 = y
        y = b.node("Flatten", [y], axis=1)
        if style == "ort":
            y = b.qdq(y, like=y0)
    with b.under("classifier"):
        y = b.out_q(b.gemm(b.in_q(y), classes))
    b.output(y, "logits")
    return b


NETS = [
    ("resnet_torch_u8.onnx", "ResNet-style net 1x3x32x32, PyTorch fake-quant style (u8, [1]-shaped qparams, "
     "Shape->Gather->Unsqueeze->Concat->Reshape flatten), stem 7x7 s2 + maxpool, 3 basic blocks (2 with 1x1 downsample), GAP, Gemm",
     lambda: resnet("resnet_torch_u8", "torch", "u8", seed=21)),
    ("resnet_trt_i8.onnx", "ResNet-style net 1x3x32x32, TensorRT style (symmetric i8, Q/DQ on consumer inputs only, float output)",
     lambda: resnet("resnet_trt_i8", "trt", "i8", seed=22)),
    ("resnet_ort_u8.onnx", "ResNet-style net 1x3x32x32, ORT quantize_static style (u8 asym, int8 weights, int32 bias, Relu folded into Q)",
     lambda: resnet("resnet_ort_u8", "ort", "u8", seed=23)),
    ("mobilenetv2_ort_u8.onnx", "MobileNetV2-style net 1x3x32x32, ORT style (expand 1x1 + Relu6 folded into Q, depthwise 3x3, project 1x1, residual Add)",
     lambda: mobilenetv2("mobilenetv2_ort_u8", "ort", "u8", seed=31)),
    ("mobilenetv2_torch_i8.onnx", "MobileNetV2-style net 1x3x32x32, PyTorch style (i8 activations, explicit Clip(0,6), shape-subgraph flatten)",
     lambda: mobilenetv2("mobilenetv2_torch_i8", "torch", "i8", seed=32)),
    ("mobilenetv2_trt_i8.onnx", "MobileNetV2-style net 1x3x32x32, TensorRT style (symmetric i8)",
     lambda: mobilenetv2("mobilenetv2_trt_i8", "trt", "i8", seed=33)),
]
for _n, _d, _f in NETS:
    fixture(_n, _d)((lambda f: lambda: check(f().model()))(_f))


# A16W8: 16-bit activations with int8 per-channel weights, opset 21 INT16/UINT16 Q/DQ, as ONNX
# Runtime's quantize_static writes them with activation_type QUInt16 / QInt16 and weight_type
# QInt8 (asymmetric activations, int32 bias at s_x*s_w). Named <op>_a16_<u16|i16>.onnx.
A16_SET = [
    ("conv3x3", "Conv 3x3 pad 1, 8->8 channels", lambda b, x: b.conv(x, 8), (1, 8, 8, 8)),
    ("conv3x3reluq", "Conv 3x3 with Relu folded into the output Q", lambda b, x: b.fold_act(b.conv(x, 8), "relu"), (1, 8, 8, 8)),
    ("conv1x1s2", "Conv 1x1 stride 2, 16->24 channels", lambda b, x: b.conv(x, 24, k=1, stride=2, pad=0), (1, 16, 8, 8)),
    ("convdw", "depthwise Conv 3x3 group=C=8", lambda b, x: b.conv(x, 8, group=8), (1, 8, 8, 8)),
    ("convk2304", "Conv 3x3 256->16 channels (K = 2304: the int64 accumulator)", lambda b, x: b.conv(x, 16), (1, 256, 4, 4)),
    ("gemm", "Gemm transB=1, per-channel weights, int32 bias", lambda b, x: b.gemm(x, 10), (1, 64)),
    ("matmul", "MatMul with const weights, per-channel axis 1", lambda b, x: _matmul_w(b, x, True), (1, 8, 16)),
    ("add", "Add of two activations with different scales", _binary("Add"), (1, 8, 8, 8)),
    ("mul", "Mul of two activations", _binary("Mul", scale_b=0.5), (1, 8, 8, 8)),
    ("concat", "Concat of three activations with different scales", _concat, (1, 8, 8, 8)),
    ("maxpool", "MaxPool 2x2 s2, same qparams", _passthrough("MaxPool", kernel_shape=[2, 2], strides=[2, 2]), (1, 8, 8, 8)),
    ("avgpool", "AveragePool 3x3 s1 pad 1", _requant("AveragePool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), (1, 8, 8, 8)),
    ("gap", "GlobalAveragePool", _requant("GlobalAveragePool"), (1, 8, 8, 8)),
    ("relu", "Relu between DQ and Q (a clamped requantize)", _requant("Relu"), (1, 8, 8, 8)),
]
for _s, _d, _body, _shape in A16_SET:
    for _a in ("u16", "i16"):
        _n = f"{_s}_a16_{_a}.onnx"
        fixture(_n, f"A16W8 (opset 21, {_a} activations, int8 weights, ORT layout): {_d}")(
            (lambda n, a, body, shape: lambda: single(n, a, body, shape=shape, opset=21))(_n, _a, _body, _shape))
fixture("resnet_ort_a16w8_u16.onnx", "ResNet-style net 1x3x32x32, ORT quantize_static A16W8 style (opset 21: u16 asym "
        "activations, int8 per-channel weights, int32 bias, Relu folded into Q)")(
    lambda: check(resnet("resnet_ort_a16w8_u16", "ort", "u16", seed=24).model()))
fixture("resnet_ort_a16w8_i16.onnx", "ResNet-style net 1x3x32x32, ORT quantize_static A16W8 style with QInt16 "
        "activations (opset 21: i16 asym, int8 per-channel weights, int32 bias)")(
    lambda: check(resnet("resnet_ort_a16w8_i16", "ort", "i16", seed=25).model()))

def attention(name, act="u8", seq=16, hidden=32, heads=2, seed=71, vact="i8"):
    """A BERT-style self-attention block, ORT quantize_static style: x [1, seq, hidden] -> Q, K, V
    linears (MatMul with const per-channel weights + int32 bias behind DQ, 1/sqrt(dh) folded into
    Q's weights) -> Reshape [1, seq, heads, dh] -> Transpose (K to [0, 2, 3, 1], i.e. K^T) ->
    MatMul(Q, K^T) -> Softmax (axis -1, a float island) -> MatMul(P, V) -> Transpose, Reshape ->
    output linear -> residual Add. The two MatMuls of activations are the run-time x run-time
    qmatmuls of lib/codegen/lower/qmatmul_rt.c; V is quantized as `vact` (P is u8: softmax >= 0)."""
    b = Builder(name, style="ort", act=act, seed=seed)
    dh = hidden // heads
    x = b.qdq(b.input("input", (1, seq, hidden)))

    def proj(x, k, n, scale=1.0):
        w = (b.rng.standard_normal((k, n)) * np.sqrt(1.0 / k) * scale).astype(np.float32)
        bias = (b.rng.standard_normal(n) * 0.1 * scale).astype(np.float32)
        wd, ws = b.weight(w, 1, True)
        return b.node("Add", [b.node("MatMul", [x, wd]), b.bias(bias, x, ws)])

    def heads_of(t, perm, qact=None):
        shp = b.init("shape", np.array([1, seq, heads, dh], np.int64))
        r = b.qdq(b.node("Reshape", [t, shp]), qact, like=t)
        return b.qdq(b.node("Transpose", [r], perm=perm), qact, like=t)

    with b.under("attn"):
        q = b.qdq(proj(x, hidden, hidden, 1.0 / np.sqrt(dh)))
        k = b.qdq(proj(x, hidden, hidden))
        v = b.qdq(proj(x, hidden, hidden), vact)
        qh = heads_of(q, [0, 2, 1, 3])
        kt = heads_of(k, [0, 2, 3, 1])
        vh = heads_of(v, [0, 2, 1, 3], vact)
        s = b.qdq(b.node("MatMul", [qh, kt]))
        p = b.qdq(b.node("Softmax", [s], axis=-1), "u8")
        o = b.qdq(b.node("MatMul", [p, vh]))
        ot = b.qdq(b.node("Transpose", [o], perm=[0, 2, 1, 3]), like=o)
        shp = b.init("shape", np.array([1, seq, hidden], np.int64))
        om = b.qdq(b.node("Reshape", [ot, shp]), like=o)
        y = b.qdq(proj(om, hidden, hidden))
        y = b.qdq(b.node("Add", [y, x]))
    b.output(y, "output")
    return b


for _a, _v in (("u8", "i8"), ("u8", "u8"), ("i8", "i8")):
    fixture(f"attention_{_a}_{_v}.onnx", f"BERT-style self-attention [1,16,32], 2 heads: Q x K^T and softmax x V are qmatmuls of two activations ({_a} activations, V {_v}, P u8)")(
        (lambda a, v: lambda: check(attention(f"attention_{a}_{v}", a, vact=v, seed=_seed(f"attention_{a}_{v}")).model()))(_a, _v))


def encoder_ops(name, act="u8", seq=8, hidden=32, heads=2, vocab=256, seed=91):
    """The ops of transformer exports around a quantized self-attention block,
    ORT quantize_static style: token ids (int64 [1, seq], every value in [-vocab, vocab) valid)
    -> Gather of a quantized embedding table (int8 behind DequantizeLinear) + positions (Range ->
    Unsqueeze -> Gather, folded) -> Q, K, V linears -> Einsum "bhid,bhjd->bhij" (Q K^T) ->
    Where(padding mask, scores, -1e4), the mask Equal(ids, 0) -> Not -> Unsqueeze -> Expand
    computed at run time -> Softmax -> Einsum "bhij,bhjd->bhid" (P V) -> output linear; then
    ReduceMax over the sequence, ReduceSum over the hidden axis, ArgMax of the tokens' hidden
    vectors, and Cast(mask -> f32) -> ReduceSum (the count of non-padding tokens) as outputs."""
    b = Builder(name, style="ort", act=act, seed=seed)
    dh = hidden // heads
    ids = "input_ids"
    b.used.add(ids)
    ids_val = b.rng.integers(0, vocab, (1, seq)).astype(np.int64)
    ids_val[0, -2:] = 0  # two padding tokens
    b.inputs.append(helper.make_tensor_value_info(ids, TensorProto.INT64, [1, seq]))
    b.vals[ids] = ids_val
    b.feeds[ids] = ids_val

    def table(rows):
        w = (b.rng.standard_normal((rows, hidden)) * 0.5).astype(np.float32)
        wd, _ = b.weight(w, 0, False)
        return wd

    def proj(x, k, n, scale=1.0):
        w = (b.rng.standard_normal((k, n)) * np.sqrt(1.0 / k) * scale).astype(np.float32)
        bias = (b.rng.standard_normal(n) * 0.1 * scale).astype(np.float32)
        wd, ws = b.weight(w, 1, True)
        return b.node("Add", [b.node("MatMul", [x, wd]), b.bias(bias, x, ws)])

    def heads_of(t, qact=None):
        shp = b.init("shape", np.array([1, seq, heads, dh], np.int64))
        r = b.qdq(b.node("Reshape", [t, shp]), qact, like=t)
        return b.qdq(b.node("Transpose", [r], perm=[0, 2, 1, 3]), qact, like=t)

    with b.under("embed"):
        tok = b.node("Gather", [table(vocab), ids], axis=0)
        pos_ids = b.node("Range", [b.init("start", np.array(0, np.int64)),
                                   b.init("limit", np.array(seq, np.int64)),
                                   b.init("delta", np.array(1, np.int64))])
        pos = b.node("Gather", [table(seq), b.node("Unsqueeze", [pos_ids, b.init("axes", np.array([0], np.int64))])], axis=0)
        x = b.qdq(b.node("Add", [b.qdq(tok), b.qdq(pos)]))
    with b.under("mask"):
        keep = b.node("Not", [b.node("Equal", [ids, b.init("pad", np.array(0, np.int64))])])
        keep4 = b.node("Unsqueeze", [keep, b.init("axes", np.array([1, 2], np.int64))])
        keepx = b.node("Expand", [keep4, b.init("shape", np.array([1, heads, seq, seq], np.int64))])
    with b.under("attn"):
        q = heads_of(b.qdq(proj(x, hidden, hidden, 1.0 / np.sqrt(dh))))
        k = heads_of(b.qdq(proj(x, hidden, hidden)))
        v = heads_of(b.qdq(proj(x, hidden, hidden)), "i8")
        s = b.qdq(b.node("Einsum", [q, k], equation="bhid,bhjd->bhij"))
        sm = b.node("Where", [keepx, s, b.init("neg", np.array(-1e4, np.float32))])
        p = b.qdq(b.node("Softmax", [sm], axis=-1), "u8")
        o = b.qdq(b.node("Einsum", [p, v], equation="bhij,bhjd->bhid"))
        ot = b.qdq(b.node("Transpose", [o], perm=[0, 2, 1, 3]), like=o)
        om = b.qdq(b.node("Reshape", [ot, b.init("shape", np.array([1, seq, hidden], np.int64))]), like=o)
        h = b.qdq(proj(om, hidden, hidden))
    with b.under("heads"):
        pooled = b.qdq(b.node("ReduceMax", [h], axes=[1], keepdims=0), like=h)
        rowsum = b.qdq(b.node("ReduceSum", [h, b.init("axes", np.array([2], np.int64))], keepdims=1))
        amax = b.node("ArgMax", [h], axis=2, keepdims=0)
        count = b.node("ReduceSum", [b.node("Cast", [keep], to=TensorProto.FLOAT)], keepdims=0)
    b.output(h, "hidden")
    b.output(pooled, "pooled")
    b.output(rowsum, "row_sum")
    b.output(amax, "argmax")
    b.output(count, "tokens")
    return b


for _a in ("u8", "i8"):
    fixture(f"encoder_ops_{_a}.onnx", f"Token-id Gather of a quantized embedding, run-time padding mask (Equal, Not, Unsqueeze, Expand, Where), Einsum attention (QK^T, PV: qmatmuls), ReduceMax/ReduceSum/ArgMax/Cast heads [1,8,32], {_a}")(
        (lambda a: lambda: check(encoder_ops(f"encoder_ops_{a}", a, seed=_seed(f"encoder_ops_{a}")).model()))(_a))


# full-size benchmark models (--full DIR): name -> builder
FULL = {
    "resnet18_ort_u8_224.onnx": lambda: resnet("resnet18_ort_u8_224", "ort", "u8", size=224, widths=(64, 128, 256, 512),
                                               blocks=(2, 2, 2, 2), classes=1000, seed=41).model(),
    "resnet18_torch_u8_224.onnx": lambda: resnet("resnet18_torch_u8_224", "torch", "u8", size=224, widths=(64, 128, 256, 512),
                                                 blocks=(2, 2, 2, 2), classes=1000, seed=42).model(),
    "resnet18_trt_i8_224.onnx": lambda: resnet("resnet18_trt_i8_224", "trt", "i8", size=224, widths=(64, 128, 256, 512),
                                               blocks=(2, 2, 2, 2), classes=1000, seed=43).model(),
    "mobilenetv2_ort_u8_224.onnx": lambda: mobilenetv2("mobilenetv2_ort_u8_224", "ort", "u8", size=224, cfg=MBV2_FULL,
                                                       stem=32, last=1280, classes=1000, seed=51).model(),
    "mobilenetv2_torch_u8_224.onnx": lambda: mobilenetv2("mobilenetv2_torch_u8_224", "torch", "u8", size=224, cfg=MBV2_FULL,
                                                         stem=32, last=1280, classes=1000, seed=52).model(),
    "mobilenetv2_trt_i8_224.onnx": lambda: mobilenetv2("mobilenetv2_trt_i8_224", "trt", "i8", size=224, cfg=MBV2_FULL,
                                                       stem=32, last=1280, classes=1000, seed=53).model(),
    "attention_u8_128x256.onnx": lambda: check(attention("attention_u8_128x256", "u8", seq=128, hidden=256, heads=4,
                                                          seed=81).model()),
    # A16W8 (opset 21): ResNet-18's shape with uint16 activations and int8 per-channel weights,
    # ORT quantize_static style (the A16W8 benchmark of bench/run_bench.py)
    "resnet18_ort_a16w8_224.onnx": lambda: check(resnet("resnet18_ort_a16w8_224", "ort", "u16", size=224,
                                                        widths=(64, 128, 256, 512), blocks=(2, 2, 2, 2),
                                                        classes=1000, seed=44).model()),
}


def example_model():
    """The bundled example (examples/mobilenetv2_qdq.onnx) and its input: MobileNetV2 1.0 (the
    torchvision topology: 1x3x224x224 -> 1000 logits, 17 inverted residual blocks, 52 convs)
    with random weights, ORT quantize_static style."""
    b = mobilenetv2("mobilenetv2_qdq_example", "ort", "u8", size=224, cfg=MBV2_FULL, stem=32, last=1280,
                    classes=1000, seed=61)
    return check(b.model()), b.feeds["input"]


# --------------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------------



def save(model, path):
    data = model.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def save_npy(path, arr):
    with open(path, "wb") as f:
        np.save(f, np.ascontiguousarray(arr), allow_pickle=False)


def _safe(name):
    import re
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return "_" + s if s in ("", ".", "..") else s


def write_io(b, model, d):
    """Write the builder's input(s) and the reference outputs of `model` as .npy into d."""
    os.makedirs(d, exist_ok=True)
    for k, v in b.feeds.items():
        save_npy(os.path.join(d, f"{_safe(k)}.npy"), v)
    ref = run_model(model, b.feeds)
    os.makedirs(os.path.join(d, "ref"), exist_ok=True)
    for k, v in ref.items():
        save_npy(os.path.join(d, "ref", f"{_safe(k)}.npy"), v)
    return ref


def out_scale(b, model):
    """Scale of each (per-tensor quantized) graph output, or None for float outputs."""
    return {o.name: (float(b.qinfo[o.name][0]) if o.name in b.qinfo else None) for o in model.graph.output}


def check_ort(jobs):
    sys.path.insert(0, os.path.join(REPO, "test", "peer"))
    import peerenv
    why = peerenv.check()
    if why:
        raise SystemExit("ERROR: ONNX Runtime peer missing: " + why)
    runner, node = peerenv.ORT_RUN, peerenv.python()
    failures = []
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in jobs:
            m = fn()
            b = Builder.last
            d = os.path.join(tmp, name)
            ref = write_io(b, m, d)
            mp = os.path.join(d, "model.onnx")
            save(m, mp)
            scales = out_scale(b, m)
            row = [name]
            for opt in ("disabled", "all"):
                od = os.path.join(d, f"out_{opt}")
                cmd = [node, runner, mp, "--output-dir", od, "--opt", opt, "--threads", "1"]
                for k in b.feeds:
                    cmd += ["--input", f"{k}={os.path.join(d, _safe(k) + '.npy')}"]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    msg = (p.stderr.strip().splitlines() or ["?"])[-1]
                    failures.append((name, opt, msg))
                    row.append(f"{opt}: REFUSED")
                    continue
                worst = []
                for k, v in ref.items():
                    got = np.load(os.path.join(od, f"{_safe(k)}.npy"))
                    diff = float(np.max(np.abs(got.astype(np.float64) - v.astype(np.float64)))) if v.size else 0.0
                    sc = scales.get(k)
                    rel = diff / max(float(np.max(np.abs(v))), 1e-30) if v.size else 0.0
                    worst.append(f"{diff / sc:.0f}LSB" if sc else f"{diff:.2e}abs({100 * rel:.2f}%)")
                row.append(f"{opt}: {' '.join(worst)}")
            lines.append("  ".join(row))
            print(lines[-1], flush=True)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="fixture directory (default test/models/fixtures)")
    ap.add_argument("--full", metavar="DIR", help="also write the 224x224 ResNet-18 / MobileNetV2 models into DIR")
    ap.add_argument("--full-only", action="store_true", help="with --full: skip the small fixtures")
    ap.add_argument("--inputs", metavar="DIR", help="write DIR/<model>/<input>.npy and DIR/<model>/ref/<output>.npy")
    ap.add_argument("--check-ort", action="store_true", help="run every fixture through bench/ort_run.py and compare")
    ap.add_argument("--only", help="comma-separated fixture names (for --check-ort / --inputs / --full)")
    ap.add_argument("--list", action="store_true", help="print fixture names and descriptions")
    a = ap.parse_args()

    jobs = [(n, fn) for n, _, fn in FIXTURES]
    if a.only:
        want = set(a.only.split(","))
        jobs = [(n, fn) for n, fn in jobs + list(FULL.items()) if n in want]
    if a.list:
        for n, d, _ in FIXTURES:
            print(f"{n}\t{d}")
        for n in FULL:
            print(f"{n}\t(--full only)")
        return 0
    if a.check_ort:
        fails = check_ort(jobs)
        for n, opt, msg in fails:
            print(f"REFUSED {n} --opt {opt}: {msg}")
        return 0
    if a.inputs:
        for n, fn in jobs:
            m = fn()
            write_io(Builder.last, m, os.path.join(a.inputs, n[:-5]))
        return 0
    if not a.full_only:
        os.makedirs(a.out, exist_ok=True)
        total = 0
        for n, fn in jobs:
            m = fn()
            p = os.path.join(a.out, n)
            save(m, p)
            sz = os.path.getsize(p)
            total += sz
            if a.out == DEFAULT_OUT and sz > 200 * 1024:
                print(f"error: {n} is {sz} bytes (> 200 KB)", file=sys.stderr)
                return 1
        print(f"wrote {len(jobs)} fixtures to {a.out} ({total} bytes)")
    if a.full:
        os.makedirs(a.full, exist_ok=True)
        for n, fn in FULL.items():
            if a.only and n not in a.only.split(","):
                continue
            m = fn()
            b = Builder.last
            check(m)  # opset <= 17: onnx.checker (check() skips it for opset 21)
            save(m, os.path.join(a.full, n))
            d = os.path.join(a.full, n[:-5])
            os.makedirs(d, exist_ok=True)
            for k, v in b.feeds.items():
                save_npy(os.path.join(d, f"{_safe(k)}.npy"), v)
            print(f"wrote {os.path.join(a.full, n)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
