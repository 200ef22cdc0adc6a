#!/usr/bin/python3
"""ort_quant.py: what three quantizers write into a float ONNX graph, re-done with onnx + numpy.

There is no onnxruntime Python package here (no PyPI), so the transformer models of
test/models/gen_transformers.py are quantized by these emulations of what the tools emit:

  quantize_static(...)   onnxruntime.quantization.quantize_static, QDQ format, as in
                         onnxruntime 1.16 (registry.py, qdq_quantizer.py, operators/*.py):
                         MinMax calibration over the calibration feeds; u8 asymmetric
                         activations (range widened to contain 0, zp = round(-rmin / scale));
                         s8 symmetric weights in [-127, 127] stored as int8 initializers
                         `W_quantized` behind DequantizeLinear (per channel: MatMul axis 1,
                         Gemm axis 0 with transB=1, Conv axis 0); Conv/Gemm bias as int32
                         `b_quantized` behind DQ with scale s_x * s_w[c] and zero point 0;
                         one shared Q -> DQ pair per quantized tensor (every consumer reads
                         the DQ); Softmax output fixed at scale 1/256, zero point 0 (QDQSoftmax);
                         Reshape/Transpose/Squeeze/Unsqueeze/Split/Gather outputs take their
                         input's parameters; Relu after a single-consumer producer removed
                         (its range goes to the producer's output Q: QDQRemovableActivation);
                         Where quantized only when both data inputs already are (QDQWhere);
                         float initializers read by a quantized op (an Add's bias, a Concat's
                         constant) quantized as u8 activations, asymmetric, behind DQ.
                         Op types: the union of ORT 1.16's QLinearOps and QDQ registries.
                         Not quantized: LayerNormalization (absent from 1.16's registries),
                         Div, Sub, Pow, Sqrt, Erf, Tanh, ReduceMean, ... (ops outside them),
                         and the nodes given in nodes_to_exclude.
  quantize_dynamic(...)  onnxruntime.quantization.quantize_dynamic (IntegerOps, QOperator
                         format, per_channel=False, weight_type=QInt8): every MatMul whose B is
                         an initializer becomes DynamicQuantizeLinear(A) -> MatMulInteger(A_q,
                         W_quantized, A_zp, W_zp) -> Cast(float) -> Mul(., A_scale * W_scale)
                         (the scales' product by its own Mul node, shared per activation); one
                         DynamicQuantizeLinear per activation tensor; MatMuls of two
                         activations (attention) stay float (MatMulConstBOnly) as does
                         everything else (the bias Add, Softmax, LayerNorm, Gelu).
  modelopt_int8(...)     TensorRT / NVIDIA ModelOpt (pytorch-quantization) int8 export: Q -> DQ
                         only on the inputs of MatMul/Gemm, s8 symmetric with zero point 0,
                         scale = amax / 127 (max |x| over the calibration feeds); a tensor read by
                         several MatMuls gets one Q -> DQ pair per consumer (one input quantizer
                         per module); weights as torch exports nn.Linear: the fp32 weight
                         [N, K] -> Q -> DQ per output channel (axis 0) -> Transpose -> MatMul;
                         the MatMuls of two activations (attention) quantize both inputs;
                         everything else float, bias Add included, graph output float.

Determinism: calibration runs the float graph in float64 numpy; every activation scale is
rounded to 12 significant bits after ORT's formula (as test/models/gen_fixtures.py does), so a
different BLAS summation order cannot change a file. Weights need no rounding (elementwise).
"""
import copy

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# ORT 1.16: QLinearOpsRegistry + QDQRegistry keys (quantize_static's default op_types_to_quantize)
ORT_STATIC_OPS = {
    "ArgMax", "Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Relu", "Clip",
    "LeakyRelu", "Sigmoid", "MaxPool", "GlobalAveragePool", "Split", "Pad", "Reshape", "Squeeze",
    "Unsqueeze", "Resize", "AveragePool", "Concat", "Softmax", "Where", "Gather", "Transpose",
    "EmbedLayerNormalization", "InstanceNormalization",
}
SAME_AS_INPUT = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Split", "Gather", "MaxPool",
                 "Resize", "AveragePool", "Pad"}


# --------------------------------------------------------------------------------------------------
# float64 evaluation of every tensor (calibration)
# --------------------------------------------------------------------------------------------------

def _attrs(nd):
    return {a.name: helper.get_attribute_value(a) for a in nd.attribute}


