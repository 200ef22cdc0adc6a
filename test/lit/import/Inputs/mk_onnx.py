#!/usr/bin/python3
"""mk_onnx.py CASE OUT: write one small ONNX model used by the import lit tests.
mk_onnx.py npy OUT DTYPE V,V,...|arange [D0xD1...]: write a .npy array (for --const-input).

Each case is a function below; models are built with python3-onnx's helper API (no
checker, so deliberately broken models can be written too). Run with /usr/bin/python3."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh


def model(nodes, inputs, outputs, inits=(), opset=13, ir=7, extra_opsets=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    m = h.make_model(g, opset_imports=ops, producer_name="mk_onnx")
    m.ir_version = ir
    return m


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def f32(name, shape):
    return vi(name, TP.FLOAT, shape)


def init(name, arr, raw=True):
    t = nh.from_array(np.asarray(arr), name)
    if not raw:
        # typed fields instead of raw_data
        t = h.make_tensor(name, t.data_type, list(np.asarray(arr).shape),
                          np.asarray(arr).flatten().tolist(), raw=False)
    return t


def qdq_conv(opset=13, per_channel=True, scale_shape=(1,), dtype=np.int8):
    """PyTorch-style: Q->DQ on the activation, per-channel int8 weight behind DQ, fp32 bias."""
    w = (np.arange(8 * 3 * 3 * 3) % 11 - 5).astype(np.int8).reshape(8, 3, 3, 3)
    ws = (np.arange(8) + 1).astype(np.float32) * 0.01 if per_channel else np.array(0.02, np.float32)
    wz = np.zeros(8 if per_channel else (), np.int8)
    inits = [init("w_q", w), init("w_scale", ws), init("w_zp", wz),
             init("x_scale", np.full(scale_shape, 0.05, np.float32)),
             init("x_zp", np.full(scale_shape, 3 if dtype == np.uint8 else 0, dtype)),
             init("b", np.linspace(-1, 1, 8).astype(np.float32))]
    nodes = [h.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["x_q"], name="q_x"),
             h.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zp"], ["x_dq"], name="dq_x"),
             h.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w_dq"], name="dq_w",
                         axis=0),
             h.make_node("Conv", ["x_dq", "w_dq", "b"], ["y"], name="conv", pads=[1, 1, 1, 1])]
    return model(nodes, [f32("x", [1, 3, 8, 8])], [f32("y", [1, 8, 8, 8])], inits, opset=opset)


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def qdq_conv_pc():
    return qdq_conv()


@case
def qdq_conv_u8_scalar():
    return qdq_conv(per_channel=False, scale_shape=(), dtype=np.uint8)


def qclip(lo=None, hi=127):
    """PyTorch's export of a reduce_range fake quantizer (fbgemm/x86 QAT qconfig, u8 [0, 127]):
    QuantizeLinear(u8) -> Clip(min absent, max=uint8 127) -> DequantizeLinear, on the input
    and on the Conv's output (x = arange(-2, 14.2, 0.25): both clamps bite)."""
    w = (np.arange(4 * 2 * 3 * 3) % 7 - 3).astype(np.float32).reshape(4, 2, 3, 3) * 0.1
    inits = [init("s", np.array([0.0625], np.float32)), init("z", np.array([32], np.uint8)),
             init("ys", np.array([0.03125], np.float32)), init("yz", np.array([10], np.uint8)),
             init("hi", np.array(hi, np.uint8)), init("w", w),
             init("ws", np.full(4, 0.1, np.float32)), init("wz", np.zeros(4, np.int8)),
             init("b", np.linspace(-1, 5, 4).astype(np.float32))]
    if lo is not None:
        inits.append(init("lo", np.array(lo, np.uint8)))
    lo_in = "lo" if lo is not None else ""

    def fq(x, s, z, tag):
        return [h.make_node("QuantizeLinear", [x, s, z], [tag + "_q"], name=tag + "/QuantizeLinear"),
                h.make_node("Clip", [tag + "_q", lo_in, "hi"], [tag + "_c"], name=tag + "/Clip"),
                h.make_node("DequantizeLinear", [tag + "_c", s, z], [tag + "_dq"],
                            name=tag + "/DequantizeLinear")]
    nodes = fq("x", "s", "z", "in") + [
        h.make_node("QuantizeLinear", ["w", "ws", "wz"], ["w_q"], name="w/QuantizeLinear", axis=0),
        h.make_node("DequantizeLinear", ["w_q", "ws", "wz"], ["w_dq"], name="w/DequantizeLinear", axis=0),
        h.make_node("Conv", ["in_dq", "w_dq", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])] + \
        fq("c", "ys", "yz", "out")
    return model(nodes, [f32("x", [1, 2, 3, 3])], [f32("out_dq", [1, 4, 3, 3])], inits)


