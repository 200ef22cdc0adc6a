#!/usr/bin/python3
"""gen_par.py: writes graphs/par_split.qir (deterministic), the graph of the parallel-for
partitioning (docs/performance.md, "2-thread scaling"): every kernel whose work the code
generator splits into units for the host's parallel-for hook, with edges of each split.
- f32 graph inputs quantized per tensor (3 * 21 * 23 elements: one block) and per axis
  (axis 1, rows of 9000 elements: two 8192-element blocks per row, the second partial) and
  dequantized back per axis (the same blocks);
- the first conv reads an NCHW graph input: its NCHW -> NHWC transpose runs in blocks of rows
  (16 KiB / (W * C) rows per unit, 23 * 3 bytes per row: 21 rows in one unit and a tail unit);
- a 1x1 conv to 300 channels whose only consumer is a global average pool, so its result is
  unstaged to NCHW in (batch, 16-pixel block) units (11 * 12 pixels: a partial last block);
- the NCHW global average pool in blocks of planes (31 planes of 132 taps: 20 units, the last
  partial); an NCHW maxpool and a padded average pool (count_include_pad) of a graph input,
  whose results are graph outputs (never NHWC): 80 planes of 225 taps in blocks of 18 planes;
- a classifier qmatmul with M = 2 rows (one row block) and N = 520: two column slices (320 and
  200 channels), each its own GEMM, per-channel weights and a bias; dequantized to f32.
Also graphs/conv_slices.qir (below): convolutions whose few row blocks make the code generator
split their columns."""
import os, random

R = random.Random(7)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphs", "par_split.qir")


def hexbytes(vals):
    return "0x" + "".join("%02X" % (v & 0xFF) for v in vals)


def i32hex(vals):
    return "0x" + "".join("".join("%02X" % ((v >> (8 * i)) & 0xFF) for i in range(4)) for v in vals)


def wconst(name, dims, axis):
    n = 1
    for d in dims:
        n *= d
    ch = dims[axis]
    sws = ", ".join("%.6g" % (0.004 + 0.003 * R.random()) for _ in range(ch))
    zps = ", ".join("0" for _ in range(ch))
    vals = [R.randint(-127, 127) for _ in range(n)]
    return "  %%%s = const dense<i8[%s]{axis=%d, scale=[%s], zp=[%s]}, %s>\n" % (
        name, ",".join(map(str, dims)), axis, sws, zps, hexbytes(vals))


def bconst(name, n):
    return "  %%%s = const dense<i32[%d], %s>\n" % (name, n, i32hex([R.randint(-3000, 3000) for _ in range(n)]))


g = []
g.append("graph @par_split(%x: f32[2,3,21,23], %x2: f32[1,3,2,9000], %x3: u8[2,40,9,9]{scale=0.05, zp=120})"
         " -> (f32[2,520], f32[1,3,2,9000], u8[2,40,5,5]{scale=0.05, zp=120},"
         " u8[2,40,5,5]{scale=0.04, zp=110}) {\n")
g.append(wconst("w1", [16, 3, 3, 3], 0) + bconst("b1", 16))
g.append(wconst("w2", [300, 16, 1, 1], 0) + bconst("b2", 300))
g.append(wconst("w3", [300, 520], 1) + bconst("b3", 520))
g.append("  %q = quantize %x, scale=0.02, zp=128 : u8[2,3,21,23]{scale=0.02, zp=128}\n")
g.append("  %c1 = qconv %q, %w1, %b1, strides=[2, 2], pads=[1, 1, 1, 1], kernel_shape=[3, 3]"
         " : u8[2,16,11,12]{scale=0.03, zp=0}\n")
g.append("  %c2 = qconv %c1, %w2, %b2, kernel_shape=[1, 1] : u8[2,300,11,12]{scale=0.05, zp=5}\n")
g.append("  %gp = qavgpool %c2, global=1 : u8[2,300,1,1]{scale=0.04, zp=3}\n")
g.append("  %fl = flatten %gp, axis=1 : u8[2,300]{scale=0.04, zp=3}\n")
g.append("  %fc = qmatmul %fl, %w3, %b3 : u8[2,520]{scale=0.08, zp=124}\n")
g.append("  %y = dequantize %fc, scale=0.08, zp=124 : f32[2,520]\n")
g.append("  %q2 = quantize %x2, axis=1, scale=[0.01, 0.02, 0.015], zp=[120, 128, 131]"
         " : u8[1,3,2,9000]{axis=1, scale=[0.01, 0.02, 0.015], zp=[120, 128, 131]}\n")
g.append("  %y2 = dequantize %q2, axis=1, scale=[0.01, 0.02, 0.015], zp=[120, 128, 131] : f32[1,3,2,9000]\n")
g.append("  %mp = maxpool %x3, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]"
         " : u8[2,40,5,5]{scale=0.05, zp=120}\n")
g.append("  %ap = qavgpool %x3, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1"
         " : u8[2,40,5,5]{scale=0.04, zp=110}\n")
g.append("  return %y, %y2, %mp, %ap\n}\n")
with open(OUT, "w") as f:
    f.write("".join(g))

# graphs/conv_slices.qir: convolutions over 7x7 maps (49 GEMM rows: a few row blocks of the
# microkernel tile) to 320 and 256 channels, whose columns the code generator splits into two
# GEMMs for the parallel-for hook (lib/codegen/lower/qconv.c, conv_slices): 192 + 128 and
# 128 + 128 channels; the first result is also a graph output (NCHW).
g = []
g.append("graph @conv_slices(%x: u8[1,64,7,7]{scale=0.03, zp=120}) -> (u8[1,256,7,7]{scale=0.05, zp=7},"
         " u8[1,320,7,7]{scale=0.04, zp=3}) {\n")
g.append(wconst("w1", [320, 64, 3, 3], 0) + bconst("b1", 320))
g.append(wconst("w2", [256, 320, 1, 1], 0) + bconst("b2", 256))
g.append("  %c1 = qconv %x, %w1, %b1, pads=[1, 1, 1, 1], kernel_shape=[3, 3]"
         " : u8[1,320,7,7]{scale=0.04, zp=3}\n")
g.append("  %c2 = qconv %c1, %w2, %b2, kernel_shape=[1, 1] : u8[1,256,7,7]{scale=0.05, zp=7}\n")
g.append("  return %c2, %c1\n}\n")
with open(os.path.join(os.path.dirname(OUT), "conv_slices.qir"), "w") as f:
    f.write("".join(g))
