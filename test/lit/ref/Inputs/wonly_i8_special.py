"""wonly_i8_special.py DIR: the graph (DIR/g.qir: wmatmul acts="i8", i8 weights, a bias) and the
rows of special activations for wonly-i8-special.test: zeros (scale
0: every q 0), subnormals (a subnormal scale), a NaN among finite values (ignored by the row
maximum, quantized to 0), an infinity (infinite scale: finite values give 0, inf / inf is NaN
-> 0, then 0 * inf = NaN), values near the f32 limit, and an ordinary row; K = 20 (a vector tail
on every path)."""
import os
import sys

import numpy as np

rng = np.random.default_rng(5)
x = rng.standard_normal((6, 20)).astype(np.float32)
x[0] = 0
x[1] = np.float32(1e-40) * np.arange(-10, 10, dtype=np.float32)
x[2, 3] = np.nan
x[3, 7] = np.inf
x[4] = x[4] * np.float32(1e37)
np.save(os.path.join(sys.argv[1], "x.npy"), x)
w = "".join("%02X" % v for v in range(1, 61))
with open(os.path.join(sys.argv[1], "g.qir"), "w") as f:
    f.write("graph @g(%%x: f32[6,20]) -> f32[6,3] {\n"
            "  %%w = const dense<i8[20,3], 0x%s>\n"
            "  %%s = const dense<f32[1,3], [0.5, 0.25, 0.125]>\n"
            "  %%b = const dense<f32[3], [1.0, 2.0, 3.0]>\n"
            "  %%y = wmatmul %%x, %%w, %%s, _, %%b, acts=\"i8\" : f32[6,3]\n"
            "  return %%y\n}\n" % w)