@case
def qclip_reduce_range():
    return qclip()


@case
def qclip_both_bounds():
    return qclip(lo=40, hi=100)


@case
def qclip_empty():
    """bounds that leave nothing of the u8 range: stays an integer Clip (refused)"""
    return qclip(lo=120, hi=100)


@case
def qdq_typed_fields():
    m = qdq_conv()
    for i, t in enumerate(m.graph.initializer):
        arr = nh.to_array(t)
        m.graph.initializer[i].CopyFrom(init(t.name, arr, raw=False))
    return m


@case
def ms_domain_qdq():
    m = qdq_conv()
    for n in m.graph.node:
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            n.domain = "com.microsoft"
    m.opset_import.append(h.make_opsetid("com.microsoft", 1))
    return m


@case
def qlinear_conv_static():
    """ONNX Runtime QOperator layout: QLinearConv with constant parameters and int32 bias."""
    inits = [init("xs", np.array(0.1, np.float32)), init("xz", np.array(128, np.uint8)),
             init("w", (np.arange(4 * 2 * 1 * 1) % 5).astype(np.int8).reshape(4, 2, 1, 1)),
             init("ws", np.array([0.5, 0.25, 0.125, 1.0], np.float32)),
             init("wz", np.zeros(4, np.int8)),
             init("ys", np.array(0.2, np.float32)), init("yz", np.array(120, np.uint8)),
             init("bias", np.array([1, -2, 3, -4], np.int32))]
    nodes = [h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"],
                         ["y"], name="qconv")]
    return model(nodes, [vi("x", TP.UINT8, [1, 2, 4, 4])], [vi("y", TP.UINT8, [1, 4, 4, 4])],
                 inits)


@case
def conv_integer_static():
    inits = [init("w", (np.arange(4 * 2 * 3 * 3) % 7 - 3).astype(np.int8).reshape(4, 2, 3, 3)),
             init("xz", np.array(7, np.uint8)), init("wz", np.array([0, 1, 2, 3], np.int8))]
    nodes = [h.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], name="ci",
                         pads=[1, 1, 1, 1])]
    return model(nodes, [vi("x", TP.UINT8, [1, 2, 5, 5])], [vi("y", TP.INT32, [1, 4, 5, 5])],
                 inits, opset=10)


@case
def matmul_integer_static():
    inits = [init("b", (np.arange(6 * 3) % 9 - 4).astype(np.int8).reshape(6, 3)),
             init("az", np.array(10, np.uint8)), init("bz", np.array([1, 2, 3], np.int8))]
    nodes = [h.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"], name="mmi")]
    return model(nodes, [vi("a", TP.UINT8, [2, 6])], [vi("y", TP.INT32, [2, 3])], inits, opset=10)


@case
def matmul_integer_dynamic():
    """ONNX Runtime's quantize_dynamic: a's zero point from DynamicQuantizeLinear (run-time),
    constant u8 weights with one zero point per column."""
    inits = [init("b", (np.arange(6 * 3) % 200).astype(np.uint8).reshape(6, 3)),
             init("bz", np.array([1, 2, 3], np.uint8))]
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["a", "as", "az"], name="dql"),
             h.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"], name="mmi")]
    return model(nodes, [f32("x", [2, 6])], [vi("y", TP.INT32, [2, 3])], inits, opset=11)


@case
def matmul_integer_per_row():
    """a_zero_point with one value per row of A (ONNX allows it; refused)"""
    nodes = [h.make_node("MatMulInteger", ["a", "b", "az"], ["y"], name="mmi")]
    return model(nodes, [vi("a", TP.UINT8, [2, 6]), vi("b", TP.INT8, [6, 3]), vi("az", TP.UINT8, [2])],
                 [vi("y", TP.INT32, [2, 3])], opset=10)


