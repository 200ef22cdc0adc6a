#!/usr/bin/python3
"""gen_graphs.py: writes the hand-written integer test graphs (text IR) of the codegen
end-to-end suite into graphs/ (deterministic). Each graph hits kernel edges: channel counts not
multiple of 4/16/64, 1x1 and 7x7 kernels, stride 2, padding, groups/depthwise, batch > 1."""
import os, random, sys

R = random.Random(1234)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")


def hexbytes(vals, signed=True):
    return "0x" + "".join("%02X" % (v & 0xFF) for v in vals)


def i32hex(vals):
    return "0x" + "".join("".join("%02X" % ((v >> (8 * i)) & 0xFF) for i in range(4)) for v in vals)


def qconv(name, n, c, h, w, m, kh, kw, stride, pad, group=1, dil=1, xt="u8", yt="u8",
          perch=True, wzp=False, clamp=None):
    cg = c // group
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    zx = {"u8": 128, "i8": -3, "u16": 30000, "i16": -300}[xt]
    sx = 0.05
    wv = [R.randint(-128, 127) for _ in range(m * cg * kh * kw)]
    if perch:
        sws = ", ".join("%.6g" % (0.01 + 0.003 * R.random()) for _ in range(m))
        zps = ", ".join(str(R.randint(-5, 5) if wzp else 0) for _ in range(m))
        wq = "{axis=0, scale=[%s], zp=[%s]}" % (sws, zps)
    else:
        wq = "{scale=0.02, zp=%d}" % (3 if wzp else 0)
    bias = [R.randint(-2000, 2000) for _ in range(m)]
    if yt in ("u8", "i8", "u16", "i16"):
        yz = {"u8": 10, "i8": -7, "u16": 1000, "i16": -7}[yt]
        ytype = "%s[%d,%d,%d,%d]{scale=0.4, zp=%d}" % (yt, n, m, oh, ow, yz)
    else:
        ytype = "%s[%d,%d,%d,%d]" % (yt, n, m, oh, ow)
    cl = ", clamp=[%d, %d]" % clamp if clamp else ""
    return """graph @%s(%%x: %s[%d,%d,%d,%d]{scale=%g, zp=%d}) -> %s {
  %%w = const dense<i8[%d,%d,%d,%d]%s, %s>
  %%b = const dense<i32[%d], %s>
  %%y = qconv %%x, %%w, %%b, strides=[%d, %d], pads=[%d, %d, %d, %d], dilations=[%d, %d], group=%d%s : %s
  return %%y
}
""" % (name, xt, n, c, h, w, sx, zx, ytype, m, cg, kh, kw, wq, hexbytes(wv), m, i32hex(bias),
       stride, stride, pad, pad, pad, pad, dil, dil, group, cl, ytype)


def qmatmul(name, b, mm, k, nn, at="u8", yt="u8", perch=True):
    za = {"u8": 100, "i8": 5, "u16": 30000, "i16": -5}[at]
    wv = [R.randint(-128, 127) for _ in range(k * nn)]
    if perch:
        wq = "{axis=1, scale=[%s], zp=[%s]}" % (", ".join("%.6g" % (0.01 + 0.002 * R.random()) for _ in range(nn)),
                                                ", ".join("0" for _ in range(nn)))
    else:
        wq = "{scale=0.015, zp=0}"
    bias = [R.randint(-500, 500) for _ in range(nn)]
    ytype = "%s[%d,%d,%d]{scale=0.3, zp=3}" % (yt, b, mm, nn) if yt in ("u8", "i8", "u16", "i16") else "%s[%d,%d,%d]" % (yt, b, mm, nn)
    return """graph @%s(%%a: %s[%d,%d,%d]{scale=0.04, zp=%d}) -> %s {
  %%w = const dense<i8[%d,%d]%s, %s>
  %%b = const dense<i32[%d], %s>
  %%y = qmatmul %%a, %%w, %%b : %s
  return %%y
}
""" % (name, at, b, mm, k, za, ytype, k, nn, wq, hexbytes(wv), nn, i32hex(bias), ytype)


GRAPHS = {
    "conv3x3_s2_pad": qconv("c1", 2, 5, 9, 9, 7, 3, 3, 2, 1),
    "conv1x1_c17": qconv("c2", 1, 17, 6, 5, 19, 1, 1, 1, 0),
    "conv7x7_s2": qconv("c3", 1, 3, 15, 15, 13, 7, 7, 2, 3, xt="i8", yt="i8"),
    "conv_groups": qconv("c4", 2, 8, 7, 7, 12, 3, 3, 1, 1, group=4, wzp=True),
    "conv_depthwise": qconv("c5", 2, 6, 8, 8, 6, 3, 3, 2, 1, group=6),
    "conv_dw_mult": qconv("c6", 1, 4, 7, 7, 8, 3, 3, 1, 1, group=4, xt="i8"),
    "conv_dilated": qconv("c7", 1, 3, 10, 10, 5, 3, 3, 1, 2, dil=2, perch=False),
    "conv_i32": qconv("c8", 1, 3, 5, 5, 4, 3, 3, 1, 1, yt="i32"),
    "conv_f32": qconv("c9", 1, 3, 5, 5, 4, 3, 3, 1, 1, yt="f32"),
    "conv_relu_clamp": qconv("c10", 1, 20, 6, 6, 67, 3, 3, 1, 1, clamp=(10, 200)),
    "conv_c65": qconv("c11", 1, 65, 4, 4, 70, 1, 1, 1, 0, xt="i8", yt="u8"),
    "matmul": qmatmul("m1", 2, 5, 33, 18),
    "matmul_i8": qmatmul("m2", 1, 7, 64, 65, at="i8", yt="i8", perch=False),
    "matmul_f32": qmatmul("m3", 1, 3, 10, 6, yt="f32"),
}

