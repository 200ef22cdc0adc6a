#!/usr/bin/python3
"""gen_wonly_mlp.py: the weight-only MLPs and decoder linears of the benchmark.

    /usr/bin/python3 bench/gen_wonly_mlp.py OUTDIR

x[M, D] -> DequantizeLinear(int8 W0 [D, D], per-channel axis 1) MatMul -> Relu -> ... ->
DequantizeLinear(int8 W_{L-1}) MatMul: float activations, weights stored as int8 with one
scale per column (symmetric, zero point 0), as a weight-only quantizer exports them.

LINEARS: one decoder linear at LLaMA-7B shapes, x[M, 4096] -> DequantizeLinear(W [4096, N])
-> MatMul with N = 4096 (attention projections) or 11008 (MLP up/gate), batch M = 1 or 16:
int8 weights with one scale per column (opset 13), or symmetric int4 weights (zero point 0,
values in [-8, 7]) with one scale per block of 32 or 128 rows along K, DequantizeLinear-21
`block_size` (opset 21), as block-wise 4-bit quantizers (GPTQ/RTN exports, ORT's MatMulNBits
quantizer in QDQ form) store them. Debian's onnx 1.12 has no INT4 enum: data type 22 is
written as a number, the values packed two per byte, low nibble first (ONNX's layout).

Writes OUTDIR/NAME.onnx and OUTDIR/NAME/input.npy (seeded, deterministic) for every NAME in
MLPS (name, M, D, layers) and LINEARS (name, M, K, N, bits, block). Needs python3-onnx and
numpy (Debian's /usr/bin/python3)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (name, batch M, width D, layers): weight bytes = layers * D * D
MLPS = [("wonly_mlp_i8_2048_b1", 1, 2048, 2),   # 8 MiB of weights: fits the L3
        ("wonly_mlp_i8_2048_b8", 8, 2048, 2),   # batch 8: the compute-bound path
        ("wonly_mlp_i8_4096_b1", 1, 4096, 3)]   # 48 MiB: streams from DRAM

# (name, batch M, K, N, weight bits, block size along K (0: one scale per column))
LINEARS = [("llama_qproj_i8_b1", 1, 4096, 4096, 8, 0),
           ("llama_qproj_i4g32_b1", 1, 4096, 4096, 4, 32),
           ("llama_qproj_i4g128_b1", 1, 4096, 4096, 4, 128),
           ("llama_up_i8_b1", 1, 4096, 11008, 8, 0),
           ("llama_up_i4g32_b1", 1, 4096, 11008, 4, 32),
           ("llama_up_i4g128_b1", 1, 4096, 11008, 4, 128),
           ("llama_qproj_i8_b16", 16, 4096, 4096, 8, 0),
           ("llama_qproj_i4g32_b16", 16, 4096, 4096, 4, 32),
           ("llama_up_i4g128_b16", 16, 4096, 11008, 4, 128)]
INT4 = 22


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


def int4_tensor(name, w):
    """An INT4 initializer: w (int8 values in [-8, 7]) packed two per byte, low nibble first."""
    flat = (w.reshape(-1).astype(np.int16) & 15).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = onnx.TensorProto()
    t.name = name
    t.data_type = INT4
    t.dims.extend(w.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return t


def build_linear(name, m, k, n, bits, block, out):
    rng = np.random.default_rng(4321 + k + n + m + bits + block)
    if bits == 8:
        w = rng.integers(-127, 128, size=(k, n), dtype=np.int8)
        s = (1.0 / np.sqrt(k) / 64 * (0.5 + rng.random(n))).astype(np.float32)
        winit = numpy_helper.from_array(w, "w")
        dq = helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1)
        opset, irv = 13, 7
    else:
        w = rng.integers(-8, 8, size=(k, n), dtype=np.int8)
        s = (1.0 / np.sqrt(k) / 4 * (0.5 + rng.random((k // block, n)))).astype(np.float32)
        winit = int4_tensor("w", w)
        dq = helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=0, block_size=block)
        opset, irv = 21, 10
    g = helper.make_graph([dq, helper.make_node("MatMul", ["x", "wf"], ["y"])], name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
                          [winit, numpy_helper.from_array(s, "s")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=irv,
                              producer_name="qdqc-gen_wonly_mlp")
    if bits == 8:  # onnx 1.12's checker knows neither INT4 nor opset 21
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    os.makedirs(os.path.join(out, name), exist_ok=True)
    np.save(os.path.join(out, name, "input.npy"),
            np.random.default_rng(7).standard_normal((m, k)).astype(np.float32))


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, m, d, layers in MLPS:
        build(name, m, d, layers, sys.argv[1])
    for name, m, k, n, bits, block in LINEARS:
        build_linear(name, m, k, n, bits, block, sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