@case
def matmul_integer_zb_shape():
    """b_zero_point [1, N] instead of one value or [N] (refused)"""
    nodes = [h.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"], name="mmi")]
    return model(nodes, [vi("a", TP.UINT8, [2, 6]), vi("b", TP.INT8, [6, 3]), vi("az", TP.UINT8, []),
                         vi("bz", TP.INT8, [1, 3])], [vi("y", TP.INT32, [2, 3])], opset=10)


@case
def shape_chain():
    """PyTorch flatten with dynamic axes: Shape->Gather->Unsqueeze->Concat->Reshape."""
    inits = [init("idx0", np.array(0, np.int64)), init("minus1", np.array([-1], np.int64))]
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "idx0"], ["n"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
             h.make_node("Concat", ["n1", "minus1"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")]
    inits.append(init("ax0", np.array([0], np.int64)))
    return model(nodes, [f32("x", ["batch", 2, 3, 4])], [f32("y", ["batch", 24])], inits)


@case
def shape_arith():
    """Shape math with Div/Mul (PyTorch chunk): x[:, :C/2]."""
    inits = [init("i1", np.array([1], np.int64)), init("two", np.array([2], np.int64)),
             init("zero", np.array([0], np.int64))]
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i1"], ["c"], name="gather"),
             h.make_node("Div", ["c", "two"], ["half"], name="div"),
             h.make_node("Slice", ["x", "zero", "half", "i1"], ["y"], name="slice")]
    return model(nodes, [f32("x", [1, 6, 2])], [f32("y", [1, 3, 2])], inits)


@case
def const_input():
    """Parameters as graph inputs: Reshape's shape, and Slice's starts through an Add (folds
    once frozen with --const-input); 'st' has a dynamic dimension."""
    inits = [init("one", np.array([1], np.int64)), init("ends", np.array([5], np.int64)),
             init("axes", np.array([1], np.int64))]
    nodes = [h.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
             h.make_node("Add", ["st", "one"], ["st1"], name="add"),
             h.make_node("Slice", ["r", "st1", "ends", "axes"], ["y"], name="slice")]
    return model(nodes, [f32("x", [2, 6]), vi("shape", TP.INT64, [2]),
                         vi("st", TP.INT64, ["k"])], [f32("y", None)], inits)


@case
def unsupported():
    nodes = [h.make_node("TopK", ["x", "k"], ["v", "i"], name="topk"),
             h.make_node("NonMaxSuppression", ["b", "s"], ["sel"], name="nms_0"),
             h.make_node("NonMaxSuppression", ["b", "s"], ["sel2"], name="nms_1"),
             h.make_node("Relu", ["x"], ["r"], name="relu")]
    return model(nodes, [f32("x", [4]), vi("k", TP.INT64, [1]), f32("b", [1, 2, 4]),
                         f32("s", [1, 1, 2])],
                 [f32("v", [2]), vi("sel", TP.INT64, [2, 3]), vi("sel2", TP.INT64, [2, 3]),
                  f32("r", [4])], opset=13)


@case
def dynamic_batch():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", ["N", 3, 4, 4])], [f32("y", ["N", 3, 4, 4])])


@case
def symbolic_linear():
    """A QDQ linear over [batch, seq, 64] whose result is flattened to [batch*seq, 32] through
    the Shape -> Gather -> Mul -> Concat -> Reshape chain torch exports write."""
    w = np.random.default_rng(0).integers(-127, 128, size=(64, 32)).astype(np.int8)
    inits = [init("xs", np.float32(0.05)), init("xz", np.uint8(128)), init("w", w),
             init("ws", np.float32(0.01)), init("wz", np.int8(0)), init("ys", np.float32(0.2)),
             init("yz", np.uint8(128)), init("i0", np.array([0], np.int64)),
             init("i1", np.array([1], np.int64)), init("m1", np.array([-1], np.int64))]
    nodes = [
        h.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
        h.make_node("MatMul", ["xd", "wd"], ["mm"]),
        h.make_node("Relu", ["mm"], ["r"]),
        h.make_node("QuantizeLinear", ["r", "ys", "yz"], ["rq"]),
        h.make_node("DequantizeLinear", ["rq", "ys", "yz"], ["rd"]),
        h.make_node("Shape", ["rd"], ["shp"]),
        h.make_node("Gather", ["shp", "i0"], ["b"]),
        h.make_node("Gather", ["shp", "i1"], ["s"]),
        h.make_node("Mul", ["b", "s"], ["bs"]),
        h.make_node("Concat", ["bs", "m1"], ["newshape"], axis=0),
        h.make_node("Reshape", ["rd", "newshape"], ["y"], name="flatten_tokens"),
    ]
    return model(nodes, [f32("x", ["batch size", "seq", 64])], [f32("y", [None, 32])], inits)


@case
def symbolic_mask_chain():
    """The index and mask arithmetic of transformers' exports on an [batch, seq] input: Range
    to a length read from Shape, ConstantOfShape of a symbolic shape, a Slice to a symbolic end,
    Flatten, and the Equal(shape, -1) -> Where -> Expand idiom."""
    i64 = lambda name, v: init(name, np.array(v, np.int64))
    inits = [i64("one", [1]), i64("zero_s", 0), i64("one_s", 1), i64("m1", [-1]),
             i64("m1x3", [-1, -1, -1]), i64("ones3", [1, 1, 1]), i64("ax0", [0]),
             i64("ax1", [1]), init("buf", np.arange(512, dtype=np.int64)[None])]
    nodes = [
        h.make_node("Shape", ["x"], ["shp"]),
        h.make_node("Gather", ["shp", "one_s"], ["seq"]),
        h.make_node("Gather", ["shp", "zero_s"], ["bat"]),
        h.make_node("Range", ["zero_s", "seq", "one_s"], ["r"], name="range"),
        h.make_node("ConstantOfShape", ["shp"], ["zeros"], name="zeros",
                    value=h.make_tensor("v", TP.INT64, [1], [0])),
        h.make_node("Unsqueeze", ["seq", "ax0"], ["seq1"]),
        h.make_node("Unsqueeze", ["bat", "ax0"], ["bat1"]),
        h.make_node("Slice", ["buf", "ax0", "seq1", "ax1"], ["pos"], name="pos"),
        h.make_node("Add", ["pos", "x"], ["posx"]),
        h.make_node("Add", ["posx", "zeros"], ["y0"]),
        h.make_node("Flatten", ["y0"], ["flat"], name="flat", axis=0),
        h.make_node("Concat", ["bat1", "m1", "seq1"], ["ex"], axis=0),
        h.make_node("Equal", ["ex", "m1x3"], ["eq"]),
        h.make_node("Where", ["eq", "ones3", "ex"], ["tgt"]),
        h.make_node("Expand", ["r", "tgt"], ["y1"], name="expand"),
    ]
    return model(nodes, [vi("x", TP.INT64, ["batch", "seq"])],
                 [vi("flat", TP.INT64, None), vi("y1", TP.INT64, None)], inits)


def symbolic_reshape(shape):
    nodes = [h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")]
    return model(nodes, [f32("x", ["batch", 6])], [f32("y", None)],
                 [init("shape", np.array(shape, np.int64))])


@case
def symbolic_reshape_two_neg():
    return symbolic_reshape([-1, -1])


@case
def symbolic_reshape_indivisible():
    return symbolic_reshape([-1, 4])


@case
def symbolic_expand():
    """Expand to a shape read from the input: the result's shape is symbolic."""
    nodes = [h.make_node("Shape", ["x"], ["shp"]),
             h.make_node("ConstantOfShape", ["shp"], ["ones"], name="fill")]
    return model(nodes, [f32("x", ["batch", 4])], [f32("ones", ["batch", 4])])


@case
def output_decl_shape():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [1, 3, 4, 4])], [f32("y", [1, 3, 4, 5])])


