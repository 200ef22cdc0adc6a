#!/usr/bin/python3
"""lit-costs.py RESULTS.json [RESULTS.json ...]: rewrite test/lit/.lit_test_times.txt, the
measured cost (wall seconds) of each lit test, from the JSON files of `lit -o RESULTS.json` runs,
in lit's own timing format (lit starts the slowest tests first from it when the build directory
has no timing file of its own). test/lit/qdqc_lit.py derives each test's time limit from it (docs/testing.md, "Tiers"). Where a test appears in several
files the largest time is kept; tests absent from every file keep their old line.

  lit -j2 -o /tmp/quick.json build/test/lit
  lit -j2 --param tier=long -o /tmp/long.json build/test/lit
  tools/lit-costs.py /tmp/quick.json /tmp/long.json"""
import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, "..", "test", "lit", ".lit_test_times.txt")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    costs = {}
    if os.path.exists(path):
        for line in open(path):
            if line.strip():
                sec, name = line.split(maxsplit=1)
                costs[name.strip()] = abs(float(sec))
    seen = {}
    for f in sys.argv[1:]:
        for t in json.load(open(f))["tests"]:
            if t["code"] in ("UNSUPPORTED", "SKIPPED", "EXCLUDED"):
                continue
            name = t["name"].split(" :: ", 1)[1]
            seen[name] = max(seen.get(name, 0.0), float(t["elapsed"]))
    costs.update(seen)
    with open(path, "w") as out:
        for name in sorted(costs):
            out.write("%e %s\n" % (costs[name], name))
    print("%s: %d tests (%d measured now)" % (os.path.relpath(path), len(costs), len(seen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
