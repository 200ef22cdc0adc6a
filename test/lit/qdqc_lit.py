"""qdqc_lit.py: qdqc's lit test format (test/lit/lit.cfg.py; docs/testing.md, "Tiers").

A module of its own so that lit's worker processes can unpickle the format. It is lit's ShTest
with three additions:
- tiers: a test whose text says `TIER: long` belongs to the full tier, every other test to the
  quick tier; discovery yields only the tests of the tier asked for (`--param tier=`), so a
  tier's counts are its own tests (a test named explicitly on the command line always runs);
- host-variant runs (QDQC_HOST_CPU set): only the tests that emit LLVM IR or assembly and
  FileCheck it, the only ones whose result can depend on the CPU LLVM tunes for;
- a time limit per test, ten times its measured cost in .lit_test_times.txt and at least 120 s (300 s for
  a test with no recorded cost; `--param time_floor=S` lowers the 120 s floor, for checking this), four times that in sanitizer builds; a test stopped for time
  is reported TIMEOUT with its name, its limit and its recorded cost;
- in sanitizer builds, the heavy tests that run there (a recorded cost of HEAVY_S seconds or
  more, which sanitizers make 2-6 times longer; not `UNSUPPORTED: asan`) run on alternate days: they are split into two parts of
  about equal recorded cost, and part (days since 1970-01-01, UTC) mod 2 runs; the other part is
  reported UNSUPPORTED with the day it runs. `--param sanitize_rotate=all` runs both parts,
  `=0` or `=1` one of them. Without sanitizers every test runs every time."""
import os
import re
import time

import lit.formats
import lit.Test

TIER_RE = re.compile(r"TIER:\s*(\w+)")
EMITS_CODE_RE = re.compile(r"--emit=[a-z,]*\b(llvm|asm)\b|-o\s+\S+\.(ll|s)\b")


def read_costs(path):
    """{test: seconds} from lit's own timing file format ("SECONDS PATH" per line; lit also
    reads this file to start the slowest tests first on a fresh build)."""
    costs = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                sec, name = line.split(maxsplit=1)
                costs[name.strip()] = abs(float(sec))
    return costs


HEAVY_S = 30.0


def rotation_parts(costs, root, heavy=HEAVY_S):
    """{test: part} for the tests under `root` whose recorded cost is at least `heavy` seconds
    and that do not say `UNSUPPORTED: asan`: the longest first, each to the part with the
    smaller total so far (ties by name, so every machine with the same timing file splits
    alike)."""
    heavy_tests = []
    for name, cost in costs.items():
        if cost < heavy:
            continue
        try:
            with open(os.path.join(root, name), errors="replace") as f:
                text = f.read(16384)
        except OSError:
            continue
        if not re.search(r"UNSUPPORTED:.*\basan\b", text):
            heavy_tests.append((cost, name))
    totals, parts = [0.0, 0.0], {}
    for cost, name in sorted(heavy_tests, key=lambda t: (-t[0], t[1])):
        k = 0 if totals[0] <= totals[1] else 1
        parts[name] = k
        totals[k] += cost
    return parts


def time_limit(cost, sanitize, floor=120):
    limit = max(floor, int(10 * cost + 0.999)) if cost is not None else max(floor, 300)
    return limit * 4 if sanitize else limit


class QdqcTest(lit.formats.ShTest):
    def __init__(self, tier, host_cpu, costs, sanitize, floor=120, rotate="day", root="."):
        super().__init__(execute_external=False)
        self.tier, self.host_cpu, self.costs, self.sanitize = tier, host_cpu, costs, sanitize
        self.floor = floor
        self.parts = rotation_parts(costs, root) if sanitize and rotate != "all" else {}
        self.part = int(time.time() // 86400) % 2 if rotate == "day" else \
            (int(rotate) if rotate in ("0", "1") else None)

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for test in super().getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig):
            with open(test.getSourcePath(), errors="replace") as f:
                text = f.read(16384)
            m = TIER_RE.search(text)
            tier = m.group(1) if m else "quick"
            if tier not in ("quick", "long"):
                litConfig.fatal("%s: TIER: %s (expected quick or long)" % (test.getSourcePath(), tier))
            if self.host_cpu:
                if EMITS_CODE_RE.search(text) and "FileCheck" in text:
                    yield test
            elif self.tier in ("all", tier):
                yield test

    def execute(self, test, litConfig):
        name = "/".join(test.path_in_suite)
        cost = self.costs.get(name)
        part = self.parts.get(name)
        if part is not None and part != self.part:
            return lit.Test.Result(lit.Test.UNSUPPORTED,
                                   "qdqc: %s (recorded cost %.0f s) runs under sanitizers in part %d "
                                   "of 2, on days when days since 1970-01-01 (UTC) mod 2 is %d; "
                                   "today's part is %d (--param sanitize_rotate=all runs both)\n"
                                   % (name, cost, part, part, self.part))
        limit = time_limit(cost, self.sanitize, self.floor)
        litConfig.maxIndividualTestTime = limit
        result = super().execute(test, litConfig)
        if result.code == lit.Test.TIMEOUT:
            result.output += ("\nqdqc: %s stopped after its time limit of %d s (recorded cost: %s;"
                              " test/lit/.lit_test_times.txt)\n"
                              % (name, limit, "%.1f s" % cost if cost is not None else "none"))
        return result
