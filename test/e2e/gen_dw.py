#!/usr/bin/python3
"""gen_dw.py: writes graphs/dw_*.qir, depthwise qconvs (channel multiplier 1) of the shapes the
edge CNN families use: MobileNetV2/V3, EfficientNet, MnasNet (3x3 and 5x5, strides 1 and 2), ConvNeXt
(7x7), a dilated 3x3; and first convolutions (3 input channels, 3x3/4x4/7x7, stride 2:
graphs/first_*.qir). Per-channel weights as ONNX Runtime exports them (symmetric, zp 0; one graph
with weight zero points too), u8 and i8 activations, pads K/2, a ReLU6-like clamp on some.
Two forms per shape: dw_<shape>.qir, the conv alone (NCHW in and out: the NCHW depthwise kernel,
as in squeeze-excitation blocks whose pool and channel scale keep the result NCHW), and
dw_<shape>_pw.qir, 1x1 -> depthwise -> 1x1 (the depthwise between NHWC values: the NHWC kernel).
Deterministic; run_all.py compares each graph jit vs ref on every ISA path; `qdqc bench --profile`
on them gives the depthwise GOPS per shape (docs/performance.md)."""
import os, random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")

# name, channels, H (= W), kernel, stride, dilation, activation type, clamp, weight zero points
# [, result scale of the depthwise conv (default 0.06)]
SHAPES = [
    ("3x3_112x16_s1", 16, 112, 3, 1, 1, "u8", (0, 255), False),
    ("3x3_112x64_s2", 64, 112, 3, 2, 1, "u8", None, False),
    ("3x3_28x64_d2", 64, 28, 3, 1, 2, "i8", None, True),
    ("5x5_56x72_s2", 72, 56, 5, 2, 1, "u8", None, False),
    ("5x5_28x96_s2", 96, 28, 5, 2, 1, "i8", None, False),
    ("5x5_28x120_s1", 120, 28, 5, 1, 1, "u8", (0, 255), False),
    ("5x5_14x240_s1", 240, 14, 5, 1, 1, "u8", None, False),
    ("5x5_14x288_s2", 288, 14, 5, 2, 1, "i8", None, False),
    ("5x5_7x576_s1", 576, 7, 5, 1, 1, "u8", None, False),
    ("5x5_7x576_s2", 576, 7, 5, 2, 1, "i8", (-128, 100), False),
    ("7x7_56x96_s1", 96, 56, 7, 1, 1, "i8", None, False),
    # small maps (flat rows at stride 1) with dilation and weight zero points; an i32 result
    ("3x3_7x40_d2", 40, 7, 3, 1, 2, "u8", None, True),
    ("5x5_9x24_s2_i32", 24, 9, 5, 2, 1, "i8", None, True),
    # 3x3 without weight zero points at strides 1, 2 and dilation 2 (the AArch64 NHWC kernel by
    # kernel columns); the _n16 ones with a 0.4 result scale, so that every result is provably
    # within int16 (its short narrowing), one with a clamp inside the 8-bit range
    ("3x3_28x48_s1_n16", 48, 28, 3, 1, 1, "i8", (-100, 110), False, 0.4),
    ("3x3_28x80_s2_n16", 80, 28, 3, 2, 1, "u8", None, False, 0.4),
    ("3x3_20x32_d2", 32, 20, 3, 1, 2, "u8", None, False),
]


def hexbytes(vals):
    return "0x" + "".join("%02X" % (v & 0xFF) for v in vals)


def i32hex(vals):
    return "0x" + "".join("".join("%02X" % ((v >> (8 * i)) & 0xFF) for i in range(4)) for v in vals)


def ty(t, shape, scale, zp):
    return "%s[%s]{scale=%g, zp=%d}" % (t, ",".join(str(d) for d in shape), scale, zp)


