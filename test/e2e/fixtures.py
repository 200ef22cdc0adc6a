#!/usr/bin/python3
"""fixtures.py QDQC [--isa best|all|PATH,...] [--literal] [--fixed] [--threads N] [-j JOBS] [MODEL...]

Real models end to end: every test/models/fixtures/*.onnx and examples/mobilenetv2_qdq.onnx
(or the MODELs given) through compare.py, i.e. `qdqc run --engine=jit` against
`qdqc run --engine=ref` on the same random inputs, compared exactly.
  --isa best    the host's default kernel path (default)
  --isa all     every x86 path the host runs (generic, avx2, avxvnni, avx512vnni)
  --literal     also run each model as imported (--passes=, no pipeline): exercises the float
                kernels (conv, matmul, gemm, activations, ...) of the float islands
  --fixed       also run with --requant=fixed
Prints one line per failure and a summary; exit 0 iff every run matched."""
import concurrent.futures
import glob
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))


def host_isas():
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    fl = flags.split()
    return ["generic"] + [i for i, f in (("avx2", "avx2"), ("avxvnni", "avx_vnni"),
                                         ("avx512vnni", "avx512_vnni")) if f in fl]


def main():
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    qdqc = argv.pop(0)
    isa, literal, fixed, threads, jobs, models = "best", False, False, None, os.cpu_count() or 1, []
    while argv:
        a = argv.pop(0)
        if a == "--isa":
            isa = argv.pop(0)
        elif a == "--literal":
            literal = True
        elif a == "--fixed":
            fixed = True
        elif a == "--threads":
            threads = argv.pop(0)
        elif a == "-j":
            jobs = int(argv.pop(0))
        elif a.startswith("-"):
            print("unknown option " + a, file=sys.stderr)
            return 2
        else:
            models.append(a)
    if not models:
        models = sorted(glob.glob(os.path.join(root, "test", "models", "fixtures", "*.onnx")))
        models.append(os.path.join(root, "examples", "mobilenetv2_qdq.onnx"))
    isas = [None] if isa == "best" else host_isas() if isa == "all" else isa.split(",")
    configs = []
    for i in isas:
        extra = (["--isa=" + i] if i else []) + (["--threads", threads] if threads else [])
        configs.append(([], extra))
        if literal:
            configs.append((["--passes="], extra))
        if fixed:
            configs.append((["--requant=fixed"], extra))
    runs = [(m, p, e) for m in models for p, e in configs]

    def one(run):
        m, p, e = run
        cmd = [sys.executable, os.path.join(here, "compare.py"), qdqc, m] + p + ["--"] + e
        r = subprocess.run(cmd, capture_output=True, text=True)
        return run, r.returncode, r.stdout + r.stderr

    fails = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        for (m, p, e), rc, out in ex.map(one, runs):
            if rc != 0:
                fails += 1
                print("FAIL %s %s\n%s" % (os.path.basename(m), " ".join(p + e), out.strip()))
    print("%d runs over %d models, %d failed (paths: %s)" %
          (len(runs), len(models), fails, ", ".join(i or "best" for i in isas)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
