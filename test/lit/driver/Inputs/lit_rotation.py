"""lit-rotation.test checker: rotation_parts on the real timing file and on a made-up one."""
import os
import re
import sys
import tempfile

root, litdir = sys.argv[1], sys.argv[2]
sys.path[:0] = [root, litdir]
from qdqc_lit import HEAVY_S, read_costs, rotation_parts  # noqa: E402

costs = read_costs(os.path.join(root, ".lit_test_times.txt"))
parts = rotation_parts(costs, root)
tot = [sum(costs[n] for n, k in parts.items() if k == p) for p in (0, 1)]
assert min(tot) > 0 and max(tot) <= 1.25 * min(tot), tot
for name, cost in costs.items():
    path = os.path.join(root, name)
    if not os.path.exists(path):
        continue
    text = open(path, errors="replace").read(16384)
    instrumented = not re.search(r"UNSUPPORTED:.*\basan\b", text)
    assert (name in parts) == (instrumented and cost >= HEAVY_S), name
print("real: 2 parts, balanced, instrumented only, complete")

with tempfile.TemporaryDirectory() as d:
    for n, body in (("a", ""), ("b", ""), ("c", ""), ("d", ""), ("e", "UNSUPPORTED: asan")):
        open(os.path.join(d, n), "w").write(body)
    toy = rotation_parts({"a": 100, "b": 60, "c": 50, "d": 40, "e": 500, "f": 90}, d)
print("toy: " + " ".join("%s=%d" % kv for kv in sorted(toy.items())))
