#!/usr/bin/python3
"""gen_wonly_mlp.py: the weight-only int8 MLPs of the benchmark (issue 15 item 1).

    /usr/bin/python3 bench/gen_wonly_mlp.py OUTDIR

x[M, D] -> DequantizeLinear(int8 W0 [D, D], per-channel axis 1) MatMul -> Relu -> ... ->
DequantizeLinear(int8 W_{L-1}) MatMul: float activations, weights stored as int8 with one
scale per column (symmetric, zero point 0), as a weight-only quantizer exports them. Writes
OUTDIR/NAME.onnx and OUTDIR/NAME/input.npy (seeded, deterministic) for every NAME in MLPS:
(name, M, D, layers). Needs python3-onnx and numpy (Debian's /usr/bin/python3)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (name, batch M, width D, layers): weight bytes = layers * D * D
MLPS = [("wonly_mlp_i8_2048_b1", 1, 2048, 2),   # 8 MiB of weights: fits the L3
        ("wonly_mlp_i8_2048_b8", 8, 2048, 2),   # batch 8: the compute-bound path
        ("wonly_mlp_i8_4096_b1", 1, 4096, 3)]   # 48 MiB: streams from DRAM


def build(name, m, d, layers, out):
    rng = np.random.default_rng(1234 + d + m + layers)
    inits, nodes = [], []
    x = "x"
    for i in range(layers):
        w = rng.integers(-127, 128, size=(d, d), dtype=np.int8)
        s = (0.5 / np.sqrt(d) / 64 * (0.5 + rng.random(d))).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w%d" % i), numpy_helper.from_array(s, "s%d" % i)]
        nodes.append(helper.make_node("DequantizeLinear", ["w%d" % i, "s%d" % i], ["wf%d" % i], axis=1))
        y = "y" if i == layers - 1 else "h%d" % i
        nodes.append(helper.make_node("MatMul", [x, "wf%d" % i], [y if i == layers - 1 else "mm%d" % i]))
        if i < layers - 1:
            nodes.append(helper.make_node("Relu", ["mm%d" % i], [y]))
        x = y
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, d])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7,
                              producer_name="qdqc-gen_wonly_mlp")
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    os.makedirs(os.path.join(out, name), exist_ok=True)
    np.save(os.path.join(out, name, "input.npy"),
            np.random.default_rng(7).standard_normal((m, d)).astype(np.float32))


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, m, d, layers in MLPS:
        build(name, m, d, layers, sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