LAYOUT = """graph @layout(%x: u8[2,6,5,5]{scale=0.1, zp=128}, %q: f32[2,3,4]) -> (u8[2,6,3,3]{scale=0.1, zp=128}, u8[2,12,5,5]{scale=0.1, zp=128}, u8[2,5,6,5]{scale=0.1, zp=128}, u8[2,3,5,5]{scale=0.1, zp=128}, u8[2,6,7,9]{scale=0.1, zp=128}, i8[2,3,4]{axis=1, scale=[0.1, 0.05, 0.2], zp=[0, 3, -4]}, f32[2,3,4], u8[2,150]{scale=0.1, zp=128}) {
  %m = maxpool %x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1] : u8[2,6,3,3]{scale=0.1, zp=128}
  %c = concat %x, %x, axis=1 : u8[2,12,5,5]{scale=0.1, zp=128}
  %t = transpose %x, perm=[0, 2, 1, 3] : u8[2,5,6,5]{scale=0.1, zp=128}
  %s = slice %x, starts=[1], ends=[6], axes=[1], steps=[2] : u8[2,3,5,5]{scale=0.1, zp=128}
  %p = pad %x, pads=[0, 0, 1, 2, 0, 0, 1, 2], value=128 : u8[2,6,7,9]{scale=0.1, zp=128}
  %qq = quantize %q, axis=1, scale=[0.1, 0.05, 0.2], zp=[0, 3, -4] : i8[2,3,4]{axis=1, scale=[0.1, 0.05, 0.2], zp=[0, 3, -4]}
  %dq = dequantize %qq, axis=1, scale=[0.1, 0.05, 0.2], zp=[0, 3, -4] : f32[2,3,4]
  %r = reshape %x, shape=[2, 150] : u8[2,150]{scale=0.1, zp=128}
  return %m, %c, %t, %s, %p, %qq, %dq, %r
}
"""
GRAPHS["layout"] = LAYOUT

# 16-bit activations with int8 weights (A16W8: vpdpwssd / vpmaddwd / smlal kernels); K = 2304 and
# K = 700 exceed the int32 bound (the int64 accumulation of gemm/emit.c).
GRAPHS.update({
    "a16_conv3x3": qconv("c12", 1, 16, 7, 7, 24, 3, 3, 1, 1, xt="i16", yt="i16", clamp=(0, 32767)),
    "a16_conv_s2_u8out": qconv("c13", 2, 8, 9, 9, 17, 3, 3, 2, 1, xt="u16", yt="u8", wzp=True),
    "a16_conv_groups": qconv("c14", 1, 8, 6, 6, 12, 3, 3, 1, 1, group=4, xt="u16", yt="u16"),
    "a16_conv_depthwise": qconv("c15", 1, 6, 7, 7, 6, 3, 3, 1, 1, group=6, xt="i16", yt="i16"),
    "a16_conv_wide": qconv("c16", 1, 256, 4, 4, 20, 3, 3, 1, 1, xt="u16", yt="i16"),
    "a16_conv_f32": qconv("c17", 1, 5, 5, 5, 9, 3, 3, 1, 1, xt="i16", yt="f32"),
    "a16_matmul_wide": qmatmul("m4", 2, 5, 700, 33, at="u16", yt="u16"),
    "a16_matmul_i8out": qmatmul("m5", 1, 3, 40, 19, at="i16", yt="i8", perch=False),
    "a16_elem": """graph @a16_elem(%a: i16[1,3,6,6]{scale=0.001, zp=-20}, %b: u16[1,3,6,6]{scale=0.0003, zp=32768}, %c: u8[1,2,6,6]{scale=0.05, zp=128}) -> (i16[1,3,6,6]{scale=0.002, zp=0}, u16[1,3,6,6]{scale=0.0001, zp=100}, i16[1,5,6,6]{scale=0.001, zp=-20}, i16[1,3,3,3]{scale=0.001, zp=-20}, u16[1,3,3,3]{scale=0.0005, zp=0}, u8[1,3,6,6]{scale=0.02, zp=0}) {
  %s = qadd %a, %b, clamp=[0, 32767] : i16[1,3,6,6]{scale=0.002, zp=0}
  %m = qmul %a, %b : u16[1,3,6,6]{scale=0.0001, zp=100}
  %cr = requantize %c : i16[1,2,6,6]{scale=0.001, zp=-20}
  %k = concat %a, %cr, axis=1 : i16[1,5,6,6]{scale=0.001, zp=-20}
  %p = maxpool %a, kernel_shape=[2, 2], strides=[2, 2] : i16[1,3,3,3]{scale=0.001, zp=-20}
  %v = qavgpool %b, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1] : u16[1,3,3,3]{scale=0.0005, zp=0}
  %r = requantize %a, clamp=[0, 255] : u8[1,3,6,6]{scale=0.02, zp=0}
  return %s, %m, %k, %p, %v, %r
}
""",
})

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, text in GRAPHS.items():
        with open(os.path.join(OUT, name + ".qir"), "w") as f:
            f.write(text)
    print("%d graphs written to %s" % (len(GRAPHS), OUT))
