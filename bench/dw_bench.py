#!/usr/bin/python3
"""dw_bench.py QDQC [--iters N] [--repeat R] [--isa ISA] [--peak GMAC] [--only TEXT] [--out DIR]
[--markdown]: the depthwise convolutions of the edge CNN families and their small-channel first
convolutions, GOPS per node.

Depthwise shapes (channel multiplier 1) are those MobileNetV2, MobileNetV3 large and small,
EfficientNet-B0, MnasNet, ConvNeXt-T and the dilated DeepLabV3 backbones use at 224x224. Each runs
in two forms, both one graph of text IR (test/e2e/gen_dw.py's generator): `nchw`, the depthwise
conv alone (NCHW in and out: the NCHW kernel, the form of squeeze-excitation blocks whose pool
and channel scale keep the result NCHW), and `nhwc`, 1x1 -> depthwise -> 1x1 (the depthwise
between NHWC values: the NHWC kernel). First convolutions (3 input channels, 224x224 u8/i8 input,
NCHW as the graph input is) run alone (`nchw`: NCHW result) and followed by a 1x1 conv (`nhwc`:
NHWC result, as before a depthwise).

Time: `qdqc bench MODEL --profile --json --threads 1 --iters N` (each node's minimum over N runs
after 3 warm-ups: on a shared machine the minimum of a short step is its undisturbed time, the
CPU time of one run of it), best of R invocations. GOPS = 2 x MACs / that time; the share is of
--peak (GMAC/s: bench/peak/run.sh --peak12, the vpdpbusd zmm peak, for the first convs; the
depthwise kernels multiply int16 pairs, vpdpwssd, whose peak --peak12w measures). Prints one line
per shape, or with --markdown a table for docs/performance.md."""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))
import gen_dw  # noqa: E402

