#!/usr/bin/python3
"""npycmp.py: .npy helper for the reference-interpreter lit tests.

  npycmp.py make OUT.npy DTYPE SHAPE VALUES
      write VALUES (space/comma separated, 'inf' 'nan' allowed) as DTYPE with SHAPE ("1x6",
      "" for a scalar)
  npycmp.py check FILE.npy DTYPE SHAPE VALUES [--atol A] [--rtol R]
      compare FILE.npy with the expected values: dtype and shape must match exactly, integers
      exactly, floats within atol + rtol*|expected| (default 0: exact; NaN equals NaN).
      Prints "max diff D" and exits 1 on any mismatch (listing the first ones).
"""
import sys

import numpy as np


def parse_shape(s):
    return tuple(int(d) for d in s.split("x")) if s else ()


def parse_values(s, dtype):
    toks = [t for t in s.replace(",", " ").split() if t]
    if np.dtype(dtype).kind == "f":
        return np.array([float(t) for t in toks], dtype=np.float64)
    return np.array([int(t) for t in toks], dtype=np.int64)


def main(argv):
    if len(argv) < 6 or argv[1] not in ("make", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, path, dtype, shape = argv[1], argv[2], np.dtype(argv[3]), parse_shape(argv[4])
    vals = parse_values(argv[5], dtype)
    atol = rtol = 0.0
    rest = argv[6:]
    while rest:
        if rest[0] == "--atol":
            atol = float(rest[1])
        elif rest[0] == "--rtol":
            rtol = float(rest[1])
        else:
            print("unknown option " + rest[0], file=sys.stderr)
            return 2
        rest = rest[2:]
    want = vals.reshape(shape) if vals.size == int(np.prod(shape)) else None
    if want is None:
        print("expected %d values for shape %s, got %d" % (int(np.prod(shape)), shape, vals.size))
        return 2
    if mode == "make":
        np.save(path, want.astype(dtype))
        return 0
    try:
        got = np.load(path)
    except (OSError, ValueError) as e:
        print("FAIL: cannot load %s: %s" % (path, e))
        return 1
    if got.dtype != dtype or got.shape != shape:
        print("FAIL: %s is %s%s, expected %s%s" % (path, got.dtype, got.shape, dtype, shape))
        return 1
    if dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        diff = np.where(both_nan, 0.0, np.abs(g - w))
        diff = np.where(np.isnan(diff), np.inf, diff)
        bad = diff > atol + rtol * np.abs(np.where(np.isnan(w), 0, w))
    else:
        g, w = got.astype(np.int64), want.astype(np.int64)
        diff = np.abs(g - w)
        bad = diff != 0
    md = float(diff.max()) if diff.size else 0.0
    print("max diff %g" % md)
    if bad.any():
        idx = np.argwhere(bad)[:8]
        for i in idx:
            t = tuple(int(x) for x in i)
            print("FAIL: %s%s = %r, expected %r" % (path, list(t), got[t].item(), want[t].item()))
        print("FAIL: %d of %d elements differ" % (int(bad.sum()), bad.size))
        return 1
    print("OK: %d elements" % got.size)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
