#!/usr/bin/python3
"""f16_graphs.py QDQC [--out DIR]: graphs with f16 float parts (the f16-widen pass) end to end.

NVIDIA ModelOpt writes its quantized models with fp16 float parts by default: a Cast to f16
after each f32 input, f16 weights quantized by QuantizeLinear with f16 scales, f16 biases,
float ops on f16, a Cast back to f32 at the output. qdqc computes such graphs in f32
(docs/numerics.md, "f16 graphs"). Each model is written twice by the same builder: as f16
(ONNX opset 19) and as its f32 twin (every f16 value f32; a Cast to f16 of an f32 value kept as
Cast to f16 -> Cast to f32; f16 graph inputs and outputs kept, with a Cast at the edge):
  - modelopt_cnn: Cast, QuantizeLinear/DequantizeLinear of activations and of f16 weights (per
    channel), Conv + bias + Relu, a 1x1 Conv and a residual Add, GlobalAveragePool, Gemm, Cast;
  - island: a transformer's float parts on f16: LayerNormalization, a quantized MatMul, bias
    Add, Gelu written out (Div, Erf, Add, Mul), Softmax, Where with an f16 constant;
  - f16_io: an f16 graph input and an f16 graph output (plus an f32 output through a Cast);
  - rounding: Cast to f16 then Add of an f16 constant then Cast to f32.
Checks: every model compiles; `qdqc run --engine=jit` equals `--engine=ref` bit for bit; the
f16 model's outputs equal its f32 twin's bit for bit (the widening is exact) with the same
output element types; `rounding` equals numpy's f32(f16(x)) + c in f32, which differs from
an evaluation rounding each op's result to f16 (the documented difference); `f16_io` equals
numpy's f32 evaluation of the widened graph, rounded to f16 at the output.
Prints one line per check and "N checks, M failed"; exit 1 on any failure."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

QDQC = sys.argv[1]
OUT = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else tempfile.mkdtemp()
checks = fails = 0


def check(ok, what):
    global checks, fails
    checks += 1
    fails += not ok
    print("%s %s" % ("PASS" if ok else "FAIL", what))


class G:
    """A graph builder writing f16 (wide=False) or the f32 twin (wide=True)."""

    def __init__(self, wide):
        self.wide, self.nodes, self.inits, self.k = wide, [], [], 0
        self.R = np.random.default_rng(11)  # the same numbers for the f16 model and its twin

    def name(self, p):
        self.k += 1
        return "%s%d" % (p, self.k)

    def ft(self):  # the element type of the float parts
        return TP.FLOAT if self.wide else TP.FLOAT16

    def const(self, a, dt=None):
        n = self.name("c")
        a = np.asarray(a)
        if a.dtype.kind == "f":
            a = a.astype(np.float16).astype(np.float32 if self.wide else np.float16)
        self.inits.append(nh.from_array(a, n))
        return n

    def op(self, op, ins, **kw):
        out = self.name(op.lower())
        self.nodes.append(h.make_node(op, ins, [out], **kw))
        return out

    def to_f16(self, x):  # Cast to f16 of an f32 value: the rounding stays in the twin
        y = self.op("Cast", [x], to=TP.FLOAT16)
        return self.op("Cast", [y], to=TP.FLOAT) if self.wide else y

    def to_f32(self, x):  # Cast to f32 of an f16 value: exact
        return self.op("Identity", [x]) if self.wide else self.op("Cast", [x], to=TP.FLOAT)

    def qdq(self, x, s, zp, axis=None):
        kw = {} if axis is None else dict(axis=axis)
        sc, z = self.const(np.asarray(s)), self.const(np.asarray(zp, np.int8))
        return self.op("DequantizeLinear", [self.op("QuantizeLinear", [x, sc, z], **kw), sc, z], **kw)

    def model(self, ins, outs):
        g = h.make_graph(self.nodes, "g", ins, outs, self.inits)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 19)], ir_version=9)


def modelopt_cnn(wide):
    g = G(wide)
    x = g.qdq(g.to_f16("x"), 0.02, 0)
    w1 = g.qdq(g.const(g.R.normal(0, 0.3, (8, 3, 3, 3))), g.R.uniform(0.002, 0.004, 8), np.zeros(8), 0)
    c1 = g.op("Conv", [x, w1, g.const(g.R.normal(0, 0.1, 8))], pads=[1, 1, 1, 1])
    r1 = g.qdq(g.op("Relu", [c1]), 0.015, 0)
    w2 = g.qdq(g.const(g.R.normal(0, 0.3, (8, 8, 1, 1))), g.R.uniform(0.002, 0.004, 8), np.zeros(8), 0)
    c2 = g.op("Conv", [r1, w2, g.const(g.R.normal(0, 0.1, 8))])
    a = g.qdq(g.op("Relu", [g.op("Add", [c2, r1])]), 0.02, 0)
    p = g.op("Flatten", [g.op("GlobalAveragePool", [a])])
    wf = g.qdq(g.const(g.R.normal(0, 0.3, (5, 8))), g.R.uniform(0.002, 0.004, 5), np.zeros(5), 0)
    g.op("Gemm", [p, wf, g.const(g.R.normal(0, 0.1, 5))], transB=1)
    g.nodes[-1].output[0] = "y"
    g.nodes.append(h.make_node("Identity" if wide else "Cast", ["y"], ["y32"], **({} if wide else dict(to=TP.FLOAT))))
    return g.model([h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 8, 8])],
                   [h.make_tensor_value_info("y32", TP.FLOAT, [1, 5])]), {"x": g.R.uniform(-1, 1, (1, 3, 8, 8))}


def island(wide):
    g = G(wide)
    x = g.to_f16("x")
    ln = g.op("LayerNormalization", [x, g.const(g.R.uniform(0.5, 1.5, 16)), g.const(g.R.normal(0, 0.1, 16))], axis=-1)
    w = g.qdq(g.const(g.R.normal(0, 0.3, (16, 16))), g.R.uniform(0.002, 0.004, 16), np.zeros(16), 1)
    m = g.op("Add", [g.op("MatMul", [g.qdq(ln, 0.03, 0), w]), g.const(g.R.normal(0, 0.1, 16))])
    e = g.op("Erf", [g.op("Div", [m, g.const(np.float32(1.4142135))])])
    gelu = g.op("Mul", [g.op("Mul", [m, g.op("Add", [e, g.const(np.float32(1.0))])]), g.const(np.float32(0.5))])
    mask = g.const(np.array([[True] * 12 + [False] * 4]))
    sel = g.op("Where", [mask, gelu, g.const(np.float32(-65504.0))])
    g.op("Softmax", [sel], axis=-1)
    g.nodes[-1].output[0] = "s"
    g.nodes.append(h.make_node("Identity" if wide else "Cast", ["s"], ["y"], **({} if wide else dict(to=TP.FLOAT))))
    return g.model([h.make_tensor_value_info("x", TP.FLOAT, [1, 4, 16])],
                   [h.make_tensor_value_info("y", TP.FLOAT, [1, 4, 16])]), {"x": g.R.normal(0, 1, (1, 4, 16))}


def f16_io(wide):
    g = G(wide)
    x = g.op("Cast", ["x"], to=TP.FLOAT) if wide else "x"
    m = g.op("Relu", [g.op("Mul", [x, g.const(np.float32(3.1))])])
    y = g.op("Add", [m, g.const(np.float32(0.7))])
    g.nodes.append(h.make_node("Cast" if wide else "Identity", [y], ["y"], **(dict(to=TP.FLOAT16) if wide else {})))
    g.nodes.append(h.make_node("Identity" if wide else "Cast", [m], ["m32"], **({} if wide else dict(to=TP.FLOAT))))
    return g.model([h.make_tensor_value_info("x", TP.FLOAT16, [2, 8])],
                   [h.make_tensor_value_info("y", TP.FLOAT16, [2, 8]),
                    h.make_tensor_value_info("m32", TP.FLOAT, [2, 8])]), {"x": g.R.normal(0, 2, (2, 8)).astype(np.float16)}


def rounding(wide):
    g = G(wide)
    y = g.op("Add", [g.to_f16("x"), g.const(np.float32(2.0 ** -11))])
    g.nodes[-1].output[0] = "s"
    g.nodes.append(h.make_node("Identity" if wide else "Cast", ["s"], ["y"], **({} if wide else dict(to=TP.FLOAT))))
    x = np.array([1.0, 1.5, 3.0, 0.1, -0.7, 2049.0, 1e-3, 7.25], np.float32)
    return g.model([h.make_tensor_value_info("x", TP.FLOAT, [8])],
                   [h.make_tensor_value_info("y", TP.FLOAT, [8])]), {"x": x}


def run(path, feeds, engine):
    d = tempfile.mkdtemp(dir=OUT)
    cmd = [QDQC, "run", path, "--engine=" + engine, "--output-dir", d]
    for k, v in feeds.items():
        f = os.path.join(d, "in_%s.npy" % k)
        np.save(f, v.astype(np.float16) if v.dtype == np.float16 else v.astype(np.float32))
        cmd += ["--input", "%s=%s" % (k, f)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(r.stderr.strip())
        return None
    return {f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".npy") and not f.startswith("in_")}


def same(a, b):
    return a is not None and b is not None and a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype and np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8)) for k in a)


def case(name, build):
    m16, feeds = build(False)
    m32, _ = build(True)
    p16, p32 = os.path.join(OUT, name + ".onnx"), os.path.join(OUT, name + "_f32.onnx")
    onnx.save(m16, p16)
    onnx.save(m32, p32)
    r = subprocess.run([QDQC, p16, "-o", os.path.join(OUT, name + ".o")], capture_output=True, text=True)
    check(r.returncode == 0, "%s: compiles%s" % (name, "" if r.returncode == 0 else ": " + r.stderr.strip()))
    jit, ref, twin = run(p16, feeds, "jit"), run(p16, feeds, "ref"), run(p32, feeds, "jit")
    check(same(jit, ref), "%s: jit == ref bit for bit" % name)
    check(same(jit, twin), "%s: equals its f32 twin bit for bit" % name)
    return jit, feeds


def main():
    os.makedirs(OUT, exist_ok=True)
    case("modelopt_cnn", modelopt_cnn)
    case("island", island)
    out, feeds = case("f16_io", f16_io)
    if out is not None:
        x = feeds["x"].astype(np.float32)
        m = np.maximum(x * np.float32(np.float16(3.1)), np.float32(0))
        want = (m + np.float32(np.float16(0.7))).astype(np.float16)
        check(out["y"].dtype == np.float16 and np.array_equal(out["y"], want) and np.array_equal(out["m32"], m),
              "f16_io: f16 output == numpy's f32 evaluation rounded to f16 once")
    out, feeds = case("rounding", rounding)
    if out is not None:
        xh = feeds["x"].astype(np.float16).astype(np.float32)
        want = xh + np.float32(2.0 ** -11)
        per_op = want.astype(np.float16).astype(np.float32)
        check(np.array_equal(out["y"], want) and not np.array_equal(out["y"], per_op),
              "rounding: f32(f16(x)) + c in f32 (not rounded to f16 after the add)")
    print("%d checks, %d failed" % (checks, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
