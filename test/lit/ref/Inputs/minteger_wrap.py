"""minteger_wrap.py DIR: the graph and inputs of ref/minteger-wrap.test (a matmul_integer
accumulator of 33100 * 255 * 255 = 2152327500 > 2^31 - 1)."""
import os
import sys

import numpy as np

d = sys.argv[1]
K = 33100
b = np.zeros((K, 2), np.uint8)
b[:, 0] = 255
with open(os.path.join(d, "g.qir"), "w") as f:
    f.write("graph @g(%%a: u8[1,%d], %%za: u8[], %%bd: u8[%d,2]) -> (i32[1,2], f32[1,2], i32[1,2]) {\n" % (K, K))
    f.write("  %%b = const dense<u8[%d,2], 0x%s>\n" % (K, b.tobytes().hex()))
    f.write("  %sa = const dense<f32[], [1.0]>\n  %sb = const dense<f32[], [1.0]>\n")
    f.write("  %acc = matmul_integer %a, %b, %za : i32[1,2]\n")
    f.write("  %f = matmul_integer %a, %b, %za, _, %sa, %sb : f32[1,2]\n")
    f.write("  %d = matmul_integer %a, %bd, %za : i32[1,2]\n")
    f.write("  return %acc, %f, %d\n}\n")
np.save(os.path.join(d, "a.npy"), np.full((1, K), 255, np.uint8))
np.save(os.path.join(d, "za.npy"), np.array(0, np.uint8))
np.save(os.path.join(d, "bd.npy"), b)
