#!/usr/bin/python3
"""mk_invalid.py CASE OUT: write one small ONNX model with an invalid parameter:
zero points outside their type's range, attributes an op or its opset does not define; and
models onnx.checker rejects for other reasons (nodes out of order, incomplete
output declarations, a field given twice, ...).

Models are built with python3-onnx's helper API without the checker. Run with /usr/bin/python3."""
import sys

import numpy as np
from onnx import TensorProto as TP, helper as h, numpy_helper as nh


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="mk_invalid")
    m.ir_version = 7 if opset < 21 else 10
    return m


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def typed(name, dt, dims, int32_vals):
    """A tensor whose values are written to int32_data as given, unchecked (the way a
    hand-written or corrupted file stores an i8 200)."""
    t = TP()
    t.name, t.data_type = name, dt
    t.dims.extend(dims)
    t.int32_data.extend(int32_vals)
    return t


def qdq(zp_tensor, opset=13, q_attrs=None, dq_attrs=None, zp_dt=TP.INT8):
    """x -> QuantizeLinear(s, zp) -> DequantizeLinear(s, zp) -> y, per-tensor."""
    inits = [nh.from_array(np.array(0.1, np.float32), "s"), zp_tensor]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", zp_tensor.name], ["xq"], name="q",
                         **(q_attrs or {})),
             h.make_node("DequantizeLinear", ["xq", "s", zp_tensor.name], ["y"], name="dq",
                         **(dq_attrs or {}))]
    return model(nodes, [vi("x", TP.FLOAT, [1, 4])], [vi("y", TP.FLOAT, [1, 4])], inits, opset)


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# ---- 4a: zero points outside their type's range ----
@case
def zp_i8_200():
    return qdq(typed("zp", TP.INT8, [], [200]))


@case
def zp_u8_300():
    return qdq(typed("zp", TP.UINT8, [], [300]))


@case
def zp_u8_neg():
    return qdq(typed("zp", TP.UINT8, [], [-1]))


@case
def zp_i16_40000():
    return qdq(typed("zp", TP.INT16, [], [40000]), opset=21)


@case
def zp_u8_ok_typed():
    """The boundary values 0 and 255 in int32_data are fine."""
    return qdq(typed("zp", TP.UINT8, [], [255]))


@case
def zp_per_channel_i8():
    """Per-channel weight zero points, the third out of range."""
    w = nh.from_array((np.arange(12) % 5 - 2).astype(np.int8).reshape(4, 3), "w")
    ws = nh.from_array(np.array([0.1, 0.2, 0.3, 0.4], np.float32), "ws")
    wz = typed("wz", TP.INT8, [4], [0, 1, -129, 3])
    nodes = [h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dq_w", axis=0),
             h.make_node("MatMul", ["wd", "x"], ["y"], name="mm")]
    return model(nodes, [vi("x", TP.FLOAT, [3, 2])], [vi("y", TP.FLOAT, [4, 2])], [w, ws, wz])


@case
def zp_qlinear_conv():
    """QLinearConv's output zero point (input 7) stored as 256."""
    inits = [nh.from_array(np.array(0.1, np.float32), "xs"),
             nh.from_array(np.array(128, np.uint8), "xz"),
             nh.from_array(np.ones((2, 2, 1, 1), np.int8), "w"),
             nh.from_array(np.array(0.5, np.float32), "ws"),
             nh.from_array(np.array(0, np.int8), "wz"),
             nh.from_array(np.array(0.2, np.float32), "ys"), typed("yz", TP.UINT8, [], [256])]
    nodes = [h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
                         name="qconv")]
    return model(nodes, [vi("x", TP.UINT8, [1, 2, 3, 3])], [vi("y", TP.UINT8, [1, 2, 3, 3])],
                 inits)


@case
def zp_constant_node():
    """The zero point comes from a Constant node's tensor attribute."""
    c = h.make_node("Constant", [], ["zp"], name="zp_const", value=typed("v", TP.INT8, [], [-300]))
    inits = [nh.from_array(np.array(0.1, np.float32), "s")]
    nodes = [c, h.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="q")]
    return model(nodes, [vi("x", TP.FLOAT, [1, 4])], [vi("y", TP.INT8, [1, 4])], inits)


