#!/usr/bin/python3
"""wonly_block.py QDQC [--out DIR]: weight-only models end to end, through the
ONNX importer and the default pipeline.

Models (float activations, int8/uint8 or int4/uint4 constant weights behind DequantizeLinear):
  - matmul_col_i8: per-column i8 weights (axis 1), batch of rows x [2, 3, 40];
  - gemm_transb_u8: Gemm transB=1, alpha 0.5, beta 2 with a bias row C, per-row u8 weights
    with zero points (axis 0 of W [N, K] = one per output column);
  - matmul_block_i8: DequantizeLinear-21 block_size 16 along K (K = 40: a last block of 8),
    i8 with zero points per block;
  - gemm_block_u8: Gemm transB=1 with u8 weights in blocks of 8 along K (axis 1 of W [N, K]);
  - matmul_block_along_n: blocks along N (not K): left to dq-const-fold (f32 constant);
  - matmul_block_i4, gemm_transb_u4, matmul_col_i4_batch: INT4/UINT4 weights (opset 21, packed
    two per byte, odd element counts) blocked along K, per row of a transB Gemm, per column.
For each: `qdqc MODEL --verify-each --emit=ir` shows a wmatmul (or, for the last, none);
`qdqc run --engine=jit` equals `--engine=ref` bit for bit; both are within the documented bound
(docs/numerics.md: (K + G + 1) 2^-24 sum |x w s| + bias) of a float64 numpy evaluation of the
ONNX graph. A blocked DequantizeLinear of a graph input (not a constant) runs as a blocked
dequantize, equal to numpy bit for bit on both engines. Prints one line per check and "N checks, M failed"; exit 1 on any failure."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

QDQC = sys.argv[1]
OUT = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else tempfile.mkdtemp()
R = np.random.default_rng(5)
checks = fails = 0


def check(ok, what):
    global checks, fails
    checks += 1
    fails += not ok
    print("%s %s" % ("PASS" if ok else "FAIL", what))


def dq_ref(w, s, z, axis, bs):
    w = w.astype(np.float64)
    z = np.zeros(s.shape) if z is None else z.astype(np.float64)
    if bs:
        s = np.repeat(s, bs, axis=axis)[:w.shape[0]] if axis == 0 else np.repeat(s, bs, axis=1)[:, :w.shape[1]]
        z = np.repeat(z, bs, axis=axis)[:w.shape[0]] if axis == 0 else np.repeat(z, bs, axis=1)[:, :w.shape[1]]
        return (w - z) * s.astype(np.float64)
    shape = [1, 1]
    shape[axis] = -1
    return (w - z.reshape(shape)) * s.astype(np.float64).reshape(shape)


UINT4, INT4 = 21, 22  # onnx 1.12 has no names for them: written as numbers


def init(arr, name, bits):
    """An initializer; 4-bit values (held one per numpy byte) packed two per byte, low nibble
    first, as ONNX stores INT4/UINT4."""
    if bits == 8:
        return nh.from_array(arr, name)
    flat = (arr.reshape(-1).astype(np.int16) & 15).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = TP()
    t.name = name
    t.data_type = INT4 if arr.dtype == np.int8 else UINT4
    t.dims.extend(arr.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return t


def model(name, x, w, s, z, axis, bs, gemm=None, opset=13, bits=8):
    inits = [init(w, "w", bits), nh.from_array(s, "s")]
    ins = ["w", "s"]
    if z is not None:
        inits.append(init(z, "z", bits))
        ins.append("z")
    attrs = dict(axis=axis)
    if bs:
        attrs["block_size"] = bs
    nodes = [h.make_node("DequantizeLinear", ins, ["wf"], **attrs)]
    wf = dq_ref(w, s, z, axis, bs)
    if gemm:
        alpha, beta, c = gemm
        inits.append(nh.from_array(c, "c"))
        nodes.append(h.make_node("Gemm", ["x", "wf", "c"], ["y"], transB=1, alpha=alpha, beta=beta))
        ref = alpha * (x.astype(np.float64) @ wf.T) + beta * c.astype(np.float64)
        bound_terms = np.abs(alpha) * (np.abs(x.astype(np.float64)) @ np.abs(wf.T)) + np.abs(beta * c)
        k = w.shape[1]
    else:
        nodes.append(h.make_node("MatMul", ["x", "wf"], ["y"]))
        ref = x.astype(np.float64) @ wf
        bound_terms = np.abs(x.astype(np.float64)) @ np.abs(wf)
        k = w.shape[0]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
                     [h.make_tensor_value_info("y", TP.FLOAT, list(ref.shape))], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=7 if opset < 21 else 10)
    path = os.path.join(OUT, name + ".onnx")
    onnx.save(m, path)
    ng = -(-k // bs) if bs else 1
    bound = (k + ng + 2) * 2.0 ** -24 * bound_terms.max() * 1.01
    return path, ref, bound


def run(path, x, engine):
    d = os.path.join(OUT, os.path.basename(path) + "." + engine)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x)
    r = subprocess.run([QDQC, "run", path, "--engine=" + engine, "--input", "x=" + os.path.join(d, "x.npy"),
                        "--output-dir", d], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr
    return np.load(os.path.join(d, "y.npy")), ""


def case(name, x, w, s, z, axis, bs, gemm=None, want_wmatmul=True, bits=8):
    path, ref, bound = model(name, x, w, s, z, axis, bs, gemm, 21 if bs or bits == 4 else 13, bits)
    r = subprocess.run([QDQC, path, "--verify-each", "--emit=ir"], capture_output=True, text=True)
    has = "= wmatmul" in r.stdout
    blk = ("block_size=%d" % bs) in r.stdout
    check(r.returncode == 0 and has == want_wmatmul and (not want_wmatmul or not bs or blk),
          "%s: compiles, %s%s" % (name, "wmatmul" if want_wmatmul else "no wmatmul",
                                  " with block_size=%d" % bs if want_wmatmul and bs else ""))
    yj, ej = run(path, x, "jit")
    yr, er = run(path, x, "ref")
    check(yj is not None and yr is not None and yj.tobytes() == yr.tobytes(),
          "%s: jit == ref bit for bit %s" % (name, (ej + er).strip()))
    if yj is not None:
        err = float(np.max(np.abs(yj.astype(np.float64) - ref)))
        check(err <= bound, "%s: |jit - numpy| %.3g <= bound %.3g" % (name, err, bound))


def wq(shape, dt):
    lo, hi, t = {"i8": (-128, 128, np.int8), "u8": (0, 256, np.uint8),
                 "i4": (-8, 8, np.int8), "u4": (0, 16, np.uint8)}[dt]
    return R.integers(lo, hi, size=shape).astype(t)


def sc(shape):
    return (0.002 + 0.02 * R.random(shape)).astype(np.float32)


x3 = R.standard_normal((2, 3, 40)).astype(np.float32)
x2 = R.standard_normal((3, 40)).astype(np.float32)
case("matmul_col_i8", x3, wq((40, 24), "i8"), sc(24), None, 1, 0)
case("gemm_transb_u8", x2, wq((24, 40), "u8"), sc(24), (128 + R.integers(-9, 9, 24)).astype(np.uint8), 0, 0,
     gemm=(0.5, 2.0, R.standard_normal(24).astype(np.float32)))
case("matmul_block_i8", x2, wq((40, 24), "i8"), sc((3, 24)), R.integers(-5, 5, (3, 24)).astype(np.int8), 0, 16)
case("gemm_block_u8", x2, wq((24, 40), "u8"), sc((24, 5)), (128 + R.integers(-9, 9, (24, 5))).astype(np.uint8), 1, 8,
     gemm=(1.0, 1.0, R.standard_normal(24).astype(np.float32)))
case("matmul_block_along_n", x2, wq((40, 24), "i8"), sc((40, 3)), None, 1, 8, want_wmatmul=False)
# 4-bit weights (INT4 / UINT4, opset 21): packed two per byte in the model, odd element counts
case("matmul_block_i4", x2, wq((40, 23), "i4"), sc((3, 23)), R.integers(-2, 2, (3, 23)).astype(np.int8), 0, 16,
     bits=4)
case("gemm_transb_u4", x2, wq((25, 40), "u4"), sc(25), (8 + R.integers(-3, 3, 25)).astype(np.uint8), 0, 0,
     gemm=(0.5, 2.0, R.standard_normal(25).astype(np.float32)), bits=4)
case("matmul_col_i4_batch", x3, wq((40, 33), "i4"), sc(33), None, 1, 0, bits=4)

# a blocked DequantizeLinear of a run-time value (no weight-only form) is a run-time blocked
# dequantize (ONNX 21 import, docs/onnx.md): both engines equal numpy's (q - 0) * s exactly
sb = sc((2, 4))
g = h.make_graph([h.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=0, block_size=4)], "rt",
                 [h.make_tensor_value_info("x", TP.INT8, [8, 4])], [h.make_tensor_value_info("y", TP.FLOAT, [8, 4])],
                 [nh.from_array(sb, "s")])
rt = os.path.join(OUT, "block_runtime.onnx")
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 21)], ir_version=10), rt)
qx = wq((8, 4), "i8")
want = (qx.astype(np.float32) * np.repeat(sb, 4, axis=0)).astype(np.float32)
yj, ej = run(rt, qx, "jit")
yr, er = run(rt, qx, "ref")
check(yj is not None and yr is not None and yj.tobytes() == yr.tobytes() == want.tobytes(),
      "block_runtime: jit == ref == numpy bit for bit %s" % (ej + er).strip())
print("%d checks, %d failed" % (checks, fails))
sys.exit(1 if fails else 0)