@case
def output_decl_rank():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [1, 3, 4, 4])], [f32("y", [1, 3, 16])])


@case
def output_decl_type():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [1, 3, 4, 4])], [vi("y", TP.INT8, [1, 3, 4, 4])])


@case
def output_decl_symbolic():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [1, 3, 4, 4])], [f32("y", ["batch", 3, None, 4])])


@case
def opset9():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [2])], [f32("y", [2])], opset=9)


@case
def opset22():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [2])], [f32("y", [2])], opset=22)


@case
def ir_version_2():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [2])], [f32("y", [2])], ir=2)


@case
def ir_version_11():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [2])], [f32("y", [2])], ir=11)


@case
def ir3_opset10():
    """The oldest accepted versions: IR 3 lists initializers among the graph inputs."""
    w = init("w", np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2))
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             h.make_node("Relu", ["c"], ["y"], name="relu")]
    return model(nodes, [f32("x", [1, 1, 3, 3]), f32("w", [2, 1, 2, 2])],
                 [f32("y", [1, 2, 2, 2])], [w], opset=10, ir=3)


@case
def ir10_opset21():
    """The newest accepted versions, with opset 21's QuantizeLinear attributes: saturate (only
    meaningful for float8), per-axis parameters, block_size 0 (no blocks)."""
    inits = [init("s", np.array([0.5, 0.25], np.float32)), init("z", np.array([1, -1], np.int8))]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q", axis=1,
                         saturate=1, block_size=0),
             h.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq", axis=1)]
    return model(nodes, [f32("x", [3, 2])], [f32("y", [3, 2])], inits, opset=21, ir=10)