@case
def zp_u4_packed():
    """A UINT4 zero point: int32_data holds packed nibble pairs, so at most 255."""
    return qdq(typed("zp", 21, [], [0x1ff]), opset=21)


@case
def weight_i8_typed():
    """Not a zero point: a weight initializer with an i8 value of 128."""
    w = typed("w", TP.INT8, [2, 2], [1, 2, 128, 4])
    ws = nh.from_array(np.array(0.1, np.float32), "ws")
    nodes = [h.make_node("DequantizeLinear", ["w", "ws"], ["wd"], name="dq_w"),
             h.make_node("MatMul", ["x", "wd"], ["y"], name="mm")]
    return model(nodes, [vi("x", TP.FLOAT, [1, 2])], [vi("y", TP.FLOAT, [1, 2])], [w, ws])


# ---- 4b: attributes the op or its opset does not define ----
def u8zp():
    return nh.from_array(np.array(3, np.uint8), "zp")


@case
def attr_q_group():
    """QuantizeLinear has no `group`."""
    return qdq(u8zp(), q_attrs={"group": 0})


@case
def attr_dq_axis_opset10():
    """DequantizeLinear's `axis` is from opset 13."""
    return qdq(u8zp(), opset=10, dq_attrs={"axis": 1})


@case
def attr_ok_axis_opset13():
    """The same attribute at opset 13: no warning."""
    return qdq(u8zp(), opset=13, dq_attrs={"axis": 1})


@case
def attr_squeeze_axes_opset13():
    """Squeeze's `axes` attribute was removed at opset 13 (an input since)."""
    inits = [nh.from_array(np.array([0], np.int64), "ax")]
    nodes = [h.make_node("Squeeze", ["x", "ax"], ["y"], name="sq", axes=[0])]
    return model(nodes, [vi("x", TP.FLOAT, [1, 4])], [vi("y", TP.FLOAT, [4])], inits)


@case
def attr_duplicate():
    m = qdq(u8zp(), dq_attrs={"axis": 1})
    dq = m.graph.node[1]
    dq.attribute.append(h.make_attribute("axis", 0))
    return m


@case
def attr_no_type():
    """An attribute without its type field (required by ONNX)."""
    m = qdq(u8zp(), dq_attrs={"axis": 1})
    m.graph.node[1].attribute[0].ClearField("type")
    return m


@case
def value_info_shape():
    """value_info declares the quantized value with another shape (and the output's type is
    right): the file does not describe its own graph."""
    m = qdq(u8zp())
    m.graph.value_info.append(vi("xq", TP.UINT8, [1, 5]))
    return m


@case
def value_info_type():
    m = qdq(u8zp())
    m.graph.value_info.append(vi("xq", TP.INT8, [1, 4]))
    return m


@case
def value_info_ok():
    """Matching, symbolic and absent dimensions are fine."""
    m = qdq(u8zp())
    m.graph.value_info.append(vi("xq", TP.UINT8, ["N", 4]))
    return m


@case
def zp_u4_opset13():
    """A UINT4 zero point at opset 13 (4-bit types are from opset 21)."""
    return qdq(typed("zp", 21, [], [3]), opset=13)


@case
def zp_i16_opset13():
    return qdq(nh.from_array(np.array(-3, np.int16), "zp"), opset=13)


# ---- models onnx.checker rejects that qdqc used to accept without a word (the
# silent acceptances of qdqc-fuzz --mutate; test/lit/import/checker-rejects.test) ----
def field(num, payload):
    """A length-delimited protobuf field (wire type 2) by hand."""
    key, n, out = (num << 3) | 2, len(payload), bytearray()
    for v in (key, n):
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                break
    return bytes(out) + payload


def raw_case(fn):
    """A case that returns bytes rather than a ModelProto."""
    CASES[fn.__name__] = fn
    fn.raw = True
    return fn


@case
def unsorted_qdq():
    """The DequantizeLinear before the QuantizeLinear that produces its input."""
    m = qdq(u8zp())
    nodes = list(m.graph.node)[::-1]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m


@case
def output_no_shape():
    m = qdq(u8zp())
    m.graph.output[0].type.tensor_type.ClearField("shape")
    return m