# name, channels, H (= W), kernel, stride, dilation, activation type
DW = [
    ("mnv2 32x112 3x3 s1", 32, 112, 3, 1, 1, "u8"),
    ("mnv2 96x112 3x3 s2", 96, 112, 3, 2, 1, "u8"),
    ("mnv2 144x56 3x3 s1", 144, 56, 3, 1, 1, "u8"),
    ("mnv2 144x56 3x3 s2", 144, 56, 3, 2, 1, "u8"),
    ("mnv2 192x28 3x3 s1", 192, 28, 3, 1, 1, "u8"),
    ("mnv2 192x28 3x3 s2", 192, 28, 3, 2, 1, "u8"),
    ("mnv2 384x14 3x3 s1", 384, 14, 3, 1, 1, "u8"),
    ("mnv2 576x14 3x3 s1", 576, 14, 3, 1, 1, "u8"),
    ("mnv2 576x14 3x3 s2", 576, 14, 3, 2, 1, "u8"),
    ("mnv2 960x7 3x3 s1", 960, 7, 3, 1, 1, "u8"),
    ("mnv3l 16x112 3x3 s1", 16, 112, 3, 1, 1, "u8"),
    ("mnv3l 64x112 3x3 s2", 64, 112, 3, 2, 1, "u8"),
    ("mnv3l 72x56 3x3 s1", 72, 56, 3, 1, 1, "u8"),
    ("mnv3l 72x56 5x5 s2", 72, 56, 5, 2, 1, "u8"),
    ("mnv3l 120x28 5x5 s1", 120, 28, 5, 1, 1, "u8"),
    ("mnv3l 240x28 3x3 s2", 240, 28, 3, 2, 1, "u8"),
    ("mnv3l 200x14 3x3 s1", 200, 14, 3, 1, 1, "u8"),
    ("mnv3l 184x14 3x3 s1", 184, 14, 3, 1, 1, "u8"),
    ("mnv3l 480x14 3x3 s1", 480, 14, 3, 1, 1, "u8"),
    ("mnv3l 672x14 3x3 s1", 672, 14, 3, 1, 1, "u8"),
    ("mnv3l 672x14 5x5 s2", 672, 14, 5, 2, 1, "u8"),
    ("mnv3l 960x7 5x5 s1", 960, 7, 5, 1, 1, "u8"),
    ("mnv3s 16x112 3x3 s2", 16, 112, 3, 2, 1, "i8"),
    ("mnv3s 72x56 3x3 s2", 72, 56, 3, 2, 1, "i8"),
    ("mnv3s 88x28 3x3 s1", 88, 28, 3, 1, 1, "i8"),
    ("mnv3s 96x28 5x5 s2", 96, 28, 5, 2, 1, "i8"),
    ("mnv3s 240x14 5x5 s1", 240, 14, 5, 1, 1, "i8"),
    ("mnv3s 120x14 5x5 s1", 120, 14, 5, 1, 1, "i8"),
    ("mnv3s 144x14 5x5 s1", 144, 14, 5, 1, 1, "i8"),
    ("mnv3s 288x14 5x5 s2", 288, 14, 5, 2, 1, "i8"),
    ("mnv3s 576x7 5x5 s1", 576, 7, 5, 1, 1, "i8"),
    ("effb0 144x56 5x5 s2", 144, 56, 5, 2, 1, "u8"),
    ("effb0 240x28 5x5 s1", 240, 28, 5, 1, 1, "u8"),
    ("effb0 480x14 5x5 s1", 480, 14, 5, 1, 1, "u8"),
    ("effb0 672x14 5x5 s1", 672, 14, 5, 1, 1, "u8"),
    ("effb0 1152x7 5x5 s1", 1152, 7, 5, 1, 1, "u8"),
    ("effb0 1152x7 3x3 s1", 1152, 7, 3, 1, 1, "u8"),
    ("mnas 48x112 3x3 s2", 48, 112, 3, 2, 1, "u8"),
    ("mnas 240x28 5x5 s2", 240, 28, 5, 2, 1, "u8"),
    ("mnas 576x14 5x5 s2", 576, 14, 5, 2, 1, "u8"),
    ("cnxt 96x56 7x7", 96, 56, 7, 1, 1, "i8"),
    ("cnxt 192x28 7x7", 192, 28, 7, 1, 1, "i8"),
    ("cnxt 384x14 7x7", 384, 14, 7, 1, 1, "i8"),
    ("cnxt 768x7 7x7", 768, 7, 7, 1, 1, "i8"),
    ("deeplab 576x28 3x3 d2", 576, 28, 3, 1, 2, "u8"),
    ("deeplab 960x14 3x3 d2", 960, 14, 3, 1, 2, "u8"),
    ("deeplab 960x14 5x5 d2", 960, 14, 5, 1, 2, "u8"),
]

# name, output channels, kernel, stride, pad, activation type (input 1x3x224x224)
FIRST = [
    ("mnv3 first 3->16 3x3 s2", 16, 3, 2, 1, "u8"),
    ("mnv3 first 3->16 3x3 s2 i8", 16, 3, 2, 1, "i8"),
    ("mnv2/effb0 first 3->32 3x3 s2", 32, 3, 2, 1, "u8"),
    ("cnxt stem 3->96 4x4 s4", 96, 4, 4, 0, "u8"),
    ("3->32 4x4 s2", 32, 4, 2, 1, "u8"),
]


def graph(name, lines, inp, out, yty):
    return "graph @%s(%s) -> %s {\n%s\n  return %s\n}\n" % (name, inp, yty, "\n".join(lines), out)


