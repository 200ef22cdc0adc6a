#!/usr/bin/python3
"""check_accepted.py DIR [--max-silent N] [-q]: run onnx.checker (full check, shape inference in
strict mode) on every mutant qdqc accepted (`qdqc-fuzz --mutate --save-accepted DIR`) and
count the ones the checker rejects. qdqc-fuzz writes the import warnings of an accepted mutant
next to it (mutant-S-I.warn); a rejected mutant without one is a **silent acceptance**
(docs/testing.md, "Mutation mode"). Prints two lines per rejected mutant (the checker's first
error line, then qdqc's first warning or SILENT; -q: only the silent ones) and a summary;
exits 1 when there are more than N silent acceptances (default 0), 2 on a usage error or
when there is nothing to judge.
Needs python3-onnx (Debian's 1.12 knows opsets up to 17 and IR versions up to 8: models
beyond those are counted as not judged)."""
import argparse
import collections
import os
import sys

import onnx
from onnx import checker, defs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--max-silent", type=int, default=0)
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="list only the silent acceptances, not the mutants qdqc warned about")
    args = ap.parse_args()
    d = args.dir
    if not os.path.isdir(d):
        print(f"check_accepted.py: {d} is not a directory", file=sys.stderr)
        return 2
    files = sorted(f for f in os.listdir(d) if f.endswith(".onnx"))
    rejected, not_judged = [], 0
    for f in files:
        path = os.path.join(d, f)
        try:
            m = onnx.load(path)
        except Exception as e:  # noqa: BLE001 - a protobuf error is a rejection too
            rejected.append((f, "load: " + str(e).splitlines()[0]))
            continue
        ops = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
        if m.ir_version > onnx.IR_VERSION or any(v > defs.onnx_opset_version() for v in ops):
            not_judged += 1
            continue
        try:
            checker.check_model(m, full_check=True)
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()
            rejected.append((f, msg[0] if msg else type(e).__name__))
    silent = 0
    reasons = collections.Counter()
    for f, why in rejected:
        wpath = os.path.join(d, f[: -len(".onnx")] + ".warn")
        warning = None
        if os.path.exists(wpath):
            with open(wpath, encoding="utf-8", errors="replace") as w:
                lines = [ln.strip() for ln in w if "warning: " in ln]
            warning = lines[0] if lines else "warning"
        if warning is None:
            silent += 1
            reasons[why[:70]] += 1
        if warning is None or not args.quiet:
            print(f"{f}: {why[:200]}\n    qdqc: "
                  f"{warning[:200] if warning else 'SILENT (no warning)'}")
    if reasons:
        print("silent acceptances by checker message:")
        for why, n in reasons.most_common():
            print(f"  {n:4d}  {why}")
    print(f"{len(files)} accepted mutants: {len(rejected)} rejected by onnx.checker "
          f"({len(rejected) - silent} with a qdqc warning, {silent} silent acceptances), "
          f"{len(files) - len(rejected) - not_judged} pass it, {not_judged} not judged (opset or "
          f"IR version newer than onnx {onnx.__version__} knows)")
    sys.stdout.flush()
    if not files:
        print("check_accepted.py: no accepted mutants to judge", file=sys.stderr)
        return 2
    if silent > args.max_silent:
        print(f"check_accepted.py: FAIL: {silent} silent acceptances (at most "
              f"{args.max_silent} allowed)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
