#!/usr/bin/python3
"""Generate the corpus of malformed / hostile ONNX files in test/models/hostile/.

    /usr/bin/python3 test/models/gen_hostile.py [--out DIR]

Each file targets one defence of the model reader; hostile/MANIFEST.txt lists every file with the
expected outcome and what is wrong with it. Expected outcomes:
  reject  the reader/importer must fail with a diagnostic (never crash, hang, read outside the
          model's folder, or allocate the declared size)
  accept  a valid control file (so a defence that rejects everything is caught too)
  unsupported  valid ONNX that qdqc may refuse, but must refuse with a clear message naming the
          offending op/feature (or support it)

Deterministic: fixed seeds, no timestamps; running it twice gives byte-identical files. Files that
must be broken at the protobuf level are built from onnx's protobuf objects, serialized, and then
corrupted or assembled byte by byte (see the pb_* helpers).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "hostile")
PRODUCER = "qdqc-gen_hostile"

# --------------------------------------------------------------------------------------------------
# protobuf wire helpers
# --------------------------------------------------------------------------------------------------
VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5


def pb_varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_tag(field, wt):
    return pb_varint((field << 3) | wt)


def pb_len(field, payload, declared=None):
    return pb_tag(field, LEN) + pb_varint(len(payload) if declared is None else declared) + payload


def pb_int(field, v):
    return pb_tag(field, VARINT) + pb_varint(v)


# ModelProto / GraphProto / NodeProto / TensorProto / AttributeProto field numbers (onnx.proto)
M_IR, M_PRODUCER, M_GRAPH, M_OPSET = 1, 2, 7, 8
G_NODE, G_NAME, G_INIT, G_INPUT, G_OUTPUT = 1, 2, 5, 11, 12
N_INPUT, N_OUTPUT, N_NAME, N_OP, N_ATTR = 1, 2, 3, 4, 5
T_DIMS, T_DTYPE, T_NAME, T_RAW = 1, 2, 8, 9
A_NAME, A_G, A_TYPE = 1, 6, 20


def opset_bytes(version=13):
    return pb_len(M_OPSET, pb_len(1, b"") + pb_int(2, version))


def model_bytes(graph_payload, ir=7, opset=13):
    return pb_int(M_IR, ir) + pb_len(M_PRODUCER, PRODUCER.encode()) + pb_len(M_GRAPH, graph_payload) + opset_bytes(opset)


# --------------------------------------------------------------------------------------------------
# a small valid QDQ model that most cases start from
# --------------------------------------------------------------------------------------------------

def make_model(nodes, inputs, outputs, inits, opset=13, ir=7, name="hostile", value_info=()):
    g = helper.make_graph(nodes, name, inputs, outputs, inits, value_info=list(value_info))
    m = helper.make_model(g, producer_name=PRODUCER, producer_version="1", opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def base_parts(rng):
    """Q -> DQ -> Conv(int8 per-channel weights, int32 bias) -> Q -> DQ on a 1x4x8x8 input."""
    w = rng.integers(-127, 128, (4, 4, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.005, 0.02, 4)).astype(np.float32)
    xs = np.float32(0.05)
    bias = rng.integers(-500, 500, 4).astype(np.int32)
    inits = [
        numpy_helper.from_array(np.array(xs, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "x_zero_point"),
        numpy_helper.from_array(w, "w_quantized"),
        numpy_helper.from_array(ws, "w_scale"),
        numpy_helper.from_array(np.zeros(4, np.int8), "w_zero_point"),
        numpy_helper.from_array(bias, "b_quantized"),
        numpy_helper.from_array((xs * ws).astype(np.float32), "b_scale"),
        numpy_helper.from_array(np.zeros(4, np.int32), "b_zero_point"),
        numpy_helper.from_array(np.array(0.1, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "y_zero_point"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["input", "x_scale", "x_zero_point"], ["x_q"], name="q_x"),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zero_point"], ["x_dq"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["w_quantized", "w_scale", "w_zero_point"], ["w_dq"], name="dq_w", axis=0),
        helper.make_node("DequantizeLinear", ["b_quantized", "b_scale", "b_zero_point"], ["b_dq"], name="dq_b", axis=0),
        helper.make_node("Conv", ["x_dq", "w_dq", "b_dq"], ["conv_out"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["conv_out", "y_scale", "y_zero_point"], ["y_q"], name="q_y"),
        helper.make_node("DequantizeLinear", ["y_q", "y_scale", "y_zero_point"], ["output"], name="dq_y"),
    ]
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 4, 8, 8])]
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 8, 8])]
    return nodes, inputs, outputs, inits


def base_model(seed=1):
    return make_model(*base_parts(np.random.default_rng(seed)), name="base")


def find_init(m, name):
    for t in m.graph.initializer:
        if t.name == name:
            return t
    raise KeyError(name)


def find_node(m, name):
    for n in m.graph.node:
        if n.name == name:
            return n
    raise KeyError(name)


def ser(m):
    return m.SerializeToString()


# --------------------------------------------------------------------------------------------------
# cases: each returns (bytes, expect, defence, description); some also write side files
# --------------------------------------------------------------------------------------------------

CASES = []


def case(name, expect, defence, desc):
    def deco(fn):
        CASES.append((name, expect, defence, desc, fn))
        return fn
    return deco


@case("base_valid.onnx", "accept", "control", "valid Q->DQ->Conv(int8 pc weights, int32 bias)->Q->DQ model all other cases are derived from")
def _(out):
    m = base_model()
    onnx.checker.check_model(m, full_check=True)
    return ser(m)


@case("empty.onnx", "reject", "truncation", "empty file (0 bytes)")
def _(out):
    return b""


@case("random_bytes.onnx", "reject", "wire format", "4096 random bytes (seeded)")
def _(out):
    return np.random.default_rng(1234).integers(0, 256, 4096, dtype=np.uint8).tobytes()


@case("truncated_mid_initializer.onnx", "reject", "truncation", "valid model cut in the middle of the w_quantized raw_data")
def _(out):
    data = ser(base_model())
    w = find_init(base_model(), "w_quantized").raw_data
    pos = data.find(w)
    assert pos > 0
    return data[: pos + len(w) // 2]


@case("truncated_mid_varint.onnx", "reject", "truncation", "file ends inside a varint (a length prefix with the continuation bit set)")
def _(out):
    return pb_int(M_IR, 7) + pb_tag(M_GRAPH, LEN) + b"\xff\xff"


@case("truncated_tail.onnx", "reject", "truncation", "valid model with its last byte removed (last field is cut short)")
def _(out):
    return ser(base_model())[:-1]


@case("wiretype_graph_varint.onnx", "reject", "wire types", "ModelProto.graph (field 7, must be LEN) encoded as a varint")
def _(out):
    return pb_int(M_IR, 7) + pb_int(M_GRAPH, 5) + opset_bytes()


@case("wiretype_irversion_len.onnx", "reject", "wire types", "ModelProto.ir_version (field 1, must be varint) encoded as a LEN field, followed by a valid graph")
def _(out):
    m = base_model()
    g = m.graph.SerializeToString()
    return pb_len(M_IR, b"\x07\x07\x07") + pb_len(M_GRAPH, g) + opset_bytes()


@case("wiretype_dims_fixed32.onnx", "reject", "wire types", "TensorProto.dims (field 1, int64) of an initializer encoded as fixed32")
def _(out):
    t = pb_tag(T_DIMS, I32) + (4).to_bytes(4, "little") + pb_int(T_DTYPE, TensorProto.FLOAT) + pb_len(T_NAME, b"w") + pb_len(T_RAW, bytes(16))
    return model_bytes(pb_len(G_NAME, b"g") + pb_len(G_INIT, t))


@case("wiretype_invalid_6.onnx", "reject", "wire types", "a tag with wire type 6 (undefined in the protobuf encoding)")
def _(out):
    return pb_int(M_IR, 7) + pb_tag(M_GRAPH, 6) + b"\x00" * 8 + opset_bytes()


@case("wiretype_endgroup.onnx", "reject", "wire types", "an END_GROUP tag (wire type 4) with no matching START_GROUP")
def _(out):
    return pb_int(M_IR, 7) + pb_tag(9, EGROUP) + opset_bytes()


@case("wiretype_startgroup_unterminated.onnx", "reject", "wire types", "a START_GROUP (wire type 3) for an unknown field that is never closed")
def _(out):
    return pb_int(M_IR, 7) + pb_tag(99, SGROUP) + pb_int(1, 1) + pb_int(2, 2)


@case("field_number_zero.onnx", "reject", "wire format", "a tag with field number 0 (invalid in protobuf)")
def _(out):
    return pb_int(M_IR, 7) + b"\x00\x01" + opset_bytes()


@case("varint_overlong.onnx", "reject", "wire format", "an 11-byte varint (more than the 10 bytes a 64-bit varint may use)")
def _(out):
    return pb_tag(M_IR, VARINT) + b"\xff" * 10 + b"\x01" + opset_bytes()


@case("huge_length_outer.onnx", "reject", "huge declared lengths", "ModelProto.graph length prefix declares 2^62 bytes; the file has ~400")
def _(out):
    g = base_model().graph.SerializeToString()
    return pb_int(M_IR, 7) + pb_len(M_GRAPH, g, declared=1 << 62)


@case("huge_length_u64max.onnx", "reject", "huge declared lengths", "a length prefix of 2^64-1 (wraps to -1 / overflows pointer arithmetic)")
def _(out):
    return pb_int(M_IR, 7) + pb_tag(M_GRAPH, LEN) + pb_varint((1 << 64) - 1) + b"\x00" * 32


@case("huge_length_inner.onnx", "reject", "huge declared lengths",
      "raw_data inside an initializer declares 4096 bytes; the enclosing TensorProto has 16 left but the file continues (sibling bytes must not be read as data)")
def _(out):
    t = pb_int(T_DIMS, 4) + pb_int(T_DTYPE, TensorProto.FLOAT) + pb_len(T_NAME, b"w") + pb_tag(T_RAW, LEN) + pb_varint(4096) + bytes(16)
    g = pb_len(G_NAME, b"g") + pb_len(G_INIT, t)
    doc = pb_len(6, b"D" * 8192)  # ModelProto.doc_string after the graph
    return pb_int(M_IR, 7) + pb_len(M_GRAPH, g) + opset_bytes() + doc


@case("huge_string_length.onnx", "reject", "huge declared lengths", "a node name (string) whose length prefix is 0x7fffffff")
def _(out):
    n = pb_len(N_INPUT, b"input") + pb_len(N_OUTPUT, b"output") + pb_tag(N_NAME, LEN) + pb_varint(0x7FFFFFFF) + b"relu"
    return pb_int(M_IR, 7) + pb_len(M_GRAPH, pb_len(G_NODE, n)) + opset_bytes()


@case("huge_packed_dims.onnx", "reject", "huge declared lengths", "packed TensorProto.dims (LEN) declaring 2^40 bytes of varints")
def _(out):
    t = pb_tag(T_DIMS, LEN) + pb_varint(1 << 40) + b"\x04\x04"
    return model_bytes(pb_len(G_NAME, b"g") + pb_len(G_INIT, t))


def _init_model(tensor_mod, dims=(4, 4, 3, 3)):
    m = base_model()
    t = find_init(m, "w_quantized")
    tensor_mod(t)
    return m


@case("dims_overflow_int64.onnx", "reject", "dims overflow", "initializer dims [2^62, 4, 3, 3]: element count overflows int64 (raw_data is 144 bytes)")
def _(out):
    m = _init_model(lambda t: (t.ClearField("dims"), t.dims.extend([1 << 62, 4, 3, 3])))
    return ser(m)


@case("dims_overflow_wrap_zero.onnx", "reject", "dims overflow",
      "initializer dims [2^32, 2^32, 1, 1] with empty raw_data: the product wraps to exactly 0 mod 2^64, so a naive size check passes")
def _(out):
    def mod(t):
        t.ClearField("dims")
        t.dims.extend([1 << 32, 1 << 32, 1, 1])
        t.raw_data = b""
    return ser(_init_model(mod))


@case("dims_bytes_overflow_size_t.onnx", "reject", "dims overflow",
      "float initializer dims [2^62]: the element count fits int64 but count*4 bytes wraps size_t to 0; raw_data empty")
def _(out):
    m = base_model()
    t = numpy_helper.from_array(np.zeros(0, np.float32), "big")
    t.ClearField("dims")
    t.dims.append(1 << 62)
    t.raw_data = b""
    m.graph.initializer.append(t)
    m.graph.node.append(helper.make_node("Identity", ["big"], ["big_out"], name="id_big"))
    m.graph.output.append(helper.make_tensor_value_info("big_out", TensorProto.FLOAT, None))
    return ser(m)


@case("dims_huge_alloc.onnx", "reject", "huge declared sizes",
      "initializer dims [2^40] int8 (1 TiB) with 16 bytes of raw_data: must be rejected before allocating")
def _(out):
    def mod(t):
        t.ClearField("dims")
        t.dims.append(1 << 40)
        t.raw_data = bytes(16)
    return ser(_init_model(mod))


@case("input_dims_overflow.onnx", "reject", "dims overflow", "graph input shape [2^40, 2^40, 8, 8]: element count overflows int64")
def _(out):
    m = base_model()
    d = m.graph.input[0].type.tensor_type.shape.dim
    d[0].dim_value = 1 << 40
    d[1].dim_value = 1 << 40
    return ser(m)


@case("dims_negative_initializer.onnx", "reject", "negative dims", "initializer dims [-4, 4, 3, 3] (raw_data 144 bytes)")
def _(out):
    return ser(_init_model(lambda t: t.dims.__setitem__(0, -4)))


@case("dims_negative_input.onnx", "reject", "negative dims", "graph input with dim_value -3")
def _(out):
    m = base_model()
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_value = -3
    return ser(m)


@case("dims_zero_input.onnx", "unsupported", "zero-size tensors", "graph input with a 0 dimension [1, 4, 0, 8] (valid ONNX: empty tensor through Conv; support it or refuse clearly)")
def _(out):
    m = base_model()
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 0
    return ser(m)


@case("raw_data_short.onnx", "reject", "raw_data size", "initializer w_quantized shape [4,4,3,3] int8 (144 bytes) with only 100 bytes of raw_data")
def _(out):
    return ser(_init_model(lambda t: setattr(t, "raw_data", t.raw_data[:100])))


@case("raw_data_long.onnx", "reject", "raw_data size", "initializer w_quantized shape [4,4,3,3] int8 with 200 bytes of raw_data (too long)")
def _(out):
    return ser(_init_model(lambda t: setattr(t, "raw_data", t.raw_data + bytes(56))))


@case("typed_data_short.onnx", "reject", "raw_data size", "float initializer w_scale shape [4] stored in float_data with only 3 values")
def _(out):
    m = base_model()
    t = find_init(m, "w_scale")
    vals = numpy_helper.to_array(t)
    t.ClearField("raw_data")
    t.float_data.extend(vals[:3].tolist())
    return ser(m)


@case("raw_and_typed_data.onnx", "reject", "raw_data size", "initializer w_scale has both raw_data and float_data (ambiguous)")
def _(out):
    m = base_model()
    t = find_init(m, "w_scale")
    t.float_data.extend(numpy_helper.to_array(t).tolist())
    return ser(m)


@case("bad_data_type.onnx", "reject", "tensor types", "initializer x_scale with data_type 999 (not a TensorProto.DataType)")
def _(out):
    # python protobuf refuses unknown enum values: patch the serialized initializer instead
    old = find_init(base_model(), "x_scale").SerializeToString()
    new = old.replace(pb_int(T_DTYPE, TensorProto.FLOAT), pb_int(T_DTYPE, 999))
    g = bytearray(base_model().graph.SerializeToString())
    enc_old, enc_new = pb_len(G_INIT, old), pb_len(G_INIT, new)
    p = g.find(enc_old)
    assert p >= 0 and new != old
    g[p:p + len(enc_old)] = enc_new
    return pb_int(M_IR, 7) + pb_len(M_PRODUCER, PRODUCER.encode()) + pb_len(M_GRAPH, bytes(g)) + opset_bytes()


@case("undefined_data_type.onnx", "reject", "tensor types", "initializer x_scale with data_type UNDEFINED (0)")
def _(out):
    m = base_model()
    find_init(m, "x_scale").data_type = TensorProto.UNDEFINED
    return ser(m)


@case("string_tensor_scale.onnx", "reject", "tensor types", "DQ scale given as a STRING tensor")
def _(out):
    m = base_model()
    t = find_init(m, "x_scale")
    t.CopyFrom(helper.make_tensor("x_scale", TensorProto.STRING, [], [b"0.05"]))
    return ser(m)


@case("duplicate_output.onnx", "reject", "duplicate names", "two nodes (a Relu and the Conv) both produce 'conv_out'")
def _(out):
    m = base_model()
    m.graph.node.insert(4, helper.make_node("Relu", ["x_dq"], ["conv_out"], name="dup_relu"))
    return ser(m)


@case("duplicate_initializer.onnx", "reject", "duplicate names", "two initializers named 'y_scale' with different values")
def _(out):
    m = base_model()
    m.graph.initializer.append(numpy_helper.from_array(np.array(0.5, np.float32), "y_scale"))
    return ser(m)


@case("output_shadows_initializer.onnx", "reject", "duplicate names", "a node output named like an initializer ('w_scale')")
def _(out):
    m = base_model()
    m.graph.node.insert(0, helper.make_node("Identity", ["x_scale"], ["w_scale"], name="shadow"))
    return ser(m)


@case("output_shadows_input.onnx", "reject", "duplicate names", "a node output named like the graph input ('input')")
def _(out):
    m = base_model()
    m.graph.node.insert(0, helper.make_node("Relu", ["x_scale"], ["input"], name="shadow_in"))
    return ser(m)


@case("cycle.onnx", "reject", "cycles", "two Relu nodes feeding each other (a -> b -> a) between the conv and the output Q")
def _(out):
    m = base_model()
    n = find_node(m, "q_y")
    n.input[0] = "cyc_b"
    m.graph.node.insert(5, helper.make_node("Add", ["conv_out", "cyc_b"], ["cyc_a"], name="cyc_add"))
    m.graph.node.insert(6, helper.make_node("Relu", ["cyc_a"], ["cyc_b"], name="cyc_relu"))
    return ser(m)


@case("self_loop.onnx", "reject", "cycles", "a node that consumes its own output")
def _(out):
    m = base_model()
    n = find_node(m, "q_y")
    n.input[0] = "loop"
    m.graph.node.insert(5, helper.make_node("Add", ["conv_out", "loop"], ["loop"], name="loop_add"))
    return ser(m)


@case("unsorted_nodes.onnx", "accept", "control", "graph with nodes in reverse topological order (the spec requires sorted order: qdqc sorts them with a warning, --strict refuses)")
def _(out):
    m = base_model()
    nodes = list(m.graph.node)[::-1]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return ser(m)


@case("undefined_input.onnx", "reject", "undefined values", "the Conv consumes 'nowhere', which no node, input or initializer defines")
def _(out):
    m = base_model()
    find_node(m, "conv").input[0] = "nowhere"
    return ser(m)


@case("undefined_output.onnx", "reject", "undefined values", "graph output 'ghost' is produced by no node")
def _(out):
    m = base_model()
    m.graph.output.append(helper.make_tensor_value_info("ghost", TensorProto.FLOAT, [1]))
    return ser(m)


@case("missing_dq_scale.onnx", "reject", "undefined values", "weight DequantizeLinear scale input 'w_scale' has no initializer (removed)")
def _(out):
    m = base_model()
    keep = [t for t in m.graph.initializer if t.name != "w_scale"]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    return ser(m)


@case("dq_scale_empty_name.onnx", "reject", "undefined values", "activation DequantizeLinear with its required scale input given as '' (omitted)")
def _(out):
    m = base_model()
    find_node(m, "dq_x").input[1] = ""
    return ser(m)


@case("dq_scale_runtime.onnx", "unsupported", "non-constant quant params",
      "activation scale is a graph input (runtime value), not an initializer: cannot be folded at compile time")
def _(out):
    m = base_model()
    keep = [t for t in m.graph.initializer if t.name != "x_scale"]
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    m.graph.input.append(helper.make_tensor_value_info("x_scale", TensorProto.FLOAT, []))
    return ser(m)


def _qparam_case(init_name, value, dtype=np.float32):
    m = base_model()
    t = find_init(m, init_name)
    t.CopyFrom(numpy_helper.from_array(np.asarray(value, dtype), init_name))
    return ser(m)


@case("scale_zero.onnx", "reject", "quant params", "activation QuantizeLinear scale 0 (division by zero)")
def _(out):
    return _qparam_case("x_scale", 0.0)


@case("scale_negative.onnx", "reject", "quant params", "output Q/DQ scale -0.1")
def _(out):
    return _qparam_case("y_scale", -0.1)


@case("scale_nan.onnx", "reject", "quant params", "per-channel weight scale with a NaN entry")
def _(out):
    return _qparam_case("w_scale", [0.01, np.nan, 0.01, 0.01])


@case("scale_inf.onnx", "reject", "quant params", "activation scale +inf")
def _(out):
    return _qparam_case("x_scale", np.inf)


@case("scale_denormal.onnx", "reject", "quant params", "activation scale 1e-45 (denormal: 1/scale overflows float)")
def _(out):
    return _qparam_case("x_scale", 1e-45)


@case("perchannel_len_mismatch.onnx", "reject", "quant params", "per-channel weight scale/zero point of length 3 for 4 output channels (axis 0)")
def _(out):
    m = base_model()
    find_init(m, "w_scale").CopyFrom(numpy_helper.from_array(np.full(3, 0.01, np.float32), "w_scale"))
    find_init(m, "w_zero_point").CopyFrom(numpy_helper.from_array(np.zeros(3, np.int8), "w_zero_point"))
    return ser(m)


@case("axis_out_of_range.onnx", "reject", "quant params", "weight DequantizeLinear axis=7 on a 4-D tensor")
def _(out):
    m = base_model()
    find_node(m, "dq_w").attribute[0].i = 7
    return ser(m)


@case("zp_type_mismatch.onnx", "reject", "quant params", "Q writes uint8 (zero point uint8) but the paired DQ's zero point is int8")
def _(out):
    m = base_model()
    m.graph.initializer.append(numpy_helper.from_array(np.array(0, np.int8), "x_zero_point_i8"))
    find_node(m, "dq_x").input[2] = "x_zero_point_i8"
    return ser(m)


@case("zp_shape_mismatch.onnx", "reject", "quant params", "per-tensor scale (scalar) with a zero point of shape [2]")
def _(out):
    return _qparam_case("y_zero_point", [128, 128], np.uint8)


@case("conv_group_zero.onnx", "reject", "attributes", "Conv group=0 (division by zero computing channels per group)")
def _(out):
    m = base_model()
    find_node(m, "conv").attribute.append(helper.make_attribute("group", 0))
    return ser(m)


@case("conv_group_mismatch.onnx", "reject", "attributes", "Conv group=3 with 4 input channels (not divisible)")
def _(out):
    m = base_model()
    find_node(m, "conv").attribute.append(helper.make_attribute("group", 3))
    return ser(m)


@case("conv_stride_zero.onnx", "reject", "attributes", "Conv strides=[0, 0] (division by zero in the output-size formula)")
def _(out):
    m = base_model()
    find_node(m, "conv").attribute.append(helper.make_attribute("strides", [0, 0]))
    return ser(m)


@case("conv_pads_negative.onnx", "reject", "attributes", "Conv pads=[-5, -5, -5, -5] (output size would be negative)")
def _(out):
    m = base_model()
    n = find_node(m, "conv")
    for a in n.attribute:
        if a.name == "pads":
            del a.ints[:]
            a.ints.extend([-5, -5, -5, -5])
    return ser(m)


@case("conv_kernel_mismatch.onnx", "reject", "attributes", "Conv kernel_shape=[5, 5] disagrees with the 3x3 weight")
def _(out):
    m = base_model()
    n = find_node(m, "conv")
    for a in n.attribute:
        if a.name == "kernel_shape":
            del a.ints[:]
            a.ints.extend([5, 5])
    return ser(m)


@case("conv_strides_wrong_type.onnx", "reject", "attributes", "Conv strides given as a FLOATS attribute instead of INTS")
def _(out):
    m = base_model()
    find_node(m, "conv").attribute.append(helper.make_attribute("strides", [1.0, 1.0]))
    return ser(m)


@case("conv_huge_dilation.onnx", "reject", "attributes", "Conv dilations=[2^62, 2^62] (dilated kernel extent overflows int64)")
def _(out):
    m = base_model()
    find_node(m, "conv").attribute.append(helper.make_attribute("dilations", [1 << 62, 1 << 62]))
    return ser(m)


# ---- external data -------------------------------------------------------------------------------

EXT_BIN = "extdata_weights.bin"


def _ext_model(location, offset=None, length=None, extra=()):
    m = base_model()
    t = find_init(m, "w_quantized")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    kv = [("location", location)]
    if offset is not None:
        kv.append(("offset", str(offset)))
    if length is not None:
        kv.append(("length", str(length)))
    kv.extend(extra)
    for k, v in kv:
        e = t.external_data.add()
        e.key = k
        e.value = v
    return ser(m)


def _write_ext_bin(out):
    # 256 bytes: the base model's int8 weights (144 bytes) at offset 64, seeded filler around them
    w = find_init(base_model(), "w_quantized").raw_data
    filler = np.random.default_rng(77).integers(0, 256, 256, dtype=np.uint8).tobytes()
    data = filler[:64] + w + filler[64 + len(w):256]
    with open(os.path.join(out, EXT_BIN), "wb") as f:
        f.write(data)


@case("extdata_valid.onnx", "accept", "control", f"valid external data: w_quantized at offset 64, length 144 in {EXT_BIN} next to the model")
def _(out):
    _write_ext_bin(out)
    return _ext_model(EXT_BIN, 64, 144)


@case("extdata_abs_path.onnx", "reject", "external data", "external data location is an absolute path (/etc/passwd)")
def _(out):
    return _ext_model("/etc/passwd", 0, 144)


@case("extdata_dotdot.onnx", "reject", "external data", "external data location '../../../../../../../../etc/passwd' escapes the model's folder")
def _(out):
    return _ext_model("../../../../../../../../etc/passwd", 0, 144)


@case("extdata_dotdot_inner.onnx", "reject", "external data", "location 'sub/../../hostile_escape.bin': lexically escapes the folder through an inner '..'")
def _(out):
    return _ext_model("sub/../../hostile_escape.bin", 0, 144)


@case("extdata_symlink.onnx", "reject", "external data",
      "location 'extdata_escape_link.bin' is a symlink in the model's folder pointing outside it (/etc/passwd)")
def _(out):
    link = os.path.join(out, "extdata_escape_link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("/etc/passwd", link)
    return _ext_model("extdata_escape_link.bin", 0, 144)


@case("extdata_offset_past_end.onnx", "reject", "external data", f"offset 4096 into the 256-byte {EXT_BIN}")
def _(out):
    return _ext_model(EXT_BIN, 4096, 144)


@case("extdata_length_past_end.onnx", "reject", "external data", f"offset 200 + length 144 runs past the end of the 256-byte {EXT_BIN}")
def _(out):
    return _ext_model(EXT_BIN, 200, 144)


@case("extdata_offset_overflow.onnx", "reject", "external data", "offset 2^63-8 + length 144 overflows int64")
def _(out):
    return _ext_model(EXT_BIN, (1 << 63) - 8, 144)


@case("extdata_negative_offset.onnx", "reject", "external data", "offset '-16'")
def _(out):
    return _ext_model(EXT_BIN, -16, 144)


@case("extdata_garbage_offset.onnx", "reject", "external data", "offset '64abc' (not a number)")
def _(out):
    return _ext_model(EXT_BIN, "64abc", 144)


@case("extdata_length_mismatch.onnx", "reject", "external data", "length 100 for a [4,4,3,3] int8 tensor (144 bytes)")
def _(out):
    return _ext_model(EXT_BIN, 64, 100)


@case("extdata_missing_file.onnx", "reject", "external data", "location 'does_not_exist.bin' does not exist")
def _(out):
    return _ext_model("does_not_exist.bin", 0, 144)


@case("extdata_no_location.onnx", "reject", "external data", "data_location EXTERNAL with no 'location' key")
def _(out):
    m = base_model()
    t = find_init(m, "w_quantized")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "offset", "0"
    return ser(m)


@case("extdata_directory.onnx", "reject", "external data", "location '.' is a directory")
def _(out):
    return _ext_model(".", 0, 144)


# ---- ops / opsets / shapes -----------------------------------------------------------------------

@case("unsupported_ops.onnx", "unsupported", "unsupported ops",
      "valid opset-13 model with two NonMaxSuppression nodes and a TopK: the error should name all three (ops and node names)")
def _(out):
    rng = np.random.default_rng(5)
    boxes = helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 16, 4])
    scores = helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, 16])
    inits = [
        numpy_helper.from_array(np.array([5], np.int64), "max_out"),
        numpy_helper.from_array(np.array([0.5], np.float32), "iou"),
        numpy_helper.from_array(np.array([0.1], np.float32), "score_thr"),
        numpy_helper.from_array(np.array([4], np.int64), "k"),
        numpy_helper.from_array(np.array([1, 32], np.int64), "flat_shape"),
        numpy_helper.from_array(rng.uniform(0.01, 0.02, []).astype(np.float32), "s_scale"),
        numpy_helper.from_array(np.array(0, np.uint8), "s_zp"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["scores", "s_scale", "s_zp"], ["scores_q"], name="q_scores"),
        helper.make_node("DequantizeLinear", ["scores_q", "s_scale", "s_zp"], ["scores_dq"], name="dq_scores"),
        helper.make_node("NonMaxSuppression", ["boxes", "scores_dq", "max_out", "iou", "score_thr"], ["sel_a"], name="nms_a"),
        helper.make_node("NonMaxSuppression", ["boxes", "scores_dq"], ["sel_b"], name="nms_b", center_point_box=1),
        helper.make_node("Reshape", ["scores_dq", "flat_shape"], ["scores_flat"], name="flat"),
        helper.make_node("TopK", ["scores_flat", "k"], ["top_v", "top_i"], name="topk", axis=-1),
    ]
    outputs = [helper.make_tensor_value_info("sel_a", TensorProto.INT64, ["n_a", 3]),
               helper.make_tensor_value_info("sel_b", TensorProto.INT64, ["n_b", 3]),
               helper.make_tensor_value_info("top_v", TensorProto.FLOAT, [1, 4]),
               helper.make_tensor_value_info("top_i", TensorProto.INT64, [1, 4])]
    m = make_model(nodes, [boxes, scores], outputs, inits, name="unsupported")
    onnx.checker.check_model(m, full_check=True)
    return ser(m)


@case("block_dq_opset21.onnx", "accept", "blocked quantization",
      "opset-21 block-quantized DequantizeLinear (block_size=32 on axis 0 of a [64,16] int8 MatMul weight, scale [2,16]); onnx 1.12 cannot check it; imported (a float matmul of the weights dequantized by block)")
def _(out):
    rng = np.random.default_rng(21)
    w = rng.integers(-127, 128, (64, 16)).astype(np.int8)
    inits = [numpy_helper.from_array(w, "w_q"),
             numpy_helper.from_array(rng.uniform(0.005, 0.02, (2, 16)).astype(np.float32), "w_scale"),
             numpy_helper.from_array(np.zeros((2, 16), np.int8), "w_zp"),
             numpy_helper.from_array(np.array(0.05, np.float32), "x_scale"),
             numpy_helper.from_array(np.array(128, np.uint8), "x_zp")]
    nodes = [helper.make_node("QuantizeLinear", ["input", "x_scale", "x_zp"], ["x_q"], name="q_x"),
             helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zp"], ["x_dq"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w_dq"], name="dq_w_block", axis=0, block_size=32),
             helper.make_node("MatMul", ["x_dq", "w_dq"], ["output"], name="matmul")]
    m = make_model(nodes, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 64])],
                   [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 16])], inits, opset=21, ir=10, name="block_dq")
    return ser(m)


@case("dynamic_batch.onnx", "unsupported", "dynamic shapes", "graph input shape ['N', 4, 8, 8] with a symbolic batch dimension (needs a user-given shape)")
def _(out):
    m = base_model()
    d = m.graph.input[0].type.tensor_type.shape.dim[0]
    d.ClearField("dim_value")
    d.dim_param = "N"
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "N"
    return ser(m)


@case("dynamic_unknown_dim.onnx", "unsupported", "dynamic shapes", "graph input dim with neither dim_value nor dim_param ([?, 4, 8, 8])")
def _(out):
    m = base_model()
    m.graph.input[0].type.tensor_type.shape.dim[0].ClearField("dim_value")
    return ser(m)


@case("no_input_shape.onnx", "unsupported", "dynamic shapes", "graph input with an element type but no shape at all")
def _(out):
    m = base_model()
    m.graph.input[0].type.tensor_type.ClearField("shape")
    return ser(m)


@case("no_input_type.onnx", "reject", "types", "graph input with no type at all")
def _(out):
    m = base_model()
    m.graph.input[0].ClearField("type")
    return ser(m)


@case("opset_missing.onnx", "reject", "opsets", "no opset_import for the default domain")
def _(out):
    m = base_model()
    del m.opset_import[:]
    return ser(m)


@case("opset_future.onnx", "reject", "opsets", "default-domain opset 999")
def _(out):
    m = base_model()
    m.opset_import[0].version = 999
    return ser(m)


@case("opset_too_old.onnx", "unsupported", "opsets", "default-domain opset 9 (QuantizeLinear/DequantizeLinear appear in opset 10)")
def _(out):
    m = base_model()
    m.opset_import[0].version = 9
    return ser(m)


@case("ir_version_future.onnx", "reject", "opsets", "ir_version 99")
def _(out):
    m = base_model()
    m.ir_version = 99
    return ser(m)


@case("custom_domain_op.onnx", "unsupported", "unsupported ops", "a node from domain 'com.example' (op 'FancyConv') with no opset import for that domain")
def _(out):
    m = base_model()
    n = find_node(m, "conv")
    n.domain = "com.example"
    n.op_type = "FancyConv"
    return ser(m)


@case("deep_nesting.onnx", "reject", "recursion", "If nodes nested 20000 deep (graph -> node -> attribute -> graph ...): recursion-depth defence")
def _(out):
    inner = pb_len(G_NAME, b"g")
    for _ in range(20000):  # minimal levels: node{attribute{g{node{...}}}}
        inner = pb_len(G_NODE, pb_len(N_OP, b"If") + pb_len(N_ATTR, pb_len(A_G, inner)))
    return pb_int(M_IR, 7) + pb_len(M_GRAPH, inner) + opset_bytes()


@case("many_nodes.onnx", "accept", "control", "valid chain of 10000 Identity nodes between DQ and Q (no recursion in graph walks)")
def _(out):
    nodes, inputs, outputs, inits = base_parts(np.random.default_rng(1))
    q = nodes[5]
    prev = "conv_out"
    chain = []
    for i in range(10000):
        chain.append(helper.make_node("Identity", [prev], [f"i{i}"], name=f"id{i}"))
        prev = f"i{i}"
    q.input[0] = prev
    m = make_model(nodes[:5] + chain + nodes[5:], inputs, outputs, inits, name="many")
    return ser(m)


@case("long_name.onnx", "accept", "names", "a 64 KiB tensor name (valid; must not overflow fixed-size buffers)")
def _(out):
    m = base_model()
    big = "n" * (1 << 16)
    find_node(m, "conv").output[0] = big
    find_node(m, "q_y").input[0] = big
    return ser(m)


@case("non_utf8_name.onnx", "reject", "names", "node and tensor name with invalid UTF-8 bytes (\\xff\\xfe); protobuf string fields must be UTF-8")
def _(out):
    m = base_model()
    find_node(m, "conv").output[0] = "conv_QQ"
    find_node(m, "q_y").input[0] = "conv_QQ"
    return ser(m).replace(b"conv_QQ", b"conv_\xff\xfe")


@case("nul_in_name.onnx", "reject", "names", "tensor name containing a NUL byte ('conv\\0out'): C-string truncation would alias 'conv'")
def _(out):
    m = base_model()
    find_node(m, "conv").output[0] = "conv\x00out"
    find_node(m, "q_y").input[0] = "conv\x00out"
    return ser(m)


@case("empty_graph.onnx", "reject", "structure", "ModelProto with ir_version and opset but no graph")
def _(out):
    return pb_int(M_IR, 7) + opset_bytes()


@case("node_no_outputs.onnx", "reject", "structure", "a Conv node with no outputs")
def _(out):
    m = base_model()
    n = find_node(m, "conv")
    del n.output[:]
    return ser(m)


@case("conv_missing_weight.onnx", "reject", "structure", "a Conv node with only one input (weight missing)")
def _(out):
    m = base_model()
    n = find_node(m, "conv")
    del n.input[1:]
    return ser(m)


@case("rank_mismatch.onnx", "reject", "shapes", "Conv weight initializer of rank 2 ([16, 9]) with a 4-D input")
def _(out):
    m = base_model()
    t = find_init(m, "w_quantized")
    t.ClearField("dims")
    t.dims.extend([16, 9])
    return ser(m)


def main():
    ap = argparse.ArgumentParser(description="write the hostile ONNX corpus")
    ap.add_argument("--out", default=DEFAULT_OUT)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    names = set()
    for name, expect, defence, desc, fn in CASES:
        assert name not in names, name
        names.add(name)
        data = fn(a.out)
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(data)
        rows.append((name, expect, defence, desc))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    with open(os.path.join(a.out, "MANIFEST.txt"), "w") as f:
        f.write("# Hostile ONNX corpus, generated by test/models/gen_hostile.py (do not edit by hand).\n")
        f.write("# Columns: file, expected outcome, defence it targets, what is wrong.\n")
        f.write("#   reject      = the reader must fail with a diagnostic: no crash, hang, huge allocation,\n")
        f.write("#                 or read outside the model's folder\n")
        f.write("#   accept      = valid control file\n")
        f.write("#   unsupported = valid ONNX; qdqc must either support it or refuse with a message naming it\n")
        f.write(f"# Side files: {EXT_BIN} (external data for the extdata_* cases), extdata_escape_link.bin (symlink to /etc/passwd).\n")
        for r in rows:
            f.write(f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]:<{w2}}  {r[3]}\n")
    print(f"wrote {len(rows)} files to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
