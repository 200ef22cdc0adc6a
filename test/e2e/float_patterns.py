#!/usr/bin/python3
"""float_patterns.py QDQC: the written-out Gelu and LayerNorm of transformer exports, end to end
(the float-patterns pass, lib/transforms/float_patterns.c). ONNX models built here in the
exporters' spellings: PyTorch's nn.GELU (Div sqrt(2), Erf, Add 1, Mul x, Mul 0.5), HF BERT's
(x * 0.5) * (1 + erf(x * 1/sqrt(2))), GPT-2's gelu_new (Pow 3, tanh), PyTorch's LayerNorm
before opset 17 (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta),
each in float and between u8 DequantizeLinear / QuantizeLinear. For each model:
  - the default pipeline fuses the pattern (gelu / layernorm in `qdqc MODEL -o M.qir`, or the
    table of the quantized gelu; none of erf, tanh, pow, sqrt left);
  - JIT == reference, bit for bit (2 threads);
  - the fused result is within a few f32 ulp of the graph as imported (`--passes=`) for float
    outputs (relative 2e-6 of the output's range), within 1 step for quantized ones;
  - and within 2e-5 (relative to the range) of a float64 numpy evaluation.
Prints one line per check and "N checks, M failed"; exit 1 on any failure."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 5


def const(name, v):
    return numpy_helper.from_array(np.asarray(v, np.float32), name)


def gelu_nodes(x, y, form):
    """the written-out gelu of x into y, and its constants"""
    if form == "torch":
        return [helper.make_node("Div", [x, "s2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
                helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", [x, "a"], ["m"]),
                helper.make_node("Mul", ["m", "half"], [y])], \
            [const("s2", np.sqrt(2.0)), const("one", 1.0), const("half", 0.5)]
    if form == "hf":
        return [helper.make_node("Mul", [x, "half"], ["h"]), helper.make_node("Mul", [x, "r2"], ["d"]),
                helper.make_node("Erf", ["d"], ["e"]), helper.make_node("Add", ["one", "e"], ["a"]),
                helper.make_node("Mul", ["h", "a"], [y])], \
            [const("r2", 1 / np.sqrt(2.0)), const("one", 1.0), const("half", 0.5)]
    return [helper.make_node("Pow", [x, "three"], ["p"]), helper.make_node("Mul", ["p", "k"], ["m1"]),
            helper.make_node("Add", [x, "m1"], ["a1"]), helper.make_node("Mul", ["a1", "c"], ["m2"]),
            helper.make_node("Tanh", ["m2"], ["t"]), helper.make_node("Add", ["t", "one"], ["a2"]),
            helper.make_node("Mul", ["half", x], ["h"]), helper.make_node("Mul", ["h", "a2"], [y])], \
        [const("three", 3.0), const("k", 0.044715), const("c", np.sqrt(2 / np.pi)), const("one", 1.0),
         const("half", 0.5)]


def ln_nodes(x, y, d):
    rng = np.random.default_rng(3)
    return [helper.make_node("ReduceMean", [x], ["mu"], axes=[-1], keepdims=1),
            helper.make_node("Sub", [x, "mu"], ["xc"]), helper.make_node("Pow", ["xc", "two"], ["sq"]),
            helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1], keepdims=1),
            helper.make_node("Add", ["var", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"]),
            helper.make_node("Div", ["xc", "sd"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["gn"]),
            helper.make_node("Add", ["gn", "beta"], [y])], \
        [const("two", 2.0), const("eps", 1e-5), const("gamma", 1 + 0.1 * rng.standard_normal(d)),
         const("beta", 0.1 * rng.standard_normal(d))]


def gelu_np(x, form):
    x = x.astype(np.float64)
    if form == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def model(kind, quant, shape):
    body, inits = (ln_nodes("xf", "yf", shape[-1]) if kind == "ln" else gelu_nodes("xf", "yf", kind))
    nodes = list(body)
    if quant:
        inits += [const("sx", 0.04), numpy_helper.from_array(np.array(128, np.uint8), "zx"),
                  const("sy", 0.03), numpy_helper.from_array(np.array(60, np.uint8), "zy")]
        nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xf"])] + nodes + \
                [helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"]),
                 helper.make_node("DequantizeLinear", ["y", "sy", "zy"], ["yd"])]
        inp = helper.make_tensor_value_info("x", TensorProto.UINT8, shape)
        out = helper.make_tensor_value_info("yd", TensorProto.FLOAT, shape)
    else:
        nodes = [helper.make_node("Identity", ["x"], ["xf"])] + nodes
        inp = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        out = helper.make_tensor_value_info("yf", TensorProto.FLOAT, shape)
    g = helper.make_graph(nodes, kind, [inp], [out], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def run(qdqc, path, x, extra, tmp, tag):
    np.save(os.path.join(tmp, "x.npy"), x)
    od = os.path.join(tmp, tag)
    r = subprocess.run([qdqc, "run", path, "--input", "x=" + os.path.join(tmp, "x.npy"),
                        "--output-dir", od] + extra, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip())
    f = [n for n in os.listdir(od) if n.endswith(".npy")]
    return np.load(os.path.join(od, f[0]))


def main():
    qdqc = sys.argv[1]
    rng = np.random.default_rng(SEED)
    nfail = nchk = 0

    def check(ok, what):
        nonlocal nfail, nchk
        nchk += 1
        nfail += not ok
        print("%s %s" % ("PASS" if ok else "FAIL", what))

    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("torch", "hf", "tanh", "ln"):
            for quant in (False, True):
                shape = [2, 5, 96] if kind == "ln" else [3, 700]
                name = "%s%s" % (kind, "_u8" if quant else "")
                path = os.path.join(tmp, name + ".onnx")
                onnx.save(model(kind, quant, shape), path)
                qir = os.path.join(tmp, name + ".qir")
                subprocess.run([qdqc, path, "-o", qir], capture_output=True, text=True)
                ir = open(qir).read() if os.path.exists(qir) else ""
                fused = ("layernorm" if kind == "ln" else "gelu") in ir or (quant and "lut" in ir)
                left = [op for op in ("erf ", "tanh ", "pow ", "sqrt ") if (" = " + op) in ir]
                check(fused and not left, "%s fused by the default pipeline%s" % (name, " (left: %s)" % left if left else ""))
                if quant:
                    x = rng.integers(0, 256, shape).astype(np.uint8)
                    xf = (x.astype(np.float32) - 128) * np.float32(0.04)
                else:
                    x = (rng.standard_normal(shape) * (2.0 if kind != "ln" else 3.0)).astype(np.float32)
                    xf = x
                ref = run(qdqc, path, x, ["--engine=ref"], tmp, name + "_ref")
                jit = run(qdqc, path, x, ["--engine=jit", "--threads", "2"], tmp, name + "_jit")
                lit = run(qdqc, path, x, ["--engine=ref", "--passes="], tmp, name + "_lit")
                check(np.array_equal(ref.view(np.uint32), jit.view(np.uint32)), "%s jit == ref" % name)
                span = float(np.max(np.abs(lit))) or 1.0
                if quant:
                    steps = np.max(np.abs(np.rint((ref - lit) / np.float32(0.03))))
                    check(steps <= 1, "%s fused vs as imported: %d step(s)" % (name, steps))
                else:
                    d = float(np.max(np.abs(ref - lit))) / span
                    check(d <= 2e-6, "%s fused vs as imported: %.2e of the range" % (name, d))
                if kind == "ln":
                    x64 = xf.astype(np.float64)
                    mu = x64.mean(-1, keepdims=True)
                    want = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
                    m = onnx.load(path)
                    gm = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
                    want = want * gm["gamma"] + gm["beta"]
                else:
                    want = gelu_np(xf, "tanh" if kind == "tanh" else "erf")
                if quant:
                    want = (np.clip(np.rint(want / 0.03) + 60, 0, 255) - 60) * 0.03
                    d = float(np.max(np.abs(ref - want))) / 0.03
                    check(d <= 1 + 1e-6, "%s vs numpy: %.3g step(s)" % (name, d))
                else:
                    d = float(np.max(np.abs(ref - want))) / span
                    check(d <= 2e-5, "%s vs numpy float64: %.2e of the range" % (name, d))
    print("%d checks, %d failed" % (nchk, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
