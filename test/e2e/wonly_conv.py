#!/usr/bin/python3
"""wonly_conv.py QDQC [--out DIR]: weight-only convolutions end to end,
through the ONNX importer and the default pipeline.

Models (float activations, a Conv whose weight is DequantizeLinear of a constant 8- or 4-bit
tensor, per output channel or per tensor):
  - conv3x3_i8: 3x3, pads 1, i8 per channel, f32 bias;
  - conv_s2_u8_pt: 3x3 stride 2, u8 per tensor with a zero point, no bias;
  - conv1x1_i8: 1x1 (x read directly), batch 2, a bias that is DequantizeLinear(int32);
  - convdw_i8: depthwise 3x3 (group = channels), stride 1, a following Add of a [1, M, 1, 1]
    constant, which becomes the bias;
  - convdw_s2_u8: depthwise stride 2 with per-channel zero points;
  - convgrp_i4, conv1d_u4: INT4 / UINT4 weights (opset 21): group 2 with dilation 2; a 1-D conv;
  - conv_block: a block-wise DequantizeLinear-21 weight: left to dq-const-fold (no wconv);
  - conv3d_i8: 3 spatial dimensions: left to dq-const-fold (no wconv).
For each: `qdqc MODEL --emit=ir` shows a wconv (or none); `qdqc run --engine=jit` equals
`--engine=ref` bit for bit; both are within the documented bound of a float64 numpy
convolution of the dequantized weights (docs/numerics.md: (K + 2) 2^-24 sum |x w s| + 2^-24
|bias|, K the taps per output). Prints one line per check and "N checks, M failed"; exit 1 on
any failure."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

QDQC = sys.argv[1]
OUT = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else tempfile.mkdtemp()
R = np.random.default_rng(9)
checks = fails = 0
UINT4, INT4 = 21, 22


def check(ok, what):
    global checks, fails
    checks += 1
    fails += not ok
    print("%s %s" % ("PASS" if ok else "FAIL", what))


def init(arr, name, bits):
    if bits == 8:
        return nh.from_array(arr, name)
    flat = (arr.reshape(-1).astype(np.int16) & 15).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = TP()
    t.name, t.data_type = name, INT4 if arr.dtype == np.int8 else UINT4
    t.dims.extend(arr.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return t


def conv64(x, w, strides, pads, dil, group):
    """float64 convolution, NCHW / OIHW, any number of spatial dims"""
    ns = x.ndim - 2
    n, c = x.shape[:2]
    m = w.shape[0]
    ks = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[ns + i]) for i in range(ns)])
    osz = [(x.shape[2 + i] + pads[i] + pads[ns + i] - dil[i] * (ks[i] - 1) - 1) // strides[i] + 1 for i in range(ns)]
    cg, mg = c // group, m // group
    y = np.zeros([n, m] + osz)
    for kidx in np.ndindex(*ks):
        sl = tuple(slice(kidx[i] * dil[i], kidx[i] * dil[i] + strides[i] * (osz[i] - 1) + 1, strides[i]) for i in range(ns))
        for g in range(group):
            xs = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]  # n, cg, *osz
            ws = w[(slice(g * mg, (g + 1) * mg), slice(None)) + kidx]  # mg, cg
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", xs, ws)
    return y


def case(name, x, w, s, z, bias=None, strides=None, pads=None, dil=None, group=1, bits=8,
         block=0, bias_dq=None, add_bias=None, want=True):
    ns = x.ndim - 2
    strides, pads, dil = strides or [1] * ns, pads or [0] * (2 * ns), dil or [1] * ns
    opset = 21 if bits == 4 or block else 13
    inits = [init(w, "w", bits), nh.from_array(s, "s")]
    dq_in = ["w", "s"]
    if z is not None:
        inits.append(init(z, "z", bits))
        dq_in.append("z")
    attrs = dict(axis=1, block_size=block) if block else (dict(axis=0) if s.ndim else {})
    nodes = [h.make_node("DequantizeLinear", dq_in, ["wf"], **attrs)]
    zz = np.zeros(s.shape) if z is None else z.astype(np.float64)
    if block:
        wf = (w.astype(np.float64) - np.repeat(zz, block, axis=1)) * np.repeat(s.astype(np.float64), block, axis=1)
    else:
        shp = [-1] + [1] * (w.ndim - 1) if s.ndim else []
        wf = (w.astype(np.float64) - zz.reshape(shp)) * s.astype(np.float64).reshape(shp)
    cin = ["x", "wf"]
    b64 = np.zeros(w.shape[0])
    if bias is not None:
        inits.append(nh.from_array(bias, "b"))
        cin.append("b")
        b64 = bias.astype(np.float64)
    elif bias_dq is not None:
        bq, bs = bias_dq
        inits += [nh.from_array(bq, "bq"), nh.from_array(bs, "bs")]
        nodes.append(h.make_node("DequantizeLinear", ["bq", "bs"], ["b"], axis=0))
        cin.append("b")
        b64 = (bq.astype(np.float32) * bs).astype(np.float64)
    cattrs = dict(strides=strides, pads=pads, dilations=dil, group=group)
    nodes.append(h.make_node("Conv", cin, ["y" if add_bias is None else "c"], **cattrs))
    if add_bias is not None:
        inits.append(nh.from_array(add_bias, "ab"))
        nodes.append(h.make_node("Add", ["c", "ab"], ["y"]))
        b64 = add_bias.reshape(-1).astype(np.float64)
    bshape = [1, -1] + [1] * ns
    ref = conv64(x.astype(np.float64), wf, strides, pads, dil, group) + b64.reshape(bshape)
    terms = conv64(np.abs(x.astype(np.float64)), np.abs(wf), strides, pads, dil, group) + np.abs(b64).reshape(bshape)
    k = int(np.prod(w.shape[1:]))
    bound = (k + 3) * 2.0 ** -24 * terms.max() * 1.01
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
                     [h.make_tensor_value_info("y", TP.FLOAT, list(ref.shape))], inits)
    path = os.path.join(OUT, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=7 if opset < 21 else 10), path)
    r = subprocess.run([QDQC, path, "--verify-each", "--emit=ir"], capture_output=True, text=True)
    has = "= wconv" in r.stdout
    check(r.returncode == 0 and has == want, "%s: compiles, %s%s" % (name, "wconv" if want else "no wconv",
                                                                    "" if r.returncode == 0 else " " + r.stderr.strip()))
    ys = {}
    for eng in ("jit", "ref"):
        d = os.path.join(OUT, name + "." + eng)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "x.npy"), x)
        rr = subprocess.run([QDQC, "run", path, "--engine=" + eng, "--threads", "2", "--input",
                             "x=" + os.path.join(d, "x.npy"), "--output-dir", d], capture_output=True, text=True)
        ys[eng] = np.load(os.path.join(d, "y.npy")) if rr.returncode == 0 else None
        if rr.returncode:
            print(rr.stderr.strip())
    yj, yr = ys["jit"], ys["ref"]
    check(yj is not None and yr is not None and yj.tobytes() == yr.tobytes(), "%s: jit == ref bit for bit" % name)
    if yj is not None:
        err = float(np.max(np.abs(yj.astype(np.float64) - ref)))
        check(err <= bound, "%s: |jit - numpy| %.3g <= bound %.3g" % (name, err, bound))


def wq(shape, dt):
    lo, hi, t = {"i8": (-128, 128, np.int8), "u8": (0, 256, np.uint8),
                 "i4": (-8, 8, np.int8), "u4": (0, 16, np.uint8)}[dt]
    return R.integers(lo, hi, size=shape).astype(t)


def sc(shape):
    return (0.002 + 0.02 * R.random(shape)).astype(np.float32)


def xs(*shape):
    return R.standard_normal(shape).astype(np.float32)


case("conv3x3_i8", xs(1, 8, 12, 13), wq((10, 8, 3, 3), "i8"), sc(10), None, bias=xs(10), pads=[1, 1, 1, 1])
case("conv_s2_u8_pt", xs(1, 3, 17, 15), wq((6, 3, 3, 3), "u8"), sc(()), np.array(131, np.uint8), strides=[2, 2])
case("conv1x1_i8", xs(2, 24, 7, 7), wq((40, 24, 1, 1), "i8"), sc(40), None,
     bias_dq=(R.integers(-5000, 5000, 40).astype(np.int32), np.float32(1e-4)))
case("convdw_i8", xs(1, 12, 10, 10), wq((12, 1, 3, 3), "i8"), sc(12), None, pads=[1, 1, 1, 1], group=12,
     add_bias=xs(1, 12, 1, 1))
case("convdw_s2_u8", xs(1, 8, 15, 15), wq((8, 1, 3, 3), "u8"), sc(8), (128 + R.integers(-9, 9, 8)).astype(np.uint8),
     strides=[2, 2], pads=[1, 1, 1, 1], group=8, bias=xs(8))
case("convgrp_i4", xs(1, 6, 11, 9), wq((8, 3, 3, 3), "i4"), sc(8), None, pads=[2, 1, 2, 1], dil=[2, 1], group=2,
     bits=4, bias=xs(8))
case("conv1d_u4", xs(1, 5, 33), wq((7, 5, 4), "u4"), sc(7), (8 + R.integers(-2, 2, 7)).astype(np.uint8),
     strides=[2], pads=[1, 2], bits=4)
case("conv_block", xs(1, 8, 6, 6), wq((4, 8, 1, 1), "i8"), sc((4, 2, 1, 1)), None, block=4, want=False)
case("conv3d_i8", xs(1, 2, 4, 5, 6), wq((3, 2, 3, 3, 3), "i8"), sc(3), None, pads=[1] * 6, want=False)
print("%d checks, %d failed" % (checks, fails))
sys.exit(1 if fails else 0)
