#!/usr/bin/python3
"""qclip_check.py X.npy OUT.npy LO HI: OUT equals ONNX semantics of mk_onnx.py's qclip model
(QuantizeLinear -> Clip(LO, HI) -> DequantizeLinear around a 3x3 Conv), computed here in numpy.
Prints the number of clamped elements; exit 1 on any difference."""
import sys

import numpy as np


def fq(x, s, z, lo, hi):
    q = np.clip(np.rint(x.astype(np.float32) / np.float32(s)) + z, 0, 255)  # QuantizeLinear u8
    c = np.clip(q, lo, hi)                                                  # Clip on u8
    return ((c - z) * np.float32(s)).astype(np.float32), int((c != q).sum())


x, out = np.load(sys.argv[1]), np.load(sys.argv[2])
lo, hi = int(sys.argv[3]), int(sys.argv[4])
w = ((np.arange(4 * 2 * 3 * 3) % 7 - 3).astype(np.float32).reshape(4, 2, 3, 3) * np.float32(0.1))
w = np.clip(np.rint(w / np.float32(0.1)), -128, 127) * np.float32(0.1)
b = np.linspace(-1, 5, 4).astype(np.float32)
xd, n1 = fq(x, 0.0625, 32, lo, hi)
xp = np.pad(xd.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
c = np.zeros((1, 4, 3, 3))
for o in range(4):
    for i in range(3):
        for j in range(3):
            c[0, o, i, j] = (xp[0, :, i:i + 3, j:j + 3] * w[o]).sum() + b[o]
y, n2 = fq(c.astype(np.float32), 0.03125, 10, lo, hi)
print("clamped by the Clip: %d inputs, %d outputs" % (n1, n2))
bad = int((y != out).sum())
print("%d of %d differ" % (bad, y.size))
sys.exit(1 if bad else 0)
