#!/usr/bin/python3
"""mk_matmul_nbits.py CASE DIR: a com.microsoft MatMulNBits model (4-bit, ONNX Runtime's layout)
as DIR/m.onnx, a seeded input DIR/x.npy and numpy's result DIR/y.npy (f64 sums of the
dequantized weights, rounded to f32 once).
Cases: zp (positive scales, packed zero points, bias), sym (ONNX Runtime's symmetric quantizer:
some scales negative, no zero points: the default 8), partial (K = 40, block 16: the last block
is partial), qdq (not MatMulNBits: an opset-21 block-wise int4 DequantizeLinear with some
negative scales -> MatMul, the same quantizer's QDQ format). Run with /usr/bin/python3 (onnx + numpy)."""
import os
import sys

import numpy as np
from onnx import TensorProto as TP, helper as h, numpy_helper as nh, save


def build_qdq(d):
    """opset 21: DequantizeLinear(int4 [K, N], scales [K / 32, N], some negative, no zero point,
    axis 0, block_size 32) -> MatMul: ONNX Runtime's 4-bit quantizer in QDQ format"""
    rng = np.random.default_rng(4)
    K, N, bs = 64, 8, 32
    q = rng.integers(-8, 8, (K, N)).astype(np.int8)
    s = rng.uniform(0.01, 0.1, (K // bs, N)).astype(np.float32)
    s[0, ::2] = -s[0, ::2]
    w = q.astype(np.float64) * np.repeat(s, bs, axis=0).astype(np.float64)
    wt = TP()  # INT4 (22), packed two per byte, low nibble first (python3-onnx may predate INT4)
    wt.name, wt.data_type = "w", 22
    wt.dims.extend([K, N])
    u = (q.ravel() & 15).astype(np.uint8)
    wt.raw_data = (u[0::2] | (u[1::2] << 4)).astype(np.uint8).tobytes()
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wd"], "dq", axis=0, block_size=bs),
             h.make_node("MatMul", ["x", "wd"], ["y"], "mm")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, K])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [2, N])],
                     initializer=[wt, nh.from_array(s, "s")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    m.ir_version = 10
    x = rng.uniform(-1, 1, (2, K)).astype(np.float32)
    os.makedirs(d, exist_ok=True)
    save(m, os.path.join(d, "m.onnx"))
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), (x.astype(np.float64) @ w).astype(np.float32))


def build(case, d):
    if case == "qdq":
        return build_qdq(d)
    rng = np.random.default_rng(3)
    K, N, bs = (40, 8, 16) if case == "partial" else (64, 8, 32)
    nb = (K + bs - 1) // bs
    q = rng.integers(0, 16, (N, nb * bs)).astype(np.uint8)
    q[:, K:] = 0
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(N, nb, bs // 2)
    s = rng.uniform(0.01, 0.1, (N, nb)).astype(np.float32)
    if case == "sym":
        s[:, 0] = -s[:, 0]
    z = np.full((N, nb), 8, np.int64)
    inits = [nh.from_array(packed, "B"), nh.from_array(s.ravel(), "scales")]
    ins = ["x", "B", "scales"]
    if case == "zp":
        z = rng.integers(0, 16, (N, nb))
        zr = (nb + 1) // 2
        zz = np.zeros((N, zr * 2), np.uint8)
        zz[:, :nb] = z
        inits.append(nh.from_array((zz[:, 0::2] | (zz[:, 1::2] << 4)).astype(np.uint8).ravel(), "zp"))
        inits.append(nh.from_array(rng.uniform(-1, 1, N).astype(np.float32), "bias"))
        ins += ["zp", "", "bias"]
    w = np.zeros((N, K))
    for n in range(N):
        for k in range(K):
            w[n, k] = (float(q[n, k]) - z[n, k // bs]) * float(s[n, k // bs])
    x = rng.uniform(-1, 1, (2, K)).astype(np.float32)
    y = x.astype(np.float64) @ w.T
    if case == "zp":
        y = y + nh.to_array(inits[-1]).astype(np.float64)
    node = h.make_node("MatMulNBits", ins, ["y"], "mm", domain="com.microsoft", K=K, N=N, bits=4,
                       block_size=bs, accuracy_level=0)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, K])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [2, N])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    os.makedirs(d, exist_ok=True)
    save(m, os.path.join(d, "m.onnx"))
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y.astype(np.float32))


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
