#!/usr/bin/python3
"""import_all.py QDQC DIR: import every DIR/*.onnx with `QDQC FILE --passes=dce`; print one line
per model ("ok NAME" or "FAIL NAME: first diagnostic") and exit 1 if any model printed a
diagnostic or failed."""
import glob
import os
import subprocess
import sys

qdqc, d = sys.argv[1], sys.argv[2]
bad = 0
files = sorted(glob.glob(os.path.join(d, "*.onnx")))
for f in files:
    r = subprocess.run([qdqc, f, "--passes=dce", "-o", os.devnull], capture_output=True, text=True)
    name = os.path.basename(f)
    if r.returncode != 0 or r.stderr:
        bad += 1
        print("FAIL %s: %s" % (name, (r.stderr.splitlines() or ["exit %d" % r.returncode])[0]))
    else:
        print("ok %s" % name)
print("%d models, %d failed" % (len(files), bad))
sys.exit(1 if bad else 0)
