"""npy_compare.py: compare the .npy files of two output directories (qdqc run --output-dir).

usage: npy_compare.py DIR_A DIR_B [--atol X] [--only a.npy,b.npy]
Prints "N outputs identical" (or "N outputs within X") and exits 0, or lists every difference
and exits 1. Both directories must hold the same file names.
"""
import os
import sys

import numpy as np


def main(argv):
    atol = 0.0
    if "--atol" in argv:
        i = argv.index("--atol")
        atol = float(argv[i + 1])
        del argv[i:i + 2]
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = argv[i + 1].split(",")
        del argv[i:i + 2]
    a_dir, b_dir = argv[1], argv[2]
    names = sorted(f for f in os.listdir(a_dir) if f.endswith(".npy"))
    if not names or names != sorted(f for f in os.listdir(b_dir) if f.endswith(".npy")):
        print(f"different outputs: {names} vs {sorted(os.listdir(b_dir))}")
        return 1
    if only:
        missing = [n for n in only if n not in names]
        if missing:
            print(f"missing outputs: {missing}")
            return 1
        names = only
    bad = 0
    for n in names:
        a, b = np.load(os.path.join(a_dir, n)), np.load(os.path.join(b_dir, n))
        if a.shape != b.shape or a.dtype != b.dtype:
            print(f"{n}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}")
            bad += 1
            continue
        if atol == 0:  # bit for bit (signed zeros included); any NaN equals any NaN, as IEEE
            # 754 leaves a NaN's sign and payload to the hardware and the operand order
            a1, b1 = a.reshape(-1).copy(), b.reshape(-1).copy()
            if a1.dtype.kind == "f":
                both = np.isnan(a1) & np.isnan(b1)
                a1[both] = b1[both] = np.nan
            ne = a1.view(np.uint8).reshape(a1.size, -1) != b1.view(np.uint8).reshape(b1.size, -1)
            nd = int(ne.any(axis=1).sum()) if a1.size else 0
            if nd:
                with np.errstate(invalid="ignore"):
                    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
                print(f"{n}: {nd} of {a.size} differ, max {np.nanmax(diff, initial=0)}")
                bad += 1
            continue
        with np.errstate(invalid="ignore"):
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        nan = np.isnan(a.astype(np.float64)) != np.isnan(b.astype(np.float64))
        diff = np.where(np.isnan(diff), np.where(nan, np.inf, 0.0), diff)
        if diff.max(initial=0) > atol:
            print(f"{n}: {int((diff > atol).sum())} of {a.size} differ, max {diff.max()}")
            bad += 1
    if bad:
        return 1
    print(f"{len(names)} outputs " + ("identical" if atol == 0 else f"within {atol}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