@case
def block_quant():
    inits = [init("s", np.full((4, 2), 0.5, np.float32)), init("z", np.zeros((4, 2), np.int8))]
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq_block", axis=1,
                         block_size=2)]
    return model(nodes, [vi("w", TP.INT8, [4, 4])], [f32("y", [4, 4])], inits, opset=21, ir=10)


def packed4(name, dt, dims, vals, field="raw"):
    """A 4-bit initializer (data type 21 UINT4 / 22 INT4, which python3-onnx 1.12 does not
    name): two values per byte, low nibble first; an odd count leaves the last high nibble 0.
    field: "raw" (raw_data) or "int32" (one packed byte per int32_data entry)."""
    v = [int(a) & 15 for a in vals]
    if len(v) % 2:
        v.append(0)
    b = bytes(v[i] | (v[i + 1] << 4) for i in range(0, len(v), 2))
    t = TP()
    t.name, t.data_type = name, dt
    t.dims.extend(dims)
    if field == "raw":
        t.raw_data = b
    else:
        t.int32_data.extend(b)
    return t


def dq4(w, zp, opset=21):
    """DequantizeLinear(w, 0.5, zp) of a constant 4-bit or 16-bit weight."""
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "zp"], ["y"], name="dq")]
    return model(nodes, [], [f32("y", list(w.dims))], [w, init("s", np.float32(0.5)), zp],
                 opset=opset, ir=10)


@case
def int4_odd_raw():
    return dq4(packed4("w", 22, [5], [-8, -1, 0, 3, 7]), packed4("zp", 22, [], [-1]))


@case
def int4_odd_int32():
    return dq4(packed4("w", 22, [1, 5], [-8, -1, 0, 3, 7], "int32"),
               packed4("zp", 22, [], [-1], "int32"))


@case
def uint4_odd_raw():
    return dq4(packed4("w", 21, [3], [15, 0, 9]), packed4("zp", 21, [], [8]))


@case
def int4_raw_short():
    w = packed4("w", 22, [5], [1, 2, 3, 4])  # 2 bytes for 5 values (3 needed)
    return dq4(w, packed4("zp", 22, [], [0]))


@case
def int4_raw_long():
    w = packed4("w", 22, [4], [1, 2, 3, 4, 5, 6])  # 3 bytes for 4 values
    return dq4(w, packed4("zp", 22, [], [0]))


@case
def int4_int32_count():
    w = packed4("w", 22, [5], [1, 2, 3, 4], "int32")  # 2 entries for 5 values
    return dq4(w, packed4("zp", 22, [], [0], "int32"))


@case
def int4_int32_range():
    w = packed4("w", 22, [2], [1, 2], "int32")
    w.int32_data[0] = 256  # a packed pair is one byte
    return dq4(w, packed4("zp", 22, [], [0], "int32"))


@case
def int16_raw_odd_bytes():
    w = TP()
    w.name, w.data_type = "w", TP.INT16
    w.dims.extend([3])
    w.raw_data = bytes(5)
    return dq4(w, nh.from_array(np.int16(0), "zp"))


@case
def int16_int32_range():
    w = TP()
    w.name, w.data_type = "w", TP.INT16
    w.dims.extend([2])
    w.int32_data.extend([1, 40000])
    return dq4(w, nh.from_array(np.int16(0), "zp"))


@case
def block_quant_bad_shape():
    inits = [init("s", np.full((4, 3), 0.5, np.float32)), init("z", np.zeros((4, 3), np.int8))]
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq_block", axis=1,
                         block_size=2)]
    return model(nodes, [vi("w", TP.INT8, [4, 4])], [f32("y", [4, 4])], inits, opset=21, ir=10)


@case
def block_quant_negative():
    inits = [init("s", np.full((4, 2), 0.5, np.float32)), init("z", np.zeros((4, 2), np.int8))]
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq_block", axis=1,
                         block_size=-2)]
    return model(nodes, [vi("w", TP.INT8, [4, 4])], [f32("y", [4, 4])], inits, opset=21, ir=10)