def dw_graph(shape, nhwc):
    """(text, MACs of the depthwise node, its name)"""
    name, c, hw, k, s, dil, t = shape
    R = random.Random(name + str(nhwc))
    cin = 24 if nhwc else c
    xshape = (1, cin, hw, hw)
    inp = "%%x: %s" % gen_dw.ty(t, xshape, 0.05, 128 if t == "u8" else -3)
    lines, x = [], "%x"
    if nhwc:
        l, xshape, _ = gen_dw.conv(R, "e", x, xshape, t, c, 1)
        lines += l
        x = "%e"
    l, yshape, yty = gen_dw.conv(R, "d", x, xshape, t, c, k, stride=s, dil=dil, group=c, clamp=None)
    lines += l
    out = "%d"
    if nhwc:
        l, _, yty = gen_dw.conv(R, "p", "%d", yshape, t, 24, 1)
        lines += l
        out = "%p"
    macs = c * yshape[2] * yshape[3] * k * k
    return graph("dw", lines, inp, out, yty), macs, "%d"


def first_graph(shape, nhwc):
    name, m, k, s, pad, t = shape
    R = random.Random(name + str(nhwc))
    xshape = (1, 3, 224, 224)
    inp = "%%x: %s" % gen_dw.ty(t, xshape, 0.02, 128 if t == "u8" else -3)
    lines, yshape, yty = gen_dw.conv(R, "f", "%x", xshape, t, m, k, stride=s, pad=pad,
                                     clamp=(0, 255) if t == "u8" else None)
    out = "%f"
    if nhwc:
        l, _, yty = gen_dw.conv(R, "p", "%f", yshape, t, 24, 1)
        lines += l
        out = "%p"
    macs = m * yshape[2] * yshape[3] * 3 * k * k
    return graph("first", lines, inp, out, yty), macs, "%f"


def node_ms(qdqc, path, node, iters, isa):
    cmd = [qdqc, "bench", path, "--profile", "--json", "--threads", "1", "--iters", str(iters)]
    if isa:
        cmd.append("--isa=" + isa)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    for n in json.loads(r.stdout)["nodes"]:
        if n["name"] == node:
            return n["ms"]
    raise SystemExit("%s: no node %s" % (path, node))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qdqc")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--isa", default=None)
    ap.add_argument("--peak", type=float, default=None, help="GMAC/s of the share column")
    ap.add_argument("--only", default=None, help="shapes whose name contains this text")
    ap.add_argument("--forms", default="nchw,nhwc")
    ap.add_argument("--out", default=None)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="dw_bench")
    os.makedirs(out, exist_ok=True)
    forms = a.forms.split(",")
    rows = [(s, dw_graph) for s in DW] + [(s, first_graph) for s in FIRST]
    if a.markdown:
        print("| shape | MMAC | " + " | ".join("%s ms | %s GOPS" % (f, f) for f in forms) +
              (" | share of %.0f GMAC/s |" % a.peak if a.peak else " |"))
        print("|---|---|" + "---|---|" * len(forms) + ("---|" if a.peak else ""))
    for shape, gen in rows:
        if a.only and a.only not in shape[0]:
            continue
        cells, best_gops = [], 0.0
        for f in forms:
            text, macs, node = gen(shape, f == "nhwc")
            path = os.path.join(out, "%s_%s.qir" % (shape[0].replace(" ", "_").replace("/", "_")
                                                    .replace(">", ""), f))
            with open(path, "w") as fh:
                fh.write(text)
            ms = min(node_ms(a.qdqc, path, node, a.iters, a.isa) for _ in range(a.repeat))
            gops = 2.0 * macs / (ms * 1e-3) / 1e9
            best_gops = max(best_gops, gops)
            cells.append((ms, gops))
        share = ("%.0f%%" % (100 * best_gops / 2 / a.peak)) if a.peak else ""
        if a.markdown:
            print("| %s | %.2f | %s |%s" % (shape[0], macs / 1e6,
                                            " | ".join("%.4f | %.1f" % c for c in cells),
                                            " %s |" % share if a.peak else ""))
        else:
            print("%-32s %7.2f MMAC  %s  %s" % (shape[0], macs / 1e6, "  ".join(
                "%s %.4f ms %6.1f GOPS" % (f, ms, g) for f, (ms, g) in zip(forms, cells)), share),
                flush=True)


if __name__ == "__main__":
    main()
