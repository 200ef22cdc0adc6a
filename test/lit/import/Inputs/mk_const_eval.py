#!/usr/bin/python3
"""mk_const_eval.py CASE OUT: small ONNX models for import/const-eval.test: ops that qdqc
evaluates at import on constant inputs (Mod, ScatterND, Trilu, float arithmetic of constants)
and Dropout as the identity. The `mask` case also writes OUT.x.npy (the input) and OUT.y.npy,
OUT.m0.npy, OUT.m1.npy (numpy's results). Run with /usr/bin/python3."""
import sys

import numpy as np
from onnx import TensorProto as TP, helper as h, numpy_helper as nh


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="mk_const_eval")
    m.ir_version = 8
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
def mask(out):
    """A mask builder like Swin's: Range -> Mod (both fmod), ScatterND (none, then add with a
    repeated index), Trilu, Sub of constants, Equal, Where; added to the input after a
    Dropout(ratio=0, training_mode=True)."""
    nodes = [
        h.make_node("Range", ["r0", "r1", "r2"], ["idx"], name="range"),
        h.make_node("Mod", ["idx", "four"], ["m0"], name="mod0", fmod=0),
        h.make_node("Mod", ["idx", "mthree"], ["m1"], name="mod1", fmod=1),
        h.make_node("ConstantOfShape", ["shape"], ["zeros"], name="zeros",
                    value=h.make_tensor("v", TP.FLOAT, [1], [0.0])),
        h.make_node("ScatterND", ["zeros", "ind0", "upd0"], ["s0"], name="scatter0"),
        h.make_node("ScatterND", ["s0", "ind1", "upd1"], ["s1"], name="scatter1",
                    reduction="add"),
        h.make_node("Trilu", ["s1", "k"], ["tri"], name="trilu", upper=0),
        h.make_node("Transpose", ["tri"], ["trit"], name="tr"),
        h.make_node("Sub", ["tri", "trit"], ["d"], name="sub"),
        h.make_node("Equal", ["d", "zero"], ["eq"], name="eq"),
        h.make_node("Where", ["eq", "zero", "m100"], ["w"], name="where"),
        h.make_node("Dropout", ["x", "ratio", "train"], ["xd", "mask"], name="drop"),
        h.make_node("Cast", ["mask"], ["maskf"], name="cast", to=TP.FLOAT),
        h.make_node("Mul", ["xd", "maskf"], ["xm"], name="mul"),
        h.make_node("Add", ["xm", "w"], ["y"], name="add"),
    ]
    ind0 = np.array([[0, 0], [1, 2], [3, 3], [-1, 0], [2, 1]], np.int64)
    upd0 = np.array([1, 2, 3, 4, 5], np.float32)
    ind1 = np.array([[1, 2], [1, 2], [0, 3]], np.int64)
    upd1 = np.array([0.5, 0.25, 7], np.float32)
    inits = [init("r0", np.int64(-6)), init("r1", np.int64(10)), init("r2", np.int64(1)),
             init("four", np.array([4], np.int64)), init("mthree", np.array(-3, np.int64)),
             init("shape", np.array([4, 4], np.int64)), init("ind0", ind0), init("upd0", upd0),
             init("ind1", ind1), init("upd1", upd1), init("k", np.int64(1)),
             init("zero", np.float32(0)), init("m100", np.float32(-100)),
             init("ratio", np.float32(0)), init("train", np.bool_(True))]
    m = model(nodes, [vi("x", TP.FLOAT, [2, 4, 4])],
              [vi("y", TP.FLOAT, [2, 4, 4]), vi("m0", TP.INT64, [16]),
               vi("m1", TP.INT64, [16])], inits)
    # numpy's results
    idx = np.arange(-6, 10, dtype=np.int64)
    m0, m1 = np.mod(idx, 4), np.fmod(idx, -3)
    s = np.zeros((4, 4), np.float32)
    for i, u in zip(ind0, upd0):
        s[tuple(i)] = u
    for i, u in zip(ind1, upd1):
        s[tuple(i)] += u
    tri = np.tril(s, 1)
    w = np.where(tri - tri.T == 0, np.float32(0), np.float32(-100)).astype(np.float32)
    x = np.random.default_rng(3).standard_normal((2, 4, 4)).astype(np.float32)
    np.save(out + ".x.npy", x)
    np.save(out + ".y.npy", (x + w).astype(np.float32))
    np.save(out + ".m0.npy", m0)
    np.save(out + ".m1.npy", m1)
    return m