@case
def outputs_no_shape():
    """Three outputs without a shape (intermediate values exposed by hand): one warning."""
    m = qdq(u8zp())
    m.graph.output[0].type.tensor_type.ClearField("shape")
    m.graph.node.append(h.make_node("Relu", ["y"], ["r"], name="relu"))
    m.graph.output.extend([vi("xq", TP.UINT8, None), vi("r", TP.FLOAT, None)])
    return m


@case
def output_no_elem_type():
    m = qdq(u8zp())
    m.graph.output[0].type.tensor_type.ClearField("elem_type")
    return m


@case
def output_no_type():
    m = qdq(u8zp())
    m.graph.output[0].ClearField("type")
    return m


@case
def output_symbolic_ok():
    """Symbolic and unset dimensions are a complete declaration."""
    m = qdq(u8zp())
    m.graph.output[0].CopyFrom(vi("y", TP.FLOAT, ["N", None]))
    return m


@case
def attr_field_mismatch():
    """DequantizeLinear axis of type INT with its value in the FLOAT field."""
    m = qdq(u8zp(), dq_attrs={"axis": 1})
    a = m.graph.node[1].attribute[0]
    a.ClearField("i")
    a.f = 1.0
    return m


@case
def attr_two_fields():
    m = qdq(u8zp(), dq_attrs={"axis": 1})
    m.graph.node[1].attribute[0].f = 1.0
    return m


@case
def graph_no_name():
    m = qdq(u8zp())
    m.graph.name = ""
    return m


def q_f16(opset):
    """QuantizeLinear of an f16 input (and f16 scale): from opset 19."""
    inits = [nh.from_array(np.array(0.1, np.float16), "s"), u8zp()]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"], name="q"),
             h.make_node("DequantizeLinear", ["xq", "s", "zp"], ["y"], name="dq")]
    return model(nodes, [vi("x", TP.FLOAT16, [1, 4])], [vi("y", TP.FLOAT16, [1, 4])], inits,
                 opset)


@case
def q_f16_opset13():
    return q_f16(13)


@case
def q_f16_opset19():
    return q_f16(19)


@case
def input_init_mismatch():
    """The scale 's' (an initializer, f32 scalar) also listed as a graph input declared
    f32[1,4]."""
    m = qdq(u8zp())
    m.graph.input.append(vi("s", TP.FLOAT, [1, 4]))
    return m


@case
def input_init_ok():
    """The same, declared as the initializer is (IR 3 lists initializers among the inputs)."""
    m = qdq(u8zp())
    m.graph.input.append(vi("s", TP.FLOAT, []))
    return m


@raw_case
def output_type_twice():
    """Graph output 'y' whose ValueInfoProto carries field 2 (type) twice, the second with
    rank 2 more: protobuf merges them into one of rank 4, protobuf-c keeps one of them."""
    m = qdq(u8zp())
    out = m.graph.output[0]
    twice = vi("y", TP.FLOAT, [1, 4])
    del m.graph.output[:]
    g = m.graph.SerializeToString() + field(12, out.SerializeToString() +
                                             field(2, twice.type.SerializeToString()))
    m.ClearField("graph")
    return m.SerializeToString() + field(7, g)


def conv_transpose(kernel_shape):
    """Float ConvTranspose, 3x3 weight, with the given kernel_shape attribute."""
    w = nh.from_array(np.full((1, 1, 3, 3), 0.5, np.float32), "w")
    node = h.make_node("ConvTranspose", ["x", "w"], ["y"], name="convt",
                       kernel_shape=kernel_shape)
    return model([node], [vi("x", TP.FLOAT, [1, 1, 4, 4])], [vi("y", TP.FLOAT, [1, 1, 6, 6])],
                 [w])


@case
def convt_kernel_mismatch():
    return conv_transpose([3, 4])


@case
def convt_kernel_ok():
    return conv_transpose([3, 3])


def main():
    name, out = sys.argv[1], sys.argv[2]
    fn = CASES[name]
    with open(out, "wb") as f:
        f.write(fn() if getattr(fn, "raw", False) else fn().SerializeToString())


if __name__ == "__main__":
    main()
