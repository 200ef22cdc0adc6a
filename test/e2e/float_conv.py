#!/usr/bin/python3
"""float_conv.py QDQC [--out DIR] [--peer-python PY] [--isa ISA|all ...]: f32 Conv graphs end to end
(lower/float_conv.c on the f32 GEMM and the depthwise vector kernels; docs/numerics.md "Float
convolution").

Models (one f32 Conv with constant f32 weights, a float graph kept float): a 3x3 pads-1 conv with
a bias, deep reductions (K >= 8 channels per group: pixels as GEMM rows) as a 3x3, a grouped 3x3
and a 1x1, a 1x1 (the input read directly) at batch 2, depthwise 3x3 stride 1 and 2 (the second
with a channel multiplier of 2 and no bias), depthwise stride 3 (lanes loaded one by one), a
3-channel stride-2 first conv, a grouped conv with dilation, a 1-D conv, auto_pad SAME_UPPER, a
5x5 dilated conv with asymmetric pads, a 3-D conv (the scalar loop of float_linear.c), and
ConvTranspose: stride 2 with output_padding, a deep one, grouped with dilation, 1x1 at batch 2,
1-D and 3-D. For each and each ISA path given (default: the host's best; all: every x86 path the
host runs): `qdqc run --engine=jit --threads 2` equals `--engine=ref` bit for bit; ONNX Runtime (--opt disabled, one thread) is compared and its
distance reported as max ulps and max relative error (relative to the output's largest
magnitude), checked against the bound of two f32 sums of K products: every element within
(2K + 4) 2^-24 sum |x w| + 2^-23 |b| of ORT. Prints one line per check and "N checks, M
failed"; exit 1 on any failure (a missing ONNX Runtime skips the ORT checks, saying so)."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "peer"))
import peerenv  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("qdqc")
ap.add_argument("--out", default=None)
ap.add_argument("--peer-python", default=None)
ap.add_argument("--isa", action="append", default=[])
A = ap.parse_args()
if "all" in A.isa:  # every x86 kernel path the host can run
    flags = open("/proc/cpuinfo").read().split("\nflags", 1)[-1].split("\n", 1)[0].split()
    A.isa = ["generic"] + [i for i, f in (("avx2", "avx2"), ("avxvnni", "avx_vnni"),
                                          ("avx512vnni", "avx512_vnni")) if f in flags]
OUT = A.out or tempfile.mkdtemp()
os.makedirs(OUT, exist_ok=True)
R = np.random.default_rng(11)
checks = fails = 0
try:
    PEER = A.peer_python or peerenv.python()
except Exception:  # noqa: BLE001
    PEER = None
if PEER and subprocess.run([PEER, "-c", "import onnxruntime"], capture_output=True).returncode:
    PEER = None
if not PEER:
    print("SKIP ORT: no ONNX Runtime in the peer environment")


def check(ok, what):
    global checks, fails
    checks += 1
    fails += not ok
    print("%s %s" % ("PASS" if ok else "FAIL", what))


def conv64(x, w, strides, pads, dil, group):
    """float64 convolution, NCHW / OIHW, any number of spatial dims, explicit pads"""
    ns = x.ndim - 2
    m = w.shape[0]
    ks = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[ns + i]) for i in range(ns)])
    osz = [(x.shape[2 + i] + pads[i] + pads[ns + i] - dil[i] * (ks[i] - 1) - 1) // strides[i] + 1
           for i in range(ns)]
    cg, mg = x.shape[1] // group, m // group
    y = np.zeros([x.shape[0], m] + osz)
    for kidx in np.ndindex(*ks):
        sl = tuple(slice(kidx[i] * dil[i], kidx[i] * dil[i] + strides[i] * (osz[i] - 1) + 1, strides[i])
                   for i in range(ns))
        for g in range(group):
            xs = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            ws = w[(slice(g * mg, (g + 1) * mg), slice(None)) + kidx]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", xs, ws)
    return y


def convt64(x, w, strides, pads, dil, group, opad):
    """float64 ConvTranspose, NCHW / [C, M/group, k...], explicit pads and output_padding"""
    ns = x.ndim - 2
    ks, mg, cg = w.shape[2:], w.shape[1], x.shape[1] // group
    full = [(x.shape[2 + i] - 1) * strides[i] + (ks[i] - 1) * dil[i] + 1 + opad[i] for i in range(ns)]
    y = np.zeros([x.shape[0], mg * group] + full)
    for kidx in np.ndindex(*ks):
        sl = tuple(slice(kidx[i] * dil[i], kidx[i] * dil[i] + strides[i] * (x.shape[2 + i] - 1) + 1, strides[i])
                   for i in range(ns))
        for g in range(group):
            ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kidx]  # cg, mg
            y[(slice(None), slice(g * mg, (g + 1) * mg)) + sl] += np.einsum("nc...,cm->nm...", x[:, g * cg:(g + 1) * cg], ws)
    return y[(slice(None), slice(None)) + tuple(slice(pads[i], full[i] - pads[ns + i]) for i in range(ns))]


def run(path, eng, x, d, isa):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x)
    cmd = [A.qdqc, "run", path, "--engine=" + eng, "--threads", "2", "--input",
           "x=" + os.path.join(d, "x.npy"), "--output-dir", d]
    if isa and eng == "jit":
        cmd += ["--isa=" + isa]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(r.stderr.strip())
        return None
    return np.load(os.path.join(d, "y.npy"))


def ulps(a, b):
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return int(np.max(np.abs(ia - ib))) if ia.size else 0


def case(name, x, w, bias=None, strides=None, pads=None, dil=None, group=1, auto_pad=None, opad=None):
    ns = x.ndim - 2
    strides, dil = strides or [1] * ns, dil or [1] * ns
    attrs = dict(strides=strides, dilations=dil, group=group)
    op = "Conv" if opad is None else "ConvTranspose"
    if opad is not None and any(opad):
        attrs["output_padding"] = opad
    if auto_pad:
        attrs["auto_pad"] = auto_pad
        # SAME_UPPER: total = (out - 1) * s + (k - 1) * d + 1 - in, the extra one at the end
        pads = [0] * (2 * ns)
        for i in range(ns):
            o = -(-x.shape[2 + i] // strides[i])
            tot = max((o - 1) * strides[i] + (w.shape[2 + i] - 1) * dil[i] + 1 - x.shape[2 + i], 0)
            pads[i], pads[ns + i] = tot // 2, tot - tot // 2
    else:
        pads = pads or [0] * (2 * ns)
        attrs["pads"] = pads
    inits = [nh.from_array(w, "w")]
    cin = ["x", "w"]
    b64 = np.zeros(w.shape[0] if opad is None else w.shape[1] * group)
    if bias is not None:
        inits.append(nh.from_array(bias, "b"))
        cin.append("b")
        b64 = bias.astype(np.float64)
    bshape = [1, -1] + [1] * ns
    if opad is None:
        ref = conv64(x.astype(np.float64), w.astype(np.float64), strides, pads, dil, group) + b64.reshape(bshape)
        terms = conv64(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), strides, pads, dil, group)
        k = int(np.prod(w.shape[1:]))
    else:
        ref = convt64(x.astype(np.float64), w.astype(np.float64), strides, pads, dil, group, opad) + b64.reshape(bshape)
        terms = convt64(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), strides, pads, dil, group, opad)
        k = int(np.prod(w.shape[2:])) * (x.shape[1] // group)
    g = h.make_graph([h.make_node(op, cin, ["y"], **attrs)], name,
                     [h.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
                     [h.make_tensor_value_info("y", TP.FLOAT, list(ref.shape))], inits)
    path = os.path.join(OUT, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7), path)
    yr = run(path, "ref", x, os.path.join(OUT, name + ".ref"), None)
    for isa in A.isa or [None]:
        yj = run(path, "jit", x, os.path.join(OUT, name + ".jit"), isa)
        tag = "%s%s" % (name, "" if isa is None else " [" + isa + "]")
        check(yj is not None and yr is not None and yj.tobytes() == yr.tobytes(),
              "%s: jit == ref bit for bit" % tag)
    if yr is None or not PEER:
        return
    d = os.path.join(OUT, name + ".ort")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x)
    r = subprocess.run([PEER, peerenv.ORT_RUN, path, "--input", "x=" + os.path.join(d, "x.npy"),
                        "--output-dir", d, "--opt", "disabled", "--threads", "1"], capture_output=True, text=True)
    if r.returncode:
        check(False, "%s: ORT runs: %s" % (name, r.stderr.strip()))
        return
    yo = np.load(os.path.join(d, "y.npy"))
    diff = np.abs(yr.astype(np.float64) - yo.astype(np.float64))
    bound = (2 * k + 4) * 2.0 ** -24 * terms.reshape(diff.shape) + 2.0 ** -23 * np.abs(b64).reshape(bshape)
    rel = float(diff.max() / max(np.abs(ref).max(), 1e-30))
    check(bool(np.all(diff <= bound)), "%s: ORT max %d ulps, max rel err %.2e, within the bound"
          % (name, ulps(yr, yo), rel))


def xs(*shape):
    return R.standard_normal(shape).astype(np.float32)


case("conv3x3", xs(1, 16, 14, 14), xs(24, 16, 3, 3), bias=xs(24), pads=[1, 1, 1, 1])
case("conv3x3_deep", xs(1, 32, 9, 9), xs(16, 32, 3, 3), bias=xs(16), pads=[1, 1, 1, 1])
case("grouped_deep", xs(1, 32, 8, 8), xs(8, 16, 3, 3), bias=xs(8), pads=[1, 1, 1, 1], group=2)
case("conv1x1_deep", xs(1, 64, 5, 6), xs(8, 64, 1, 1))
case("conv1x1_b2", xs(2, 24, 7, 9), xs(40, 24, 1, 1), bias=xs(40))
case("dw3x3", xs(1, 12, 10, 21), xs(12, 1, 3, 3), bias=xs(12), pads=[1, 1, 1, 1], group=12)
case("dw3x3_s2_mult2", xs(1, 8, 15, 15), xs(16, 1, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1], group=8)
case("dw3x3_s3", xs(1, 4, 13, 40), xs(4, 1, 3, 3), bias=xs(4), strides=[3, 3], pads=[1, 1, 1, 1], group=4)
case("first_s2", xs(1, 3, 33, 31), xs(8, 3, 7, 7), bias=xs(8), strides=[2, 2], pads=[3, 3, 3, 3])
case("grouped_dil", xs(1, 6, 11, 9), xs(8, 3, 3, 3), bias=xs(8), pads=[2, 1, 2, 1], dil=[2, 1], group=2)
case("conv1d", xs(1, 5, 33), xs(7, 5, 4), strides=[2], pads=[1, 2])
case("same_upper", xs(1, 4, 9, 10), xs(6, 4, 3, 3), bias=xs(6), strides=[2, 2], auto_pad="SAME_UPPER")
case("k5_dil2", xs(1, 3, 9, 12), xs(5, 3, 5, 5), pads=[0, 3, 4, 1], dil=[2, 2])
case("conv3d", xs(1, 2, 4, 5, 6), xs(3, 2, 3, 3, 3), bias=xs(3), pads=[1] * 6)
case("convt_s2", xs(1, 8, 7, 9), xs(8, 6, 3, 3), bias=xs(6), strides=[2, 2], pads=[1, 1, 1, 1], opad=[1, 1])
case("convt_deep", xs(1, 32, 5, 6), xs(32, 4, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1], opad=[0, 0])
case("convt_grp_dil", xs(1, 6, 6, 5), xs(6, 2, 3, 2), bias=xs(4), strides=[1, 3], pads=[0, 2, 1, 0], dil=[2, 1],
     group=2, opad=[0, 1])
case("convt_1x1", xs(2, 12, 5, 7), xs(12, 10, 1, 1), bias=xs(10), opad=[0, 0])
case("convt1d", xs(1, 5, 17), xs(5, 3, 5), strides=[3], pads=[2, 1], opad=[2])
case("convt3d", xs(1, 3, 3, 4, 3), xs(3, 2, 2, 3, 2), bias=xs(2), strides=[2, 1, 2], pads=[0, 1, 1, 1, 0, 0],
     opad=[1, 0, 0])
print("%d checks, %d failed" % (checks, fails))
sys.exit(1 if fails else 0)