@case
def float_mod(out):
    """Float Mod: fmod=1 (C fmod) and fmod=0 (numpy's mod, the divisor's sign)."""
    a = np.array([-7.5, -3, 0, 2.25, 7.5, -0.0], np.float32)
    b = np.array([2, -2, 3, -1.5, -2, 2], np.float32)
    nodes = [h.make_node("Mod", ["a", "b"], ["f"], name="fmod", fmod=1),
             h.make_node("Mod", ["a", "b"], ["p"], name="pmod", fmod=0)]
    np.save(out + ".f.npy", np.fmod(a, b))
    np.save(out + ".p.npy", np.mod(a, b))
    return model(nodes, [], [vi("f", TP.FLOAT, [6]), vi("p", TP.FLOAT, [6])],
                 [init("a", a), init("b", b)])


@case
def scatter_minmax(out):
    """ScatterND with reduction max and min (opset 18) on i32."""
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    ind = np.array([[0], [1], [0]], np.int64)
    upd = np.array([[5, -1, 2], [0, 9, 4], [-3, 7, 1]], np.int32)
    nodes = [h.make_node("ScatterND", ["d", "i", "u"], ["mx"], name="smax", reduction="max"),
             h.make_node("ScatterND", ["d", "i", "u"], ["mn"], name="smin", reduction="min")]
    mx, mn = data.copy(), data.copy()
    for i, u in zip(ind, upd):
        mx[i[0]] = np.maximum(mx[i[0]], u)
        mn[i[0]] = np.minimum(mn[i[0]], u)
    np.save(out + ".mx.npy", mx)
    np.save(out + ".mn.npy", mn)
    return model(nodes, [], [vi("mx", TP.INT32, [2, 3]), vi("mn", TP.INT32, [2, 3])],
                 [init("d", data), init("i", ind), init("u", upd)], opset=18)


@case
def mod_runtime(out):
    """Mod of a value computed at run time: refused, naming it."""
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("Mod", ["r", "b"], ["y"], name="mod", fmod=1)]
    return model(nodes, [vi("x", TP.FLOAT, [3])], [vi("y", TP.FLOAT, [3])],
                 [init("b", np.float32(2))])


@case
def mod_input(out):
    """Mod of a graph input: refused, suggesting --const-input."""
    return model([h.make_node("Mod", ["x", "b"], ["y"], name="mod")],
                 [vi("x", TP.INT32, [3])], [vi("y", TP.INT32, [3])],
                 [init("b", np.int32(2))])


@case
def mod_zero(out):
    """Integer Mod by zero."""
    return model([h.make_node("Mod", ["a", "b"], ["y"], name="mod")], [],
                 [vi("y", TP.INT32, [2])],
                 [init("a", np.array([3, 4], np.int32)), init("b", np.array([2, 0], np.int32))])


@case
def scatter_oob(out):
    """ScatterND with an index outside the data."""
    return model([h.make_node("ScatterND", ["d", "i", "u"], ["y"], name="scatter")], [],
                 [vi("y", TP.FLOAT, [3])],
                 [init("d", np.zeros(3, np.float32)), init("i", np.array([[3]], np.int64)),
                  init("u", np.ones(1, np.float32))])


@case
def expand_huge(out):
    """A constant Expand to 2^40 elements: refused with an error, not an allocation."""
    return model([h.make_node("Expand", ["c", "s"], ["e"], name="expand"),
                  h.make_node("Mod", ["e", "c"], ["y"], name="mod")], [],
                 [vi("y", TP.INT64, [1 << 20, 1 << 20])],
                 [init("c", np.array([3], np.int64)),
                  init("s", np.array([1 << 20, 1 << 20], np.int64))])


@case
def mod_large(out):
    """Mod of two constants broadcast to 2^28 i64 elements (2 GiB): refused."""
    return model([h.make_node("Mod", ["a", "b"], ["y"], name="mod")], [],
                 [vi("y", TP.INT64, [1 << 14, 1 << 14])],
                 [init("a", np.ones((1 << 14, 1), np.int64)),
                  init("b", np.ones((1, 1 << 14), np.int64))])


@case
def dropout_training(out):
    """Dropout training with a nonzero ratio: refused."""
    return model([h.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")],
                 [vi("x", TP.FLOAT, [3])], [vi("y", TP.FLOAT, [3])],
                 [init("ratio", np.float32(0.1)), init("train", np.bool_(True))])


if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2]
    m = CASES[name](out)
    with open(out, "wb") as f:
        f.write(m.SerializeToString())
