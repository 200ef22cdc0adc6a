#!/usr/bin/python3
"""test-inventory.py BUILD_DIR: every test of the suite with the tier that runs it (docs/testing.md,
"Tiers"): ctest's entries with their labels (quick, full) and each lit test (quick or long, from
its `TIER:` line). One line per test: TIER<TAB>KIND<TAB>NAME; a count per tier at the end.
`--compare OLD.txt` lists the tests of an older inventory missing from this one (exit 1 if any).
A ctest entry with neither label runs in no tier: it is named and the exit status is 1."""
import os, re, subprocess, sys

LIT = "/usr/lib/llvm-22/bin/lit"


def ctest_entries(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         capture_output=True, text=True, check=True).stdout
    import json
    rows = []
    for t in json.loads(out)["tests"]:
        labels = []
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels = p["value"]
        tier = "full" if "full" in labels else "quick" if "quick" in labels else "unlabelled"
        rows.append((tier, "ctest", t["name"]))
    return rows


def lit_tests(build):
    rows = []
    for tier in ("quick", "long"):
        out = subprocess.run([LIT, "--show-tests", "--param", "tier=" + tier,
                              os.path.join(build, "test", "lit")], capture_output=True, text=True,
                             check=True).stdout
        for m in re.finditer(r"^\s+qdqc :: (\S+)$", out, re.M):
            rows.append(("quick" if tier == "quick" else "full", "lit", m.group(1)))
    return rows


def main():
    argv = sys.argv[1:]
    old = None
    if "--compare" in argv:
        i = argv.index("--compare")
        old = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    rows = ctest_entries(argv[0]) + lit_tests(argv[0])
    for r in rows:
        print("\t".join(r))
    counts = {}
    for tier, kind, _ in rows:
        counts[(tier, kind)] = counts.get((tier, kind), 0) + 1
    print("# " + ", ".join("%s %s: %d" % (t, k, n) for (t, k), n in sorted(counts.items())))
    loose = [n for t, k, n in rows if t == "unlabelled"]
    for n in loose:
        print("unlabelled: ctest %s runs in no tier (give it LABELS quick or full)" % n)
    if loose:
        return 1
    if old:
        have = {(k, n) for _, k, n in rows}
        gone = [l for l in open(old) if not l.startswith("#") and l.strip()
                and tuple(l.rstrip("\n").split("\t")[1:3]) not in have]
        for l in gone:
            print("missing: " + l.rstrip("\n"))
        return 1 if gone else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
