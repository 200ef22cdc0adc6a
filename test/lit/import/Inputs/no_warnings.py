#!/usr/bin/python3
"""no_warnings.py DIR...: import every .onnx model under DIR with `qdqc --passes=` and fail
(exit 1, listing them) if any import prints a warning. Models that fail with an error are
fine here (the hostile corpus); other tests check their messages."""
import os
import subprocess
import sys


def main():
    models = sorted(os.path.join(r, f) for d in sys.argv[1:] for r, _, fs in os.walk(d)
                    for f in fs if f.endswith(".onnx"))
    bad = []
    for m in models:
        p = subprocess.run(["qdqc", m, "--passes=", "-o", os.devnull, "--emit=ir"],
                           capture_output=True, text=True)
        bad += [line for line in p.stderr.splitlines() if ": warning: " in line]
    print(f"{len(models)} models, {len(bad)} warnings")
    for line in bad:
        print(line)
    if not models or bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
