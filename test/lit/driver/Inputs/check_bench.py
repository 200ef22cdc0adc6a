#!/usr/bin/python3
"""check_bench.py MODE [NAME=OP=MACS ...] < JSON: checks `qdqc bench --json` output.

MODE timing: the keys of the plain timing report, min <= median <= p90.
MODE profile: every step once, sorted slowest first, shares summing to 1, GOPS = 2 x MACs /
ms, and (if given) exactly the nodes NAME with op OP and MACS multiply-adds.
MODE par-profile: every region and loss names its step's node, a known node (if given).
Prints "ok MODE" or fails with the reason."""
import json
import sys

mode = sys.argv[1]
want = {}
for a in sys.argv[2:]:
    name, op, macs = a.rsplit("=", 2)
    want[name] = (op, int(macs))
d = json.load(sys.stdin)


def fail(msg):
    sys.exit("check_bench: %s: %s" % (mode, msg))


if d.get("mode") != mode:
    fail("mode %r" % d.get("mode"))
if mode == "timing":
    for k in ("iterations", "warmup", "threads", "compile_ms", "median_ms", "min_ms", "p90_ms",
              "gops", "int8_macs", "workspace_bytes"):
        if k not in d:
            fail("no key %s" % k)
    if not d["min_ms"] <= d["median_ms"] <= d["p90_ms"]:
        fail("min/median/p90 out of order")
elif mode == "profile":
    nodes = d["nodes"]
    if sorted(n["step"] for n in nodes) != list(range(len(nodes))):
        fail("steps are not 0..%d once each" % (len(nodes) - 1))
    ms = [n["ms"] for n in nodes]
    if ms != sorted(ms, reverse=True):
        fail("not sorted slowest first")
    if abs(sum(n["share"] for n in nodes) - 1) > 1e-3:
        fail("shares sum to %g" % sum(n["share"] for n in nodes))
    if abs(sum(ms) - d["steps_ms"]) > 1e-3 * max(1e-9, d["steps_ms"]) + 1e-6:
        fail("steps_ms is not the sum")
    for n in nodes:
        g = 2 * n["macs"] / (n["ms"] * 1e6) if n["ms"] > 0 else 0
        if abs(g - n["gops"]) > 1e-3 * max(g, 1e-9) + 1e-6:
            fail("gops of %s: %g, not 2 x macs / ms = %g" % (n["name"], n["gops"], g))
    if want:
        got = {n["name"]: (n["op"], n["macs"]) for n in nodes}
        if got != want:
            fail("nodes %r, expected %r" % (got, want))
elif mode == "par-profile":
    regions = d["region_list"]
    if len(regions) != d["regions"] or not regions:
        fail("region_list")
    for r in regions + d["largest_losses"]:
        if "node" not in r or "op" not in r:
            fail("region %r has no node" % r)
    if want and not want.keys() >= {r["node"] for r in regions}:
        fail("regions name %r, not among %r" % ({r["node"] for r in regions}, set(want)))
else:
    fail("unknown mode")
print("ok", mode)
