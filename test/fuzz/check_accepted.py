#!/usr/bin/python3
"""check_accepted.py DIR: run onnx.checker (full check, shape inference in strict mode) on every
mutant qdqc accepted (`qdqc-fuzz --mutate --save-accepted DIR`) and count the ones the checker
rejects: qdqc's silent acceptances (docs/testing.md, "Mutation mode"). Needs python3-onnx
(Debian's 1.12 knows opsets up to 17 and IR versions up to 8: models beyond those are counted
as not judged). Prints one line per rejected mutant (its first error line) and a summary."""
import collections
import os
import sys

import onnx
from onnx import checker, defs


def main():
    d = sys.argv[1]
    files = sorted(f for f in os.listdir(d) if f.endswith(".onnx"))
    rejected, not_judged = [], 0
    reasons = collections.Counter()
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
    for f, why in rejected:
        reasons[why.split(":")[0][:60]] += 1
        print(f"{f}: {why[:200]}")
    print(f"{len(files)} accepted mutants: {len(rejected)} rejected by onnx.checker (silent "
          f"acceptances), {len(files) - len(rejected) - not_judged} pass it, {not_judged} not "
          f"judged (opset or IR version newer than onnx {onnx.__version__} knows)")


if __name__ == "__main__":
    main()
