#!/usr/bin/python3
"""export_select_refused.py QDQC DIR: `--emit=mlir` of one small graph per selection op
(comparisons, logic, broadcasting, reductions, cast); prints, per op, the first error and
whether an output file was written."""
import os
import subprocess
import sys

qdqc, d = sys.argv[1], sys.argv[2]
BODY = {
    "equal": "%y = equal %a, %b : bool[4]",
    "less": "%y = less %a, %b : bool[4]",
    "less_equal": "%y = less_equal %a, %b : bool[4]",
    "greater": "%y = greater %a, %b : bool[4]",
    "greater_equal": "%y = greater_equal %a, %b : bool[4]",
    "not": "%y = not %c : bool[4]",
    "and": "%y = and %c, %c : bool[4]",
    "or": "%y = or %c, %c : bool[4]",
    "xor": "%y = xor %c, %c : bool[4]",
    "where": "%y = where %c, %a, %b : f32[4]",
    "expand": "%y = expand %a, shape=[2, 4] : f32[2,4]",
    "tile": "%y = tile %a, repeats=[2] : f32[8]",
    "reduce_sum": "%y = reduce_sum %a, keepdims=0 : f32[]",
    "reduce_max": "%y = reduce_max %a, keepdims=0 : f32[]",
    "reduce_min": "%y = reduce_min %a, keepdims=0 : f32[]",
    "argmax": "%y = argmax %a, axis=0, keepdims=0 : i64[]",
    "cast": "%y = cast %a, to=\"i32\" : i32[4]",
}
RTYPE = {"expand": "f32[2,4]", "tile": "f32[8]", "reduce_sum": "f32[]", "reduce_max": "f32[]",
         "reduce_min": "f32[]", "argmax": "i64[]", "where": "f32[4]", "cast": "i32[4]"}
for op, body in BODY.items():
    src = os.path.join(d, op + ".qir")
    out = os.path.join(d, op + ".mlir")
    with open(src, "w") as f:
        f.write("graph @g(%%a: f32[4], %%b: f32[4], %%c: bool[4]) -> %s {\n  %s\n  return %%y\n}\n" %
                (RTYPE.get(op, "bool[4]"), body))
    r = subprocess.run([qdqc, src, "--passes=", "--emit=mlir", "-o", out], capture_output=True,
                       text=True)
    err = [l for l in r.stderr.splitlines() if "error" in l]
    print("%s: exit %d, %s, %s" % (op, r.returncode, "file written" if os.path.exists(out)
                                   else "no file", err[0].split("error: ", 1)[1] if err else "-"))
