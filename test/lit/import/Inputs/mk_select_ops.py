#!/usr/bin/python3
"""mk_select_ops.py CASE OUT: one small ONNX model with one of the selection ops
(comparisons, logic, Where, Expand, Tile, Range, ReduceSum/Max/Min, ArgMax, Cast, Gather,
Einsum) for import/select-ops.test. Run with /usr/bin/python3."""
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="mk_select_ops")
    m.ir_version = 8 if opset <= 17 else 9
    return m


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def init(name, arr):
    return nh.from_array(np.asarray(arr), name)


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def compare_logic():
    nodes = [h.make_node("Equal", ["a", "b"], ["e"], name="eq"),
             h.make_node("Less", ["a", "b"], ["l"], name="lt"),
             h.make_node("LessOrEqual", ["a", "b"], ["le"], name="le"),
             h.make_node("GreaterOrEqual", ["a", "b"], ["ge"], name="ge"),
             h.make_node("Greater", ["a", "b"], ["g"], name="gt"),
             h.make_node("Not", ["e"], ["n"], name="not"),
             h.make_node("And", ["l", "le"], ["an"], name="and"),
             h.make_node("Or", ["an", "g"], ["o"], name="or"),
             h.make_node("Xor", ["o", "ge"], ["x"], name="xor"),
             h.make_node("Where", ["x", "a", "b"], ["y"], name="where")]
    return model(nodes, [vi("a", TP.FLOAT, [2, 3]), vi("b", TP.FLOAT, [3])],
                 [vi("n", TP.BOOL, [2, 3]), vi("y", TP.FLOAT, [2, 3])], opset=16)


@case
def less_equal_opset11():
    return model([h.make_node("LessOrEqual", ["a", "a"], ["y"], name="le")],
                 [vi("a", TP.FLOAT, [3])], [vi("y", TP.BOOL, [3])], opset=11)


@case
def expand_tile():
    nodes = [h.make_node("Expand", ["x", "shape"], ["e"], name="expand"),
             h.make_node("Tile", ["e", "reps"], ["y"], name="tile")]
    return model(nodes, [vi("x", TP.FLOAT, [3, 1])], [vi("y", TP.FLOAT, [2, 6, 8])],
                 [init("shape", np.array([2, 1, 4], np.int64)),
                  init("reps", np.array([1, 2, 2], np.int64))])


