#!/usr/bin/python3
"""elem_grid.py QDQC [-- extra jit flags]: graphs/elem_vec_fixed.qir on every (a, b) pair of its
u8 x i8 operands (a[i, j] = j mod 256, b[i, j] = (i mod 256) - 128; 257 x 259 elements, so the
vector kernels also run their tails), with --requant=fixed (--requant=float with --float).

1. `qdqc run --engine=jit` (with the extra flags, e.g. --isa=avx2 or --mattr=-avx2) equals
   `--engine=ref`, byte for byte, on every output.
2. The power-of-two outputs equal an independent numpy oracle of docs/numerics.md (the exact
   value t, a rational with a power-of-two denominator, rounded half up in fixed mode, half to
   even in float mode, + zero point, saturated), and the grid really contains what the test is
   for: exact ties t = k + 1/2 of both signs (the other mode's rounding must then differ
   somewhere), and results at both ends of the range or clamp.
Exit 0 iff all hold; prints one line per output."""
import os, subprocess, sys, tempfile
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(here, "graphs", "elem_vec_fixed.qir")
R, C = 257, 259


def npy_write(path, arr):
    np.save(path, arr)


def run(qdqc, engine, mode, inputs, out, extra):
    cmd = [qdqc, "run", GRAPH, "--engine=" + engine, "--passes=", "--requant=" + mode, "--output-dir", out]
    for k, v in inputs.items():
        cmd += ["--input", "%s=%s" % (k, v)]
    r = subprocess.run(cmd + extra, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: %s exited %d\n%s" % (" ".join(cmd + extra), r.returncode, r.stderr))
        sys.exit(1)


def oracle(num, den, zy, lo, hi, mode):
    """sat(round(num / den) + zy, lo, hi), den a power of two, num int64: exact."""
    q, r = np.divmod(num, den)  # floor division: num = q * den + r, 0 <= r < den
    if mode == "fixed":
        up = 2 * r >= den                     # half up
    else:
        up = (2 * r > den) | ((2 * r == den) & (q % 2 == 1))  # half to even
    return np.clip(q + up + zy, lo, hi), (2 * r == den)


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    mode = "float" if "--float" in argv else "fixed"
    qdqc = argv[0]
    i, j = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    a = (j % 256).astype(np.uint8)
    b = ((i % 256) - 128).astype(np.int8)
    s = np.array([-77], dtype=np.int8)
    c = ((np.arange(R) * 37) % 256).astype(np.uint8).reshape(R, 1)
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {}
        for name, arr in (("a", a), ("b", b), ("s", s), ("c", c)):
            inputs[name] = os.path.join(tmp, name + ".npy")
            npy_write(inputs[name], arr)
        run(qdqc, "ref", mode, inputs, os.path.join(tmp, "ref"), [])
        run(qdqc, "jit", mode, inputs, os.path.join(tmp, "jit"), extra)
        outs = sorted(os.listdir(os.path.join(tmp, "ref")))
        res = {}
        for o in outs:
            x = np.load(os.path.join(tmp, "ref", o))
            y = np.load(os.path.join(tmp, "jit", o))
            ok = x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
            neq = int(np.count_nonzero(x != y)) if x.shape == y.shape else -1
            print("%s: %d elements, jit != ref: %d" % (o, x.size, neq))
            fails += not ok
            res[o[:-4]] = x.astype(np.int64)
    da = a.astype(np.int64) - 128
    db = b.astype(np.int64) + 3
    dc = np.broadcast_to(c.astype(np.int64) - 7, (R, C))
    # (output, numerator, denominator of t, zy, lo, hi): scales of elem_vec_fixed.qir
    checks = [("add", 2 * da + db, 2, 0, -128, 127),      # (da/8 + db/16) / (1/8)
              ("sub", 2 * da - db, 2, 5, -60, 100),       # clamp [-60, 100]
              ("mul", da * db, 32, 128, 0, 255),          # (da/8 * db/16) / (1/4)
              ("rq", db, 4, 16, 0, 255),                  # (db/16) / (1/4)
              ("addc", da + 4 * dc, 2, 60, 0, 255)]       # (da/8 + dc/2) / (1/4)
    for name, num, den, zy, lo, hi in checks:
        want, tie = oracle(num, den, zy, lo, hi, mode)
        got = res[name]
        bad = int(np.count_nonzero(got != want))
        tpos, tneg = int(np.count_nonzero(tie & (num > 0))), int(np.count_nonzero(tie & (num < 0)))
        slo, shi = int(np.count_nonzero(got == lo)), int(np.count_nonzero(got == hi))
        other = int(np.count_nonzero(got != oracle(num, den, zy, lo, hi, "float" if mode == "fixed" else "fixed")[0]))
        print("%s: oracle mismatches %d (the other mode's rounding: %d); ties +%d -%d; at %d: %d, at %d: %d"
              % (name, bad, other, tpos, tneg, lo, slo, hi, shi))
        if bad or not other or not tpos or not tneg or (name != "rq" and (not slo or not shi)) or not slo:
            fails += 1
            print("FAIL: %s" % name)
    print("%s: %d outputs, %s, %s" % (os.path.basename(GRAPH), len(outs), mode, "OK" if not fails else "%d FAILED" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
