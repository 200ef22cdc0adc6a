#!/usr/bin/python3
"""run_all.py QDQC: compare.py over every graphs/*.qir for each x86 kernel path the host can run
(avx512vnni, avxvnni, avx2, generic), float and fixed requantization, 1 and 2 threads."""
import os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
qdqc = sys.argv[1]
host = subprocess.run(["grep", "-m1", "^flags", "/proc/cpuinfo"], capture_output=True, text=True).stdout
isas = ["generic"] + [i for i, f in (("avx2", "avx2"), ("avxvnni", "avx_vnni"), ("avx512vnni", "avx512_vnni")) if f in host.split()]
fails = runs = 0
for g in sorted(os.listdir(os.path.join(here, "graphs"))):
    for isa in isas:
        for extra in ([], ["--threads", "2"], ["--requant=fixed"]):
            cmd = [sys.executable, os.path.join(here, "compare.py"), qdqc, os.path.join(here, "graphs", g), "--passes="]
            if "--requant=fixed" in extra:
                cmd += ["--requant=fixed"]
                extra = []
            r = subprocess.run(cmd + ["--", "--isa=" + isa] + extra, capture_output=True, text=True)
            runs += 1
            if r.returncode != 0:
                fails += 1
                print("FAIL %s isa=%s %s\n%s" % (g, isa, " ".join(extra), r.stdout + r.stderr))
print("%d runs, %d failed (paths: %s)" % (runs, fails, ", ".join(isas)))
sys.exit(1 if fails else 0)