@case
def expand_runtime_shape():
    return model([h.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
                 [vi("x", TP.FLOAT, [3, 1]), vi("shape", TP.INT64, [2])],
                 [vi("y", TP.FLOAT, None)])


@case
def causal_mask():
    """A decoder's causal mask from the sequence length of its input, as exports write it:
    Shape -> Gather -> Range -> Unsqueeze x2 -> LessOrEqual -> Where -> Expand, added to the
    scores. Everything but the Add folds."""
    nodes = [h.make_node("Shape", ["s"], ["sh"], name="shape"),
             h.make_node("Gather", ["sh", "i3"], ["n"], name="seq_len", axis=0),
             h.make_node("Range", ["zero", "n", "one"], ["r"], name="range"),
             h.make_node("Unsqueeze", ["r", "ax0"], ["rr"], name="row"),
             h.make_node("Unsqueeze", ["r", "ax1"], ["rc"], name="col"),
             h.make_node("LessOrEqual", ["rr", "rc"], ["m"], name="causal"),
             h.make_node("Where", ["m", "fz", "fninf"], ["w"], name="where"),
             h.make_node("Expand", ["w", "shp"], ["mask"], name="expand"),
             h.make_node("Add", ["s", "mask"], ["y"], name="add")]
    inits = [init("i3", np.array(3, np.int64)), init("zero", np.array(0, np.int64)),
             init("one", np.array(1, np.int64)), init("ax0", np.array([0], np.int64)),
             init("ax1", np.array([1], np.int64)), init("fz", np.array(0, np.float32)),
             init("fninf", np.array(-1e4, np.float32)),
             init("shp", np.array([1, 1, 3, 3], np.int64))]
    return model(nodes, [vi("s", TP.FLOAT, [2, 4, 3, 3])], [vi("y", TP.FLOAT, [2, 4, 3, 3])],
                 inits)


@case
def range_runtime():
    return model([h.make_node("Range", ["s", "l", "d"], ["y"], name="range")],
                 [vi("s", TP.INT64, []), vi("l", TP.INT64, []), vi("d", TP.INT64, [])],
                 [vi("y", TP.INT64, None)])


@case
def reductions13():
    nodes = [h.make_node("ReduceSum", ["x", "axes"], ["s"], name="sum", keepdims=0),
             h.make_node("ReduceMax", ["x"], ["m"], name="max", axes=[-1]),
             h.make_node("ReduceMin", ["x"], ["n"], name="min"),
             h.make_node("ArgMax", ["x"], ["a"], name="argmax", axis=-1, keepdims=0,
                         select_last_index=1),
             h.make_node("ReduceSum", ["x", "none"], ["i"], name="noop", noop_with_empty_axes=1)]
    return model(nodes, [vi("x", TP.FLOAT, [2, 3, 4])],
                 [vi("s", TP.FLOAT, [2]), vi("m", TP.FLOAT, [2, 3, 1]), vi("n", TP.FLOAT, [1, 1, 1]),
                  vi("a", TP.INT64, [2, 3]), vi("i", TP.FLOAT, [2, 3, 4])],
                 [init("axes", np.array([1, 2], np.int64)), init("none", np.zeros([0], np.int64))])


@case
def reductions18():
    nodes = [h.make_node("ReduceMax", ["x", "axes"], ["m"], name="max", keepdims=0),
             h.make_node("ReduceMin", ["x", "axes"], ["n"], name="min")]
    return model(nodes, [vi("x", TP.INT8, [2, 3, 4])],
                 [vi("m", TP.INT8, [2, 4]), vi("n", TP.INT8, [2, 1, 4])],
                 [init("axes", np.array([1], np.int64))], opset=18)


@case
def reducemax18_axes_attr():
    return model([h.make_node("ReduceMax", ["x"], ["m"], name="max", axes=[1])],
                 [vi("x", TP.FLOAT, [2, 3])], [vi("m", TP.FLOAT, None)], opset=18)


@case
def argmax_bad_last():
    return model([h.make_node("ArgMax", ["x"], ["a"], name="argmax", select_last_index=2)],
                 [vi("x", TP.FLOAT, [2, 3])], [vi("a", TP.INT64, None)])


@case
def cast_bool():
    nodes = [h.make_node("Cast", ["x"], ["b"], name="to_bool", to=TP.BOOL),
             h.make_node("Cast", ["b"], ["y"], name="to_i32", to=TP.INT32)]
    return model(nodes, [vi("x", TP.FLOAT, [4])], [vi("y", TP.INT32, [4])])


@case
def gather_bad_index():
    return model([h.make_node("Gather", ["x", "idx"], ["y"], name="gather", axis=1)],
                 [vi("x", TP.FLOAT, [2, 3])], [vi("y", TP.FLOAT, None)],
                 [init("idx", np.array([0, -3, 3], np.int64))])


def einsum(eq, shapes, dt=TP.FLOAT):
    ins = ["x%d" % i for i in range(len(shapes))]
    return model([h.make_node("Einsum", ins, ["y"], name="einsum", equation=eq)],
                 [vi(n, dt, s) for n, s in zip(ins, shapes)], [vi("y", dt, None)], opset=12)


@case
def einsum_qk():
    return einsum("bhid,bhjd->bhij", [[1, 2, 4, 8], [1, 2, 5, 8]])


@case
def einsum_pv():
    return einsum("bhij,bhjd->bhid", [[1, 2, 4, 5], [1, 2, 5, 8]])


@case
def einsum_bid():
    return einsum("bid, bjd -> bij", [[2, 4, 8], [2, 5, 8]])


@case
def einsum_trace():
    return einsum("...ii->...", [[3, 4, 4]])


@case
def einsum_three():
    return einsum("ij,jk,kl->il", [[2, 3], [3, 4], [4, 5]])


@case
def einsum_bad_label():
    return einsum("ij,jk->il", [[2, 3], [3, 4]])


@case
def einsum_sizes():
    return einsum("ij,jk->ik", [[2, 3], [4, 5]])


@case
def einsum_qdq():
    """Attention scores in the ORT QDQ style: u8 Q and K behind DequantizeLinear, Einsum
    "bhid,bhjd->bhij", QuantizeLinear -> DequantizeLinear after. The default pipeline makes the
    transpose an integer one and the Einsum's matmul a qmatmul."""
    def qdq(x, s, z, out):
        return [h.make_node("QuantizeLinear", [x, s, z], [out + "_q"], name=out + "_q"),
                h.make_node("DequantizeLinear", [out + "_q", s, z], [out], name=out + "_dq")]
    nodes = (qdq("q", "sq", "zq", "qd") + qdq("k", "sk", "zk", "kd") +
             [h.make_node("Einsum", ["qd", "kd"], ["s"], name="scores",
                          equation="bhid,bhjd->bhij")] + qdq("s", "ss", "zs", "y"))
    inits = [init("sq", np.array(0.02, np.float32)), init("zq", np.array(128, np.uint8)),
             init("sk", np.array(0.03, np.float32)), init("zk", np.array(120, np.uint8)),
             init("ss", np.array(0.05, np.float32)), init("zs", np.array(128, np.uint8))]
    return model(nodes, [vi("q", TP.FLOAT, [1, 2, 4, 8]), vi("k", TP.FLOAT, [1, 2, 5, 8])],
                 [vi("y", TP.FLOAT, [1, 2, 4, 5])], inits)


def main():
    m = CASES[sys.argv[1]]()
    with open(sys.argv[2], "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
