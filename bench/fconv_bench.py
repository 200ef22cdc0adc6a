#!/usr/bin/python3
"""fconv_bench.py QDQC [--iters N] [--repeat R] [--peak GFLOPS] [--threads T] [--isa ISA] [--out DIR]
[--wonly] [--ort PEER_PYTHON]:
f32 Conv (and one ConvTranspose) shapes on the compiled kernels (lower/float_conv.c), as CPU time.
With --wonly, weight-only convolutions instead (lower/float_wconv.c): f32 activations, the
weight a DequantizeLinear of constant int8 per output channel (what weight-only quantizers
export), on the shapes of WONLY_SHAPES. With --ort, ONNX Runtime `--opt all` on the same model
too (bench/ort_run.py --bench 30 run by PEER_PYTHON, 1 thread: min wall ms of 30 runs).

Each shape is a one-node ONNX model (f32 input, constant f32 weights and bias). For each, `qdqc
bench MODEL --iters 1` and `--iters N+1` (no warm-up) run as child processes and their user +
system time is read from the kernel (wait4): the difference over N is the CPU time per run with
compilation and set-up cancelled out; the best of R repeats is kept (the machine is shared).
GFLOP/s = 2 x MACs / that time; the share is against --peak (the f32 FMA peak that
bench/peak/run_sgemm.sh measures, 275.3 GFLOP/s on zmm on the AMD EPYC VM of docs/performance.md).
Prints one line per shape."""
import argparse
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

SHAPES = [  # name, x [N, C, H, W], w [M, C/group, KH, KW], strides, pads, group
    ("resnet 3x3 64->64 56x56", [1, 64, 56, 56], [64, 64, 3, 3], [1, 1], [1, 1, 1, 1], 1),
    ("1x1 64->256 56x56", [1, 64, 56, 56], [256, 64, 1, 1], [1, 1], [0, 0, 0, 0], 1),
    ("resnet 3x3 256->256 14x14", [1, 256, 14, 14], [256, 256, 3, 3], [1, 1], [1, 1, 1, 1], 1),
    ("depthwise 3x3 128ch 56x56", [1, 128, 56, 56], [128, 1, 3, 3], [1, 1], [1, 1, 1, 1], 128),
    ("first 7x7/2 3->64 224x224", [1, 3, 224, 224], [64, 3, 7, 7], [2, 2], [3, 3, 3, 3], 1),
    ("first 3x3/2 3->32 224x224", [1, 3, 224, 224], [32, 3, 3, 3], [2, 2], [1, 1, 1, 1], 1),
    # ConvTranspose: w [C, M/group, KH, KW]; output (in-1)*s + k - pads
    ("convT 4x4/2 64->32 28->56", [1, 64, 28, 28], [64, 32, 4, 4], [2, 2], [1, 1, 1, 1], -1),
]

WONLY_SHAPES = [
    ("3x3 64->64 56x56 (im2col)", [1, 64, 56, 56], [64, 64, 3, 3], [1, 1], [1, 1, 1, 1], 1),
    ("1x1 128->256 28x28", [1, 128, 28, 28], [256, 128, 1, 1], [1, 1], [0, 0, 0, 0], 1),
    ("depthwise 3x3 128ch 56x56", [1, 128, 56, 56], [128, 1, 3, 3], [1, 1], [1, 1, 1, 1], 128),
    ("depthwise 3x3/2 128ch 56x56", [1, 128, 56, 56], [128, 1, 3, 3], [2, 2], [1, 1, 1, 1], 128),
]


def model(path, xs, ws, strides, pads, group, wonly=False):
    """group -1: a ConvTranspose (group 1); returns the useful multiply-adds (a transposed conv's:
    every input element times its Mg x KH x KW weights, not the zero taps the kernels also run)"""
    r = np.random.default_rng(1)
    tr = group < 0
    if tr:
        m = ws[1]
        oh = (xs[2] - 1) * strides[0] + ws[2] - pads[0] - pads[2]
        ow = (xs[3] - 1) * strides[1] + ws[3] - pads[1] - pads[3]
        macs = xs[0] * xs[1] * xs[2] * xs[3] * ws[1] * ws[2] * ws[3]
    else:
        m = ws[0]
        oh = (xs[2] + pads[0] + pads[2] - ws[2]) // strides[0] + 1
        ow = (xs[3] + pads[1] + pads[3] - ws[3]) // strides[1] + 1
        macs = xs[0] * ws[0] * oh * ow * ws[1] * ws[2] * ws[3]
    b = nh.from_array(r.standard_normal(m).astype(np.float32), "b")
    nodes, inits = [], [b]
    if wonly:  # int8 per output channel, dequantized by the graph
        inits += [nh.from_array(r.integers(-127, 128, ws).astype(np.int8), "wq"),
                  nh.from_array((r.random(ws[0]) * 0.01 + 0.001).astype(np.float32), "ws")]
        nodes.append(h.make_node("DequantizeLinear", ["wq", "ws"], ["w"], axis=0))
    else:
        inits.append(nh.from_array((r.standard_normal(ws) * 0.1).astype(np.float32), "w"))
    nodes.append(h.make_node("ConvTranspose" if tr else "Conv", ["x", "w", "b"], ["y"],
                             strides=strides, pads=pads, group=1 if tr else group))
    g = h.make_graph(nodes, "conv", [h.make_tensor_value_info("x", TP.FLOAT, xs)],
                     [h.make_tensor_value_info("y", TP.FLOAT, [xs[0], m, oh, ow])], inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7), path)
    return macs


def cpu(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        raise SystemExit("failed: " + " ".join(cmd))
    return ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qdqc")
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--peak", type=float, default=275.3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--isa", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--wonly", action="store_true")
    ap.add_argument("--ort", default=None, metavar="PEER_PYTHON")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    for i, (name, xs, ws, st, pd, grp) in enumerate(WONLY_SHAPES if a.wonly else SHAPES):
        path = os.path.join(out, ("wconv%d.onnx" if a.wonly else "fconv%d.onnx") % i)
        macs = model(path, xs, ws, st, pd, grp, a.wonly)
        base = [a.qdqc, "bench", path, "--threads", str(a.threads), "--warmup", "0"]
        if a.isa:
            base += ["--isa=" + a.isa]
        best = None
        for _ in range(a.repeat):
            t = (cpu(base + ["--iters", str(a.iters + 1)]) - cpu(base + ["--iters", "1"])) / a.iters
            best = t if best is None or t < best else best
        gf = 2.0 * macs / best / 1e9
        line = "%-28s %8.3f ms CPU  %6.1f GFLOP/s  %3.0f%% of %.1f" % (name, best * 1e3, gf,
                                                                    100 * gf / a.peak, a.peak)
        if a.ort:
            xf = os.path.join(out, "x%d.npy" % i)
            np.save(xf, np.random.default_rng(2).standard_normal(xs).astype(np.float32))
            here = os.path.dirname(os.path.abspath(__file__))
            r = subprocess.run([a.ort, os.path.join(here, "ort_run.py"), path, "--input",
                                "x=" + xf, "--opt", "all", "--threads", "1", "--bench", "30"],
                               capture_output=True, text=True, check=True)
            line += "  ORT --opt all %s" % r.stdout.split("\n")[1]
        print(line)


main()
