#!/usr/bin/python3
"""no_warnings.py DIR...: import every .onnx model under DIR with `qdqc --passes=` and fail
(exit 1, listing them) if any import prints a warning. Models that fail with an error are
fine here (the hostile corpus); other tests check their messages. The models in EXPECTED are
invalid ONNX that qdqc accepts with a warning: each must print its warning and no other."""
import os
import subprocess
import sys

# model path suffix -> the one warning it must print
EXPECTED = {
    "hostile/unsorted_nodes.onnx": "warning: nodes are not in topological order",
}


def main():
    models = sorted(os.path.join(r, f) for d in sys.argv[1:] for r, _, fs in os.walk(d)
                    for f in fs if f.endswith(".onnx"))
    bad, expected = [], 0
    for m in models:
        p = subprocess.run(["qdqc", m, "--passes=", "-o", os.devnull, "--emit=ir"],
                           capture_output=True, text=True)
        warns = [line for line in p.stderr.splitlines() if ": warning: " in line]
        want = next((w for k, w in EXPECTED.items() if m.endswith(os.sep + k)), None)
        if want is not None:
            expected += 1
            if len(warns) != 1 or want not in warns[0]:
                bad += warns or [f"{m}: expected '{want}', got no warning"]
            continue
        bad += warns
    print(f"{len(models)} models ({expected} expected to warn), {len(bad)} unexpected warnings")
    for line in bad:
        print(line)
    if not models or bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