@case
def block_quant_rank():
    inits = [init("s", np.full((2,), 0.5, np.float32)), init("z", np.zeros((2,), np.int8))]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q_block", axis=1,
                         block_size=2)]
    return model(nodes, [f32("x", [4, 4])], [vi("y", TP.INT8, [4, 4])], inits, opset=21, ir=10)


@case
def block_quant_zero_scale():
    s = np.full((4, 2), 0.5, np.float32)
    s[1, 1] = 0
    nodes = [h.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q_block", axis=1,
                         block_size=2, output_dtype=TP.INT16)]
    return model(nodes, [f32("x", [4, 4])], [vi("y", TP.INT16, [4, 4])], [init("s", s)],
                 opset=21, ir=10)


@case
def block_quant_no_block():
    inits = [init("s", np.full((4, 2), 0.5, np.float32)), init("z", np.zeros((4, 2), np.int8))]
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq_block", axis=1)]
    return model(nodes, [vi("w", TP.INT8, [4, 4])], [f32("y", [4, 4])], inits, opset=21, ir=10)


@case
def resize_cubic():
    inits = [init("roi", np.zeros(0, np.float32)), init("scales", np.array([1, 1, 2, 2], np.float32))]
    nodes = [h.make_node("Resize", ["x", "roi", "scales"], ["y"], name="up", mode="cubic")]
    return model(nodes, [f32("x", [1, 1, 2, 2])], [f32("y", [1, 1, 4, 4])], inits)


@case
def resize_nearest():
    inits = [init("roi", np.zeros(0, np.float32)), init("scales", np.array([1, 1, 2, 2], np.float32))]
    nodes = [h.make_node("Resize", ["x", "roi", "scales"], ["y"], name="up", mode="nearest")]
    return model(nodes, [f32("x", [1, 1, 2, 2])], [f32("y", [1, 1, 4, 4])], inits)


@case
def resize_linear_sizes():
    inits = [init("roi", np.zeros(0, np.float32)), init("scales", np.zeros(0, np.float32)),
             init("sizes", np.array([1, 1, 3, 5], np.int64))]
    nodes = [h.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], name="up",
                         mode="linear", coordinate_transformation_mode="align_corners")]
    return model(nodes, [f32("x", [1, 1, 2, 2])], [f32("y", [1, 1, 3, 5])], inits)


@case
def resize_fractional():
    inits = [init("roi", np.zeros(0, np.float32)), init("scales", np.array([1, 1, 1.5, 1.5], np.float32))]
    nodes = [h.make_node("Resize", ["x", "roi", "scales"], ["y"], name="up", mode="nearest")]
    return model(nodes, [f32("x", [1, 1, 5, 5])], [f32("y", [1, 1, 7, 7])], inits)


@case
def resize_crop():
    inits = [init("roi", np.array([0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7], np.float32)),
             init("sizes", np.array([1, 1, 3, 3], np.int64))]
    nodes = [h.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="crop", mode="linear",
                         coordinate_transformation_mode="tf_crop_and_resize",
                         extrapolation_value=2.5)]
    return model(nodes, [f32("x", [1, 1, 4, 4])], [f32("y", [1, 1, 3, 3])], inits)


@case
def maxpool_indices():
    nodes = [h.make_node("MaxPool", ["x"], ["y", "idx"], name="pool", kernel_shape=[2, 2])]
    return model(nodes, [f32("x", [1, 1, 4, 4])], [f32("y", [1, 1, 3, 3]),
                                                    vi("idx", TP.INT64, [1, 1, 3, 3])])


@case
def maxpool_indices_colmajor():
    nodes = [h.make_node("MaxPool", ["x"], ["y", "idx"], name="pool", kernel_shape=[3, 2],
                         strides=[2, 2], pads=[1, 0, 1, 0], storage_order=1)]
    return model(nodes, [f32("x", [2, 3, 5, 4])], [f32("y", [2, 3, 3, 2]),
                                                    vi("idx", TP.INT64, [2, 3, 3, 2])])


@case
def maxpool_storage_order_bad():
    nodes = [h.make_node("MaxPool", ["x"], ["y", "idx"], name="pool", kernel_shape=[2, 2],
                         storage_order=2)]
    return model(nodes, [f32("x", [1, 1, 4, 4])], [f32("y", [1, 1, 3, 3]),
                                                    vi("idx", TP.INT64, [1, 1, 3, 3])])