def eval_node(op, ins, at):
    """One ONNX node in numpy (float64 for float compute). The ops the transformer graphs and
    torch 1.13's exports of them use; gen_fixtures.ref_eval for the rest."""
    f = lambda v: np.asarray(v, np.float64)  # noqa: E731
    if op == "LayerNormalization":
        x = f(ins[0])
        ax = at.get("axis", -1) % x.ndim
        axes = tuple(range(ax, x.ndim))
        mu = x.mean(axis=axes, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mu) / np.sqrt(var + at.get("epsilon", 1e-5)) * f(ins[1])
        return [y + f(ins[2]) if len(ins) > 2 and ins[2] is not None else y]
    if op == "Erf":
        from math import erf
        return [np.vectorize(erf)(f(ins[0]))]
    if op == "Pow":
        return [np.power(f(ins[0]), f(ins[1]))]
    if op == "Sqrt":
        return [np.sqrt(f(ins[0]))]
    if op == "ReduceMean":
        x = f(ins[0])
        axes = at.get("axes", None)
        if axes is None and len(ins) > 1 and ins[1] is not None:
            axes = [int(v) for v in ins[1]]
        axes = tuple(a % x.ndim for a in axes) if axes is not None else None
        return [x.mean(axis=axes, keepdims=bool(at.get("keepdims", 1)))]
    if op == "Where":
        return [np.where(np.asarray(ins[0], bool), ins[1], ins[2])]
    if op == "Split":
        x = ins[0]
        ax = at.get("axis", 0) % x.ndim
        sp = at.get("split")
        if sp is None and len(ins) > 1 and ins[1] is not None:
            sp = [int(v) for v in ins[1]]
        if sp is None:
            n = at.get("num_outputs")
            sp = [x.shape[ax] // n] * n
        return list(np.split(x, np.cumsum(sp)[:-1], axis=ax))
    if op == "Squeeze":
        axes = at.get("axes")
        if axes is None and len(ins) > 1:
            axes = [int(v) for v in ins[1]]
        return [np.squeeze(ins[0], axis=tuple(axes)) if axes is not None else np.squeeze(ins[0])]
    if op == "Slice":
        x = ins[0]
        st, en = [int(v) for v in ins[1]], [int(v) for v in ins[2]]
        axes = [int(v) for v in ins[3]] if len(ins) > 3 and ins[3] is not None else list(range(len(st)))
        steps = [int(v) for v in ins[4]] if len(ins) > 4 and ins[4] is not None else [1] * len(st)
        sl = [slice(None)] * x.ndim
        for s, e, a, k in zip(st, en, axes, steps):
            sl[a % x.ndim] = slice(s, e, k)
        return [x[tuple(sl)]]
    if op == "Cast":
        to = at["to"]
        dt = {TensorProto.FLOAT: np.float64, TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
              TensorProto.BOOL: np.bool_, TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8}[to]
        return [np.asarray(ins[0]).astype(dt)]
    if op == "Constant":
        return [numpy_helper.to_array(at["value"]) if isinstance(at.get("value"), TensorProto)
                else np.asarray(at["value"])]
    if op == "ConstantOfShape":
        v = numpy_helper.to_array(at["value"]) if "value" in at else np.zeros(1, np.float32)
        return [np.full([int(d) for d in ins[0]], v.reshape(-1)[0], v.dtype)]
    if op == "Equal":
        return [np.equal(ins[0], ins[1])]
    if op == "Expand":
        return [ins[0] * np.ones([int(d) for d in ins[1]], ins[0].dtype)]
    if op == "Range":
        return [np.arange(ins[0], ins[1], ins[2])]
    if op == "Neg":
        return [-f(ins[0])]
    if op == "Dropout":
        return [ins[0]]
    if op == "MatMulInteger":
        a = np.asarray(ins[0], np.int64) - (np.asarray(ins[2], np.int64) if len(ins) > 2 else 0)
        b = np.asarray(ins[1], np.int64) - (np.asarray(ins[3], np.int64) if len(ins) > 3 else 0)
        return [np.matmul(a, b).astype(np.int32)]
    if op == "DynamicQuantizeLinear":
        x = np.asarray(ins[0], np.float32)
        lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
        s = np.float32((hi - lo) / 255.0)
        zp = np.uint8(np.clip(np.round(np.float32(0 - lo / s)), 0, 255)) if s else np.uint8(0)
        q = np.clip(np.round(x / s) + zp, 0, 255).astype(np.uint8) if s else np.zeros(x.shape, np.uint8)
        return [q, s, zp]
    from gen_fixtures import ref_eval
    return ref_eval(op, ins, at)


def eval_all(model, feeds):
    """Every tensor of a (topologically sorted) model on feeds: name -> numpy array."""
    vals = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    vals.update(feeds)
    for nd in model.graph.node:
        ins = [vals[i] if i else None for i in nd.input]
        outs = eval_node(nd.op_type, ins, _attrs(nd))
        for name, v in zip(nd.output, outs):
            if name:
                vals[name] = v
    return vals


def round_scale(s):
    """12 significant bits (see the module doc)."""
    s = float(s)
    if s <= 0 or not np.isfinite(s):
        return np.float32(1.0)
    m, e = np.frexp(s)
    return np.float32(np.ldexp(np.round(m * 4096.0) / 4096.0, e))


def minmax(model, calib, names):
    """MinMax calibration (ORT MinMaxCalibrater, no moving average): name -> (min, max) over all
    calibration feeds."""
    r = {}
    for feeds in calib:
        vals = eval_all(model, feeds)
        for n in names:
            v = np.asarray(vals[n], np.float64)
            lo, hi = float(v.min()), float(v.max())
            if n in r:
                lo, hi = min(lo, r[n][0]), max(hi, r[n][1])
            r[n] = (lo, hi)
    return r


def act_params(lo, hi, qtype="u8", symmetric=False):
    """ORT compute_scale_zp for an activation (rounded scale, see the module doc)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    qmin, qmax = (0, 255) if qtype == "u8" else (-128, 127)
    if symmetric:
        a = max(abs(lo), abs(hi))
        lo, hi = -a, a
        if qtype == "i8":
            qmin, qmax = -127, 127
    scale = round_scale((hi - lo) / (qmax - qmin))
    if symmetric:
        zp = int(np.round((qmin + qmax) / 2.0))
    else:
        zp = int(np.round(qmin - lo / np.float64(scale)))
    return scale, int(np.clip(zp, qmin, qmax))


def weight_params(w, axis=None):
    """ORT symmetric int8 weights: [-127, 127], scale = absmax / 127 (float64 -> float32), per
    channel along axis or per tensor; returns (q int8, scale float32 array or scalar)."""
    w = np.asarray(w, np.float32)
    if axis is None:
        a = max(float(np.max(np.abs(w))), 0.0)
        s = np.float32(2 * a / 254.0) if a > 0 else np.float32(1.0)
        q = np.clip(np.round(w / s), -128, 127).astype(np.int8)
        return q, np.array(s, np.float32)
    red = tuple(i for i in range(w.ndim) if i != axis)
    a = np.max(np.abs(w), axis=red).astype(np.float64)
    s = np.where(a > 0, 2 * a / 254.0, 1.0).astype(np.float32)
    sh = [1] * w.ndim
    sh[axis] = -1
    q = np.clip(np.round(w / s.reshape(sh)), -128, 127).astype(np.int8)
    return q, s


# --------------------------------------------------------------------------------------------------
# graph editing helpers
# --------------------------------------------------------------------------------------------------

class Graph:
    def __init__(self, model):
        self.m = model
        self.g = model.graph
        self.inits = {t.name: t for t in self.g.initializer}
        self.outputs = {o.name for o in self.g.output}

    def init(self, name, arr):
        t = numpy_helper.from_array(np.asarray(arr), name)
        self.g.initializer.append(t)
        self.inits[name] = t
        return name

    def init_array(self, name):
        return numpy_helper.to_array(self.inits[name])

    def consumers(self, name):
        return [n for n in self.g.node if name in n.input]

    def producer(self, name):
        return next((n for n in self.g.node if name in n.output), None)

    def drop_init(self, name):
        if name in self.inits and not any(name in n.input for n in self.g.node):
            self.g.initializer.remove(self.inits.pop(name))

    def replace_input(self, old, new, nodes=None):
        for n in (nodes if nodes is not None else self.g.node):
            for i, v in enumerate(n.input):
                if v == old:
                    n.input[i] = new


def topo_sort(model):
    g = model.graph
    avail = {t.name for t in g.initializer} | {i.name for i in g.input} | {""}
    nodes = list(g.node)
    out = []
    while nodes:
        rest = []
        for n in nodes:
            if all(i in avail for i in n.input):
                out.append(n)
                avail.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(nodes):
            raise ValueError("graph has a cycle or a missing input: %s" % [n.name for n in rest][:5])
        nodes = rest
    del g.node[:]
    g.node.extend(out)


def _finish(model, producer):
    topo_sort(model)
    del model.graph.value_info[:]
    model.producer_name = producer
    onnx.checker.check_model(model, full_check=True)
    return model


# --------------------------------------------------------------------------------------------------
# quantize_static, QDQ format (ORT 1.16)
# --------------------------------------------------------------------------------------------------

def quantize_static(model, calib, per_channel=True, op_types=None, nodes_to_exclude=()):
    """See the module doc. model is modified and returned; calib is a list of feed dicts."""
    op_types = ORT_STATIC_OPS if op_types is None else set(op_types)
    # ORT calibrates the float model as given, before any node is removed: a ReLU folded into
    # its producer's quantize (below) keeps its output's range, [0, max], so that the quantize
    # still clips at zero
    calib_model = copy.deepcopy(model)
    G = Graph(model)
    excl = set(nodes_to_exclude)
    todo = {}          # tensor -> ("act", None) | ("w", axis) | ("same", src) | ("fixed", (s, zp))
    bias = {}          # bias init -> (input tensor, weight init, beta)
    quantized = set()  # tensors marked so far (is_tensor_quantized)

    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}

    def is_init(t):
        return t in G.inits

    def float_tensor(t):  # ORT quantizes float tensors only (value_info / initializer type)
        if is_init(t):
            return G.inits[t].data_type == TensorProto.FLOAT
        return types.get(t) == TensorProto.FLOAT

    def mark(t, kind="act", arg=None):
        if t and float_tensor(t) and t not in todo:
            todo[t] = (kind, arg)
            quantized.add(t)

    removed = set()
    for n in list(G.g.node):
        if n.op_type not in op_types or n.name in excl:
            continue
        op = n.op_type
        if op == "MatMul":
            for t in n.input:
                if is_init(t):
                    mark(t, "w", 1 if per_channel else None)
                else:
                    mark(t)
            mark(n.output[0])
        elif op in ("Conv", "Gemm", "ConvTranspose"):
            at = _attrs(n)
            mark(n.input[0])
            axis = 0 if op == "Conv" else (1 if op == "ConvTranspose" else (0 if at.get("transB", 0) else 1))
            if is_init(n.input[1]):
                mark(n.input[1], "w", axis if per_channel else None)
            else:
                mark(n.input[1])
            if len(n.input) > 2 and n.input[2] and is_init(n.input[2]):
                bias[n.input[2]] = (n.input[0], n.input[1], at.get("beta", 1.0) if op == "Gemm" else 1.0)
            mark(n.output[0])
        elif op in SAME_AS_INPUT:
            if n.input[0] in quantized:
                for o in n.output:
                    mark(o, "same", n.input[0])
        elif op in ("Relu", "Clip"):
            src = n.input[0]
            if src not in quantized:
                continue
            prod = G.producer(src)
            if (prod is not None and src not in G.outputs and len(G.consumers(src)) == 1
                    and todo.get(src, ("act",))[0] == "act"):
                # QDQRemovableActivation: the producer writes the activation's output
                prod.output[list(prod.output).index(src)] = n.output[0]
                del todo[src]
                quantized.discard(src)
                removed.add(n.name)
                mark(n.output[0])
            else:
                mark(src)
                mark(n.output[0])
        elif op == "Softmax":
            mark(n.input[0])
            mark(n.output[0], "fixed", (np.float32(1 / 256.0), 0))
        elif op == "Where":
            if n.input[1] in quantized and n.input[2] in quantized:
                mark(n.output[0])
        else:  # QDQOperatorBase: every input and output
            for t in n.input:
                if t and not (is_init(t) and G.inits[t].data_type != TensorProto.FLOAT):
                    mark(t)
            for o in n.output:
                mark(o)
    for n in [n for n in G.g.node if n.name in removed]:
        G.g.node.remove(n)

    acts = [t for t, (k, a) in todo.items() if k == "act" and not is_init(t)]
    rng = minmax(calib_model, calib, acts)
    params = {}
    for t, (k, a) in todo.items():
        if k == "act" and not is_init(t):
            params[t] = act_params(*rng[t])
        elif k == "fixed":
            params[t] = a
    for t, (k, a) in todo.items():
        if k == "same":
            src = a
            while todo.get(src, ("",))[0] == "same":
                src = todo[src][1]
            params[t] = params[src]

    # weights and float initializers
    wscale = {}
    for t, (k, a) in list(todo.items()):
        if not is_init(t):
            continue
        w = G.init_array(t)
        if k == "w":
            q, s = weight_params(w, a)
            zp = np.zeros(s.shape, np.int8)
        else:  # a float initializer read as an activation: u8 asymmetric
            s, z = act_params(float(w.min()), float(w.max()))
            s = np.array(s, np.float32)
            zp = np.array(z, np.uint8)
            q = np.clip(np.round(w.astype(np.float32) / s) + z, 0, 255).astype(np.uint8)
        wscale[t] = s
        G.init(t + "_quantized", q)
        G.init(t + "_scale", s)
        G.init(t + "_zero_point", zp)
        attrs = {"axis": a} if k == "w" and a is not None else {}
        G.g.node.append(helper.make_node("DequantizeLinear", [t + "_quantized", t + "_scale", t + "_zero_point"],
                                         [t + "_DequantizeLinear_Output"], t + "_DequantizeLinear", **attrs))
        G.replace_input(t, t + "_DequantizeLinear_Output")
        G.drop_init(t)

    # int32 biases (Conv/Gemm): scale s_x * s_w * beta, zero point 0
    for b, (x, w, beta) in bias.items():
        bv = G.init_array(b)
        bs = (np.float32(params[x][0]) * wscale[w] * np.float32(beta)).astype(np.float32)
        bq = np.clip(np.round(bv.astype(np.float64) / bs.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
        G.init(b + "_quantized", bq)
        G.init(b + "_quantized_scale", bs.reshape(-1) if bs.size > 1 else bs.reshape(()))
        G.init(b + "_quantized_zero_point", np.zeros(bs.size, np.int32) if bs.size > 1 else np.array(0, np.int32))
        attrs = {"axis": 0} if bs.size > 1 else {}
        G.g.node.append(helper.make_node("DequantizeLinear", [b + "_quantized", b + "_quantized_scale",
                                                              b + "_quantized_zero_point"], [b + "_DequantizeLinear_Output"],
                                         b + "_DequantizeLinear", **attrs))
        G.replace_input(b, b + "_DequantizeLinear_Output")
        G.drop_init(b)

    # activation Q -> DQ pairs, one per tensor, shared by every consumer
    for t in todo:
        if is_init(t) or t not in params:
            continue
        s, zp = params[t]
        qt = np.uint8 if (todo[t][0] != "fixed" or zp >= 0) else np.int8
        G.init(t + "_scale", np.array(s, np.float32))
        G.init(t + "_zero_point", np.array(zp, qt))
        src = t
        if t in G.outputs:  # a graph output: the producer writes t_QuantizeLinear_Input, DQ writes t
            src = t + "_QuantizeLinear_Input"
            for n in G.g.node:
                for i, o in enumerate(n.output):
                    if o == t:
                        n.output[i] = src
            G.replace_input(t, src)
            dq_out = t
        else:
            dq_out = t + "_DequantizeLinear_Output"
            G.replace_input(t, dq_out)
        G.g.node.append(helper.make_node("QuantizeLinear", [src, t + "_scale", t + "_zero_point"],
                                         [t + "_QuantizeLinear_Output"], t + "_QuantizeLinear"))
        G.g.node.append(helper.make_node("DequantizeLinear", [t + "_QuantizeLinear_Output", t + "_scale",
                                                              t + "_zero_point"], [dq_out], t + "_DequantizeLinear"))
    return _finish(model, "onnx.quantize (qdqc ort_quant.py, onnxruntime 1.16 quantize_static QDQ)")


# --------------------------------------------------------------------------------------------------
# quantize_dynamic (IntegerOps)
# --------------------------------------------------------------------------------------------------

def quantize_dynamic(model):
    G = Graph(model)
    dq = {}  # activation -> (q, scale, zp)
    wq = {}  # weight -> (q, scale, zp)
    new = []
    for n in list(G.g.node):
        if n.op_type != "MatMul" or n.input[1] not in G.inits or n.input[0] in G.inits:
            new.append(n)
            continue
        a, w = n.input
        if a not in dq:
            dq[a] = (a + "_quantized", a + "_scale", a + "_zero_point")
            new.append(helper.make_node("DynamicQuantizeLinear", [a], list(dq[a]), a + "_QuantizeLinear"))
        if w not in wq:
            q, s = weight_params(G.init_array(w))
            G.init(w + "_quantized", q)
            G.init(w + "_scale", s)
            G.init(w + "_zero_point", np.array(0, np.int8))
            wq[w] = (w + "_quantized", w + "_scale", w + "_zero_point")
        name = n.name + "_quant"
        mi = n.output[0] + "_output_quantized"
        new.append(helper.make_node("MatMulInteger", [dq[a][0], wq[w][0], dq[a][2], wq[w][2]], [mi], name))
        new.append(helper.make_node("Cast", [mi], [mi + "_cast_output"], mi + "_cast", to=TensorProto.FLOAT))
        new.append(helper.make_node("Mul", [dq[a][1], wq[w][1]], [name + "_scales_mul:0"], name + "_scales_mul"))
        new.append(helper.make_node("Mul", [mi + "_cast_output", name + "_scales_mul:0"], [n.output[0]],
                                    name + "_output_scale_mul"))
    del G.g.node[:]
    G.g.node.extend(new)
    for w in wq:
        G.drop_init(w)
    return _finish(model, "onnx.quantize (qdqc ort_quant.py, onnxruntime 1.16 quantize_dynamic)")


# --------------------------------------------------------------------------------------------------
# TensorRT / ModelOpt int8
# --------------------------------------------------------------------------------------------------

def modelopt_int8(model, calib, linear_weights="transpose"):
    """See the module doc. linear_weights='transpose': MatMul weights [K, N] are stored as the
    module's [N, K] behind Q -> DQ (axis 0) and a Transpose, as torch exports a fake-quantized
    nn.Linear on a 3-D input."""
    G = Graph(model)
    targets = []  # (node, input index)
    for n in G.g.node:
        if n.op_type in ("MatMul", "Gemm"):
            for i in range(2):
                targets.append((n, i))
    acts = sorted({n.input[i] for n, i in targets if n.input[i] not in G.inits})
    rng = minmax(model, calib, acts)
    k = 0
    for n, i in targets:
        t = n.input[i]
        k += 1
        base = "%s_input%d" % (n.name, i)
        if t in G.inits:
            w = G.init_array(t).astype(np.float32)
            trans = n.op_type == "MatMul" and linear_weights == "transpose"
            wn = w.T.copy() if trans else w  # [N, K] as the module holds it
            axis = 0 if (trans or (n.op_type == "Gemm" and _attrs(n).get("transB", 0))) else 1
            _, s = weight_params(wn, axis)
            G.init(base + "_weight", wn)
            G.init(base + "_weight_scale", s)
            G.init(base + "_weight_zero_point", np.zeros(s.shape, np.int8))
            q = helper.make_node("QuantizeLinear", [base + "_weight", base + "_weight_scale", base + "_weight_zero_point"],
                                 [base + "_weight_q"], base + "_weight_QuantizeLinear", axis=axis)
            d = helper.make_node("DequantizeLinear", [base + "_weight_q", base + "_weight_scale",
                                                      base + "_weight_zero_point"], [base + "_weight_dq"],
                                 base + "_weight_DequantizeLinear", axis=axis)
            G.g.node.extend([q, d])
            src = base + "_weight_dq"
            if trans:
                G.g.node.append(helper.make_node("Transpose", [src], [base + "_weight_t"], base + "_weight_Transpose",
                                                 perm=[1, 0]))
                src = base + "_weight_t"
            n.input[i] = src
            G.drop_init(t)
        else:
            lo, hi = rng[t]
            amax = max(abs(lo), abs(hi))
            s = round_scale(amax / 127.0)
            G.init(base + "_scale", np.array(s, np.float32))
            G.init(base + "_zero_point", np.array(0, np.int8))
            G.g.node.append(helper.make_node("QuantizeLinear", [t, base + "_scale", base + "_zero_point"],
                                             [base + "_q"], base + "_QuantizeLinear"))
            G.g.node.append(helper.make_node("DequantizeLinear", [base + "_q", base + "_scale", base + "_zero_point"],
                                             [base + "_dq"], base + "_DequantizeLinear"))
            n.input[i] = base + "_dq"
    return _finish(model, "pytorch-quantization (qdqc ort_quant.py, TensorRT/ModelOpt int8 export)")
