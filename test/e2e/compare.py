#!/usr/bin/python3
"""compare.py: run a model with `qdqc run --engine=ref` and `--engine=jit` on the same random
inputs and compare every output exactly (same dtype, same shape, same bytes; NaN equal to NaN).

usage: compare.py QDQC MODEL [--seed N] [--passes=...] [-- extra jit flags, e.g. --mattr=+avx2]
Prints one line per output: elements compared / equal / max |diff|. Exit 0 iff all equal."""
import os, subprocess, sys, tempfile
import numpy as np


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc, model = argv[0], argv[1]
    seed, passes = "1", []
    rest = argv[2:]
    while rest:
        a = rest.pop(0)
        if a == "--seed":
            seed = rest.pop(0)
        elif a.startswith("--passes") or a.startswith("--requant"):
            passes.append(a)
        else:
            print("unknown argument " + a, file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for eng in ("ref", "jit"):
            d = os.path.join(tmp, eng)
            cmd = [qdqc, "run", model, "--engine=" + eng, "--random-inputs", seed,
                   "--output-dir", d] + passes + (extra if eng == "jit" else [])
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr))
                return 1
            outs[eng] = {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))}
        ok = True
        if sorted(outs["ref"]) != sorted(outs["jit"]) or not outs["ref"]:
            print("FAIL: output sets differ: %s vs %s" % (sorted(outs["ref"]), sorted(outs["jit"])))
            return 1
        total = 0
        for f in sorted(outs["ref"]):
            a, b = outs["ref"][f], outs["jit"][f]
            if a.dtype != b.dtype or a.shape != b.shape:
                print("FAIL %s: ref %s%s vs jit %s%s" % (f, a.dtype, a.shape, b.dtype, b.shape))
                ok = False
                continue
            if a.dtype.kind == "f":
                eq = (a == b) | (np.isnan(a) & np.isnan(b))
                diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            else:
                eq = a == b
                diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
            neq = int(eq.sum())
            md = float(np.nanmax(diff)) if diff.size else 0.0
            total += a.size
            print("%s: %d compared, %d equal, max diff %g" % (f, a.size, neq, md))
            if neq != a.size:
                ok = False
        print("%s: %d elements, %s" % (os.path.basename(model), total, "OK" if ok else "MISMATCH"))
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