@case
def bn_training():
    inits = [init(n, np.ones(2, np.float32)) for n in ("s", "b", "m", "v")]
    nodes = [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                         name="bn", training_mode=1)]
    return model(nodes, [f32("x", [1, 2, 2, 2])], [f32("y", [1, 2, 2, 2])], inits, opset=15)


@case
def conv_autopad():
    inits = [init("w", np.ones((2, 1, 3, 3), np.float32))]
    nodes = [h.make_node("Conv", ["x", "w"], ["y"], name="conv_same", auto_pad="SAME_LOWER",
                         strides=[2, 2])]
    return model(nodes, [f32("x", [1, 1, 6, 6])], [f32("y", [1, 2, 3, 3])], inits)


@case
def softmax_opset11():
    nodes = [h.make_node("Softmax", ["x"], ["y"], name="sm")]
    return model(nodes, [f32("x", [2, 3, 4])], [f32("y", [2, 3, 4])], opset=11)


@case
def clip_inputs():
    inits = [init("lo", np.array(0.0, np.float32)), init("hi", np.array(6.0, np.float32))]
    nodes = [h.make_node("Clip", ["x", "lo", "hi"], ["y"], name="relu6")]
    return model(nodes, [f32("x", [4])], [f32("y", [4])], inits)


@case
def clip_attrs():
    nodes = [h.make_node("Clip", ["x"], ["y"], name="relu6", min=0.0, max=6.0)]
    return model(nodes, [f32("x", [4])], [f32("y", [4])], opset=10)


@case
def reshape_zero_neg():
    inits = [init("shape", np.array([0, -1], np.int64))]
    nodes = [h.make_node("Reshape", ["x", "shape"], ["y"], name="rs")]
    return model(nodes, [f32("x", [2, 3, 4])], [f32("y", [2, 12])], inits)


@case
def pad_inputs():
    inits = [init("pads", np.array([0, 0, 1, 1, 0, 0, 2, 2], np.int64)),
             init("cv", np.array(0.5, np.float32))]
    nodes = [h.make_node("Pad", ["x", "pads", "cv"], ["y"], name="pad")]
    return model(nodes, [f32("x", [1, 1, 2, 2])], [f32("y", [1, 1, 5, 5])], inits)


@case
def split_input():
    inits = [init("sp", np.array([1, 3], np.int64))]
    nodes = [h.make_node("Split", ["x", "sp"], ["a", "b"], name="split", axis=1)]
    return model(nodes, [f32("x", [2, 4])], [f32("a", [2, 1]), f32("b", [2, 3])], inits)


@case
def constants():
    nodes = [h.make_node("Constant", [], ["c1"], name="c_float", value_float=2.5),
             h.make_node("Constant", [], ["c2"], name="c_ints", value_ints=[1, 2, 3]),
             h.make_node("Constant", [], ["c3"], name="c_tensor",
                         value=nh.from_array(np.array([1.0, 2.0], np.float32))),
             h.make_node("ConstantOfShape", ["c2"], ["c4"], name="cos",
                         value=nh.from_array(np.array([7], np.int32))),
             h.make_node("Mul", ["x", "c3"], ["y"], name="mul")]
    return model(nodes, [f32("x", [2])], [f32("y", [2]), f32("c1", []), vi("c4", TP.INT32, [1, 2, 3])])


@case
def gelu20():
    nodes = [h.make_node("Gelu", ["x"], ["y"], name="gelu", approximate="tanh")]
    return model(nodes, [f32("x", [4])], [f32("y", [4])], opset=20, ir=9)


@case
def layernorm():
    inits = [init("g", np.ones(4, np.float32)), init("b", np.zeros(4, np.float32))]
    nodes = [h.make_node("LayerNormalization", ["x", "g", "b"], ["y"], name="ln", epsilon=1e-6)]
    return model(nodes, [f32("x", [2, 4])], [f32("y", [2, 4])], inits, opset=17)


@case
def layernorm_stats():
    """LayerNormalization with its Mean and InvStdDev outputs (Mean skipped by name: '')."""
    inits = [init("g", np.ones((4, 3), np.float32)), init("g3", np.ones(3, np.float32))]
    nodes = [h.make_node("LayerNormalization", ["x", "g"], ["y", "mean", "inv"], name="ln",
                         axis=1),
             h.make_node("LayerNormalization", ["x", "g3"], ["y2", "", "inv2"], name="ln2")]
    return model(nodes, [f32("x", [2, 4, 3])],
                 [f32("y", [2, 4, 3]), f32("mean", [2, 1, 1]), f32("inv", [2, 1, 1]),
                  f32("inv2", [2, 4, 1])], inits, opset=17)