def conv(R, name, x, xshape, t, m, k, stride=1, dil=1, group=1, clamp=None, wzp=False, yt=None,
         pad=None, ys=0.06):
    n, c, h, w = xshape
    pad = dil * (k - 1) // 2 if pad is None else pad
    cg = c // group
    oh = (h + 2 * pad - dil * (k - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dil * (k - 1) - 1) // stride + 1
    wv = [R.randint(-127, 127) for _ in range(m * cg * k * k)]
    sws = ", ".join("%.6g" % ((0.5 + R.random()) / (cg * k * k) ** 0.5) for _ in range(m))
    zps = ", ".join(str(R.randint(-3, 3) if wzp else 0) for _ in range(m))
    bias = [R.randint(-3000, 3000) for _ in range(m)]
    yshape = (n, m, oh, ow)
    yty = ("i32[%s]" % ",".join(str(d) for d in yshape) if yt == "i32"
           else ty(t, yshape, ys, 128 if t == "u8" else -3))
    cl = ", clamp=[%d, %d]" % clamp if clamp else ""
    lines = ["  %%w%s = const dense<i8[%d,%d,%d,%d]{axis=0, scale=[%s], zp=[%s]}, %s>"
             % (name, m, cg, k, k, sws, zps, hexbytes(wv)),
             "  %%b%s = const dense<i32[%d], %s>" % (name, m, i32hex(bias)),
             "  %%%s = qconv %s, %%w%s, %%b%s, strides=[%d, %d], pads=[%d, %d, %d, %d], "
             "dilations=[%d, %d], group=%d%s : %s"
             % (name, x, name, name, stride, stride, pad, pad, pad, pad, dil, dil, group, cl, yty)]
    return lines, yshape, yty


def graph(shape, pw):
    name, c, hw, k, s, dil, t, clamp, wzp = shape[:9]
    ys = shape[9] if len(shape) > 9 else 0.06
    R = random.Random(name + ("pw" if pw else ""))
    gname = "dw_" + name + ("_pw" if pw else "")
    cin = 24 if pw else c
    xshape = (1, cin, hw, hw)
    inp = "%%x: %s" % ty(t, xshape, 0.05, 128 if t == "u8" else -3)
    lines, x = [], "%x"
    if pw:
        l, xshape, _ = conv(R, "e", x, xshape, t, c, 1)
        lines += l
        x = "%e"
    yt = "i32" if name.endswith("_i32") and not pw else None
    l, xshape, yty = conv(R, "d", x, xshape, t, c, k, stride=s, dil=dil, group=c, clamp=clamp, wzp=wzp, yt=yt,
                          ys=ys)
    lines += l
    out = "%d"
    if pw:
        l, xshape, yty = conv(R, "p", "%d", xshape, t, 24, 1)
        lines += l
        out = "%p"
    return gname, "graph @%s(%s) -> %s {\n%s\n  return %s\n}\n" % (
        gname, inp, yty, "\n".join(lines), out)


# first convolutions (lower/qconv_first.c on AVX-512 VBMI): name, batch, input type, H (= W),
# kernel, stride, pad, output channels, weight zero points, clamp, a 1x1 conv after (the first
# conv's result then NHWC)
FIRST = [
    ("3x3_s2_64", 1, "u8", 64, 3, 2, 1, 16, False, None, False),
    ("4x4_s2_50_pw", 1, "i8", 50, 4, 2, 1, 24, False, None, True),
    ("3x3_s2_33_b2", 2, "u8", 33, 3, 2, 0, 32, True, (0, 200), False),
    ("7x7_s2_40", 1, "i8", 40, 7, 2, 3, 8, False, None, False),
    # 16 or 8 channels: blocks of 8 channels x 2 or 3 vectors of 16 columns, then a tail
    ("3x3_s2_112_m16", 1, "u8", 112, 3, 2, 1, 16, False, (10, 200), False),
    ("3x3_s2_76_pw", 1, "i8", 76, 3, 2, 1, 16, False, None, True),
    ("3x3_s2_100_m8", 2, "i8", 100, 3, 2, 1, 8, True, None, False),
]


def first_graph(shape):
    name, n, t, hw, k, s, pad, m, wzp, clamp, pw = shape
    R = random.Random("first" + name)
    gname = "first_" + name
    xshape = (n, 3, hw, hw)
    inp = "%%x: %s" % ty(t, xshape, 0.05, 128 if t == "u8" else -3)
    lines, yshape, yty = conv(R, "c", "%x", xshape, t, m, k, stride=s, clamp=clamp, wzp=wzp, pad=pad)
    out = "%c"
    if pw:
        l, yshape, yty = conv(R, "p", "%c", yshape, t, 16, 1)
        lines += l
        out = "%p"
    return gname, "graph @%s(%s) -> %s {\n%s\n  return %s\n}\n" % (
        gname, inp, yty, "\n".join(lines), out)


def main():
    os.makedirs(OUT, exist_ok=True)
    for shape in SHAPES:
        for pw in (False, True):
            name, text = graph(shape, pw)
            with open(os.path.join(OUT, name + ".qir"), "w") as fh:
                fh.write(text)
    for shape in FIRST:
        name, text = first_graph(shape)
        with open(os.path.join(OUT, name + ".qir"), "w") as fh:
            fh.write("// a first convolution (3 input channels: lower/qconv_first.c on AVX-512 VBMI); "
                     "test/e2e/gen_dw.py\n" + text)


if __name__ == "__main__":
    main()
