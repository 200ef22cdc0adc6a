#!/usr/bin/python3
"""test-report.py DIR [--top N]: the N (default 10) slowest tests of a run, from the per-test
times the run left in DIR (build/test-results/): ctest's JUnit file (ctest.xml) for ctest's own
entries and lit's JSON files (lit-*.json, written by `lit -o`) for every lit test; the ctest
entries that only run lit (`lit`, `lit.long`, `lit.host-*`) are replaced by their tests. Prints
one line per test, slowest first: seconds, status, name."""
import glob, json, os, sys
import xml.etree.ElementTree as ET


def main():
    argv = sys.argv[1:]
    top = 10
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    d = argv[0]
    rows = []
    xml = os.path.join(d, "ctest.xml")
    if os.path.exists(xml):
        for tc in ET.parse(xml).getroot().iter("testcase"):
            name = tc.get("name")
            if name == "lit" or name.startswith("lit."):
                continue
            status = tc.get("status") or ("fail" if tc.find("failure") is not None else "run")
            rows.append((float(tc.get("time") or 0), status, "ctest " + name))
    for f in sorted(glob.glob(os.path.join(d, "lit-*.json"))):
        run = os.path.basename(f)[4:-5]
        for t in json.load(open(f)).get("tests", []):
            label = t["name"].replace("qdqc :: ", "lit ")
            if run.startswith("host-"):
                label += " [" + run + "]"
            rows.append((float(t.get("elapsed") or 0), t["code"].lower(), label))
    rows.sort(reverse=True)
    print("slowest %d of %d tests:" % (min(top, len(rows)), len(rows)))
    for sec, status, name in rows[:top]:
        print("  %7.1f s  %-7s %s" % (sec, status, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