@case
def reduce_mean18():
    inits = [init("axes", np.array([-1], np.int64))]
    nodes = [h.make_node("ReduceMean", ["x", "axes"], ["y"], name="rm", keepdims=0)]
    return model(nodes, [f32("x", [2, 4])], [f32("y", [2])], inits, opset=18, ir=8)


@case
def unsorted_nodes():
    nodes = [h.make_node("Relu", ["a"], ["y"], name="second"),
             h.make_node("Neg" if False else "Sigmoid", ["x"], ["a"], name="first")]
    return model(nodes, [f32("x", [2])], [f32("y", [2])])


@case
def cycle():
    nodes = [h.make_node("Relu", ["b"], ["a"], name="n_a"),
             h.make_node("Relu", ["a"], ["b"], name="n_b"),
             h.make_node("Relu", ["x"], ["y"], name="n_y")]
    return model(nodes, [f32("x", [2])], [f32("y", [2]), f32("a", [2])])


@case
def undefined_input():
    nodes = [h.make_node("Add", ["x", "ghost"], ["y"], name="add_ghost")]
    return model(nodes, [f32("x", [2])], [f32("y", [2])])


@case
def duplicate_output():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="r1"),
             h.make_node("Sigmoid", ["x"], ["y"], name="r2")]
    return model(nodes, [f32("x", [2])], [f32("y", [2])])


@case
def short_raw_data():
    t = init("w", np.ones((2, 2), np.float32))
    t.raw_data = t.raw_data[:10]
    nodes = [h.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, [f32("x", [2, 2])], [f32("y", [2, 2])], [t])


@case
def negative_dim():
    t = init("w", np.ones((2, 2), np.float32))
    t.dims[0] = -2
    nodes = [h.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, [f32("x", [2, 2])], [f32("y", [2, 2])], [t])


@case
def overflow_dims():
    t = init("w", np.ones((2, 2), np.float32))
    del t.dims[:]
    t.dims.extend([1 << 40, 1 << 40, 1 << 40])
    nodes = [h.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, [f32("x", [2, 2])], [f32("y", [2, 2])], [t])


@case
def bad_scale():
    inits = [init("s", np.array(0.0, np.float32)), init("z", np.array(0, np.uint8))]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q_zero_scale")]
    return model(nodes, [f32("x", [2])], [vi("y", TP.UINT8, [2])], inits)


def external(loc_name, data_file, offset=0, length=None, nbytes=16):
    t = init("w", np.arange(4, dtype=np.float32))
    t.ClearField("raw_data")
    t.data_location = TP.EXTERNAL
    entries = [("location", loc_name), ("offset", str(offset))]
    if length is not None:
        entries.append(("length", str(length)))
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    nodes = [h.make_node("Add", ["x", "w"], ["y"], name="add_ext")]
    return model(nodes, [f32("x", [4])], [f32("y", [4])], [t])


@case
def ext_ok():
    return external("weights.bin", None, offset=4, length=16)


@case
def ext_abs():
    return external("/etc/passwd", None, length=16)


@case
def ext_dotdot():
    return external("../weights.bin", None, length=16)


@case
def ext_symlink():
    return external("link.bin", None, length=16)


@case
def ext_past_end():
    return external("weights.bin", None, offset=12, length=16)


def main():
    if sys.argv[1] == "npy":
        # mk_onnx.py npy OUT DTYPE V,V,... [D0xD1...]: an array of those values, 1-D unless a
        # shape is given ("arange" instead of values: 0, 1, ... to fill the shape)
        shape = [int(d) for d in sys.argv[5].split("x")] if len(sys.argv) > 5 else None
        if sys.argv[4] == "arange":
            a = np.arange(int(np.prod(shape)), dtype=sys.argv[3])
        else:
            a = np.array([v for v in sys.argv[4].split(",") if v], dtype=sys.argv[3])
        np.save(sys.argv[2], a.reshape(shape) if shape else a)
        return
    name, out = sys.argv[1], sys.argv[2]
    m = CASES[name]()
    with open(out, "wb") as f:
        f.write(m.SerializeToString())
    if name.startswith("ext_"):
        d = os.path.dirname(os.path.abspath(out))
        with open(os.path.join(d, "weights.bin"), "wb") as f:
            f.write(np.arange(-1, 5, dtype=np.float32).tobytes())


if __name__ == "__main__":
    main()
