#!/usr/bin/python3
"""gen_nhwc.py: writes graphs/nhwc_*.qir, multi-layer integer graphs for the NHWC activation
layout of the codegen (lib/codegen/lower/qconv_nhwc.c): chains of convs whose intermediate values
are stored NHWC (1x1 as a direct GEMM, KxK through per-tap row copies, NHWC depthwise), residual
qadd between NHWC values, values that must stay NCHW (graph outputs, maxpool consumers), channel
counts not multiples of 16/64, strides, pads, dilation, batch > 1, u8 and i8, i32 results.
Deterministic; run_all.py compares each graph jit vs ref on every ISA path."""
import os, random

R = random.Random(4321)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs")


def hexbytes(vals):
    return "0x" + "".join("%02X" % (v & 0xFF) for v in vals)


def i32hex(vals):
    return "0x" + "".join("".join("%02X" % ((v >> (8 * i)) & 0xFF) for i in range(4)) for v in vals)


class G:
    def __init__(self, name, shape, xt):
        self.name, self.lines, self.n = name, [], 0
        self.xt = xt
        self.inp = "%%x: %s" % self.ty(xt, shape, 0.05, 128 if xt == "u8" else -3)
        self.shapes = {"%x": (shape, xt)}

    @staticmethod
    def ty(t, shape, scale=None, zp=None):
        s = "%s[%s]" % (t, ",".join(str(d) for d in shape))
        return s + ("{scale=%g, zp=%d}" % (scale, zp) if scale is not None else "")

    def conv(self, x, m, k, stride=1, pad=0, group=1, dil=1, yt=None, clamp=None, ys=0.05, yz=None):
        (n, c, h, w), xt = self.shapes[x]
        yt = yt or xt
        self.n += 1
        i = self.n
        cg = c // group
        oh = (h + 2 * pad - dil * (k - 1) - 1) // stride + 1
        ow = (w + 2 * pad - dil * (k - 1) - 1) // stride + 1
        wv = [R.randint(-128, 127) for _ in range(m * cg * k * k)]
        sws = ", ".join("%.6g" % ((0.02 + 0.01 * R.random()) / (cg * k * k) ** 0.5) for _ in range(m))
        zps = ", ".join(str(R.randint(-3, 3) if i % 3 == 0 else 0) for _ in range(m))
        bias = [R.randint(-2000, 2000) for _ in range(m)]
        if yt in ("u8", "i8"):
            yty = self.ty(yt, (n, m, oh, ow), ys, yz if yz is not None else 128 if yt == "u8" else -3)
        else:
            yty = self.ty(yt, (n, m, oh, ow))
        self.lines.append("  %%w%d = const dense<i8[%d,%d,%d,%d]{axis=0, scale=[%s], zp=[%s]}, %s>"
                          % (i, m, cg, k, k, sws, zps, hexbytes(wv)))
        self.lines.append("  %%b%d = const dense<i32[%d], %s>" % (i, m, i32hex(bias)))
        cl = ", clamp=[%d, %d]" % clamp if clamp else ""
        self.lines.append("  %%c%d = qconv %s, %%w%d, %%b%d, strides=[%d, %d], pads=[%d, %d, %d, %d], "
                          "dilations=[%d, %d], group=%d%s : %s"
                          % (i, x, i, i, stride, stride, pad, pad, pad, pad, dil, dil, group, cl, yty))
        v = "%%c%d" % i
        self.shapes[v] = ((n, m, oh, ow), yt)
        return v

    def add(self, a, b, t=None, scale=0.07, zp=None, clamp=None):
        shape, ta = self.shapes[a]
        t = t or ta
        self.n += 1
        v = "%%a%d" % self.n
        cl = ", clamp=[%d, %d]" % clamp if clamp else ""
        self.lines.append("  %s = qadd %s, %s%s : %s" % (v, a, b, cl, self.ty(t, shape, scale, zp if zp is not None
                                                                                 else 128 if t == "u8" else -3)))
        self.shapes[v] = (shape, t)
        return v

    def maxpool(self, x):
        (n, c, h, w), t = self.shapes[x]
        self.n += 1
        v = "%%p%d" % self.n
        shape = (n, c, h // 2, w // 2)
        self.lines.append("  %s = maxpool %s, kernel_shape=[2, 2], strides=[2, 2] : %s"
                          % (v, x, self.ty(t, shape, 0.05, 128 if t == "u8" else -3)))
        self.shapes[v] = (shape, t)
        return v

    def text(self, outs):
        tys = []
        for o in outs:
            shape, t = self.shapes[o]
            line = [l for l in self.lines if l.startswith("  %s = " % o)][0]
            tys.append(line.rsplit(" : ", 1)[1])
        return "graph @%s(%s) -> (%s) {\n%s\n  return %s\n}\n" % (
            self.name, self.inp, ", ".join(tys), "\n".join(self.lines), ", ".join(outs))


def chain_a():
    # u8, batch 2, odd sizes: 3x3 -> 1x1 -> dw s2 -> 1x1, residual add, 1x1 out
    g = G("nhwc_chain_a", (2, 19, 9, 11), "u8")
    c1 = g.conv("%x", 21, 3, pad=1)
    c2 = g.conv(c1, 33, 1)
    d1 = g.conv(c2, 33, 3, stride=2, pad=1, group=33)
    c3 = g.conv(d1, 21, 1)
    c4 = g.conv(c3, 21, 1, clamp=(128, 255))
    r = g.add(c3, c4)
    c5 = g.conv(r, 17, 1)
    return g.text([c5])


def chain_b():
    # i8, stride/dilation/pad mix, dw -> dw, i32 result, an intermediate graph output
    g = G("nhwc_chain_b", (1, 5, 13, 10), "i8")
    c1 = g.conv("%x", 24, 5, stride=2, pad=2)
    c2 = g.conv(c1, 24, 3, pad=1, group=24)
    c3 = g.conv(c2, 24, 3, pad=2, dil=2, group=24)
    c4 = g.conv(c3, 67, 3, pad=1, dil=2)
    c5 = g.conv(c4, 40, 1, stride=2)
    c6 = g.conv(c5, 9, 3, pad=1, yt="i32")
    return g.text([c6, c4])


def chain_c():
    # u8 -> maxpool consumer keeps a value NCHW between NHWC layers; 7x7 s2 stem
    g = G("nhwc_chain_c", (3, 3, 20, 18), "u8")
    c1 = g.conv("%x", 16, 7, stride=2, pad=3)
    p = g.maxpool(c1)
    c2 = g.conv(p, 65, 3, pad=1)
    c3 = g.conv(c2, 65, 3, pad=1)
    r = g.add(c2, c3)
    c4 = g.conv(r, 130, 1, stride=2)
    c5 = g.conv(c4, 31, 1)
    return g.text([c5])


def chain_d():
    # depthwise over NHWC (lower/qconv_dw.c): 40 channels (2 x 16 + 8 lanes), 144 (9 x 16), 5 (lane
    # pieces only); strides 1 and 2, 5x5, dilation 2; a row wide enough for pixel blocks plus
    # single pixels, border columns on both sides, and a row with no interior at all
    g = G("nhwc_chain_d", (2, 7, 9, 23), "i8")
    c1 = g.conv("%x", 40, 1)
    d1 = g.conv(c1, 40, 3, pad=1, group=40)
    d2 = g.conv(d1, 40, 3, stride=2, pad=1, group=40)
    c2 = g.conv(d2, 144, 1)
    d3 = g.conv(c2, 144, 5, pad=2, group=144, clamp=(-100, 127))
    d4 = g.conv(d3, 144, 3, pad=2, dil=2, group=144)
    c3 = g.conv(d4, 5, 1)
    d5 = g.conv(c3, 5, 3, pad=1, group=5)
    d6 = g.conv(d5, 5, 7, stride=2, pad=3, group=5)
    c4 = g.conv(d6, 12, 1)
    return g.text([c4])


def chain_e():
    # residual adds fused into the epilogue of the conv before them (cg_residual_add): i8,
    # batch 2, 64 channels (full vectors), 24 (a partial vector: the residual is read lane by
    # lane), a qadd of two convs that both feed only it (fused into the later one), a conv clamp
    # before the add, a qadd result with two consumers
    g = G("nhwc_chain_e", (2, 6, 11, 13), "i8")
    c1 = g.conv("%x", 64, 3, pad=1)
    c2 = g.conv(c1, 64, 3, pad=1, clamp=(-3, 127))
    r1 = g.add(c2, c1)
    c3 = g.conv(r1, 24, 1)
    c4 = g.conv(c3, 24, 3, pad=1)
    c5 = g.conv(c3, 24, 3, stride=1, pad=1)
    r2 = g.add(c4, c5)
    c6 = g.conv(r2, 24, 1)
    r3 = g.add(r2, c6)
    c7 = g.conv(r3, 10, 1)
    return g.text([c7])


def chain_f():
    # residual adds fused into the GEMM epilogue, made for --requant=fixed (and float): power-of-two
    # scales, so the qadd hits exact ties of both signs (t = dq + dr/2), and output ranges that
    # saturate at both ends; 19 channels (16 + 3 lanes, 8 + 8 + 3), 63 rows (partial row tiles);
    # fused: the conv result as the qadd's first operand (c2 + c1: residual i8, result u8) and
    # as its second (r1 + c3: residual u8, clamp), c4 + r2; not fused: c6 + c5 (c6 has a
    # second consumer, c7, and c5 is the earlier conv), c8 + r5 (its result is the graph
    # output, so it stays NCHW, and with it its operands: r5 = r4 + c7 is not fused either)
    g = G("nhwc_chain_f", (1, 8, 7, 9), "u8")
    c1 = g.conv("%x", 19, 1, yt="i8", ys=2 ** -4, yz=-5)
    c2 = g.conv(c1, 19, 3, pad=1, yt="i8", ys=2 ** -3, yz=3)
    r1 = g.add(c2, c1, t="u8", scale=2 ** -3, zp=120)
    c3 = g.conv(r1, 19, 1, yt="u8", ys=2 ** -2, yz=128)
    r2 = g.add(r1, c3, t="i8", scale=2 ** -2, zp=-7, clamp=(-100, 90))
    c4 = g.conv(r2, 19, 1, yt="i8", ys=2 ** -2, yz=0)
    r3 = g.add(c4, r2, t="i8", scale=2 ** -1, zp=0)
    c5 = g.conv(r3, 19, 1, yt="i8", ys=2 ** -2, yz=2)
    c6 = g.conv(r3, 19, 1, yt="i8", ys=2 ** -2, yz=1)
    r4 = g.add(c6, c5, t="i8", scale=2 ** -2, zp=0)
    c7 = g.conv(c6, 19, 1, yt="i8", ys=2 ** -2, yz=0)
    r5 = g.add(r4, c7, t="i8", scale=2 ** -2, zp=0)
    c8 = g.conv(r5, 19, 1, yt="i8", ys=2 ** -3, yz=0)
    r6 = g.add(c8, r5, t="i8", scale=2 ** -3, zp=0)
    return g.text([r6])


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, f in (("nhwc_chain_a", chain_a), ("nhwc_chain_b", chain_b), ("nhwc_chain_c", chain_c),
                    ("nhwc_chain_d", chain_d), ("nhwc_chain_e", chain_e), ("nhwc_chain_f", chain_f)):
        with open(os.path.join(OUT, name + ".qir"), "w") as fh:
            fh.write(f())


if __name__ == "__main__":
    main()
