#!/usr/bin/python3
"""gen_cnn_pair.py --out DIR: a small float CNN and its ONNX Runtime quantize_static QDQ form
(ort_quant.py), for `qdqc compare` (docs/accuracy.md).

  DIR/cnn_float.onnx        x[1,3,32,32] -> conv1 3x3 (16) -> relu -> conv2 3x3 s2 (32) -> relu
                            -> conv3 1x1 (32) -> add (residual) -> relu -> global average pool
                            -> flatten -> fc (gemm, 10)
  DIR/cnn_qdq.onnx          quantize_static, calibrated on 8 seeded standard-normal inputs
  DIR/cnn_qdq_badcal.onnx   the same, calibrated on inputs 8x smaller: every activation range is
                            too narrow for real inputs, so the quantizes clip
  DIR/cnn/input.npy         one standard-normal input (seeded)
Weights: seeded normal, He-scaled; everything is deterministic."""
import argparse
import copy
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_quant  # noqa: E402


def float_cnn(rng):
    def w(name, shape):
        fan_in = int(np.prod(shape[1:]))
        return nh.from_array((rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name)

    def b(name, n):
        return nh.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name)

    inits = [w("conv1.w", (16, 3, 3, 3)), b("conv1.b", 16), w("conv2.w", (32, 16, 3, 3)), b("conv2.b", 32),
             w("conv3.w", (32, 32, 1, 1)), b("conv3.b", 32), w("fc.w", (10, 32)), b("fc.b", 10)]
    nodes = [
        h.make_node("Conv", ["x", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        h.make_node("Conv", ["r1", "conv2.w", "conv2.b"], ["c2"], name="conv2", pads=[1, 1, 1, 1], strides=[2, 2]),
        h.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        h.make_node("Conv", ["r2", "conv3.w", "conv3.b"], ["c3"], name="conv3"),
        h.make_node("Add", ["c3", "r2"], ["s"], name="add"),
        h.make_node("Relu", ["s"], ["r3"], name="relu3"),
        h.make_node("GlobalAveragePool", ["r3"], ["p"], name="gap"),
        h.make_node("Flatten", ["p"], ["f"], name="flatten"),
        h.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], name="fc", transB=1),
    ]
    g = h.make_graph(nodes, "cnn", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 32, 32])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 10])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="gen_cnn_pair")
    m.ir_version = 7
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(20261128)
    f = float_cnn(rng)
    calib = [{"x": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)} for _ in range(8)]
    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    os.makedirs(os.path.join(a.out, "cnn"), exist_ok=True)
    onnx.save(f, os.path.join(a.out, "cnn_float.onnx"))
    onnx.save(ort_quant.quantize_static(copy.deepcopy(f), calib), os.path.join(a.out, "cnn_qdq.onnx"))
    small = [{"x": c["x"] / 8} for c in calib]
    onnx.save(ort_quant.quantize_static(copy.deepcopy(f), small), os.path.join(a.out, "cnn_qdq_badcal.onnx"))
    np.save(os.path.join(a.out, "cnn", "input.npy"), x)
    print("wrote %s" % ", ".join(os.path.join(a.out, n) for n in
                                 ("cnn_float.onnx", "cnn_qdq.onnx", "cnn_qdq_badcal.onnx", "cnn/input.npy")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
