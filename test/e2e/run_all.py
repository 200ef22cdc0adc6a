#!/usr/bin/python3
"""run_all.py QDQC [--jobs N] [--paths all|ends|middle] [--one-config | --one-thread] [GRAPH...]: every graphs/*.qir (or the
GRAPHs given) on every x86 kernel path the host can run (avx512vnni with VBMI, avx512vnni,
avxvnni, avx2, generic),
float and fixed requantization, 1 and 2 threads: the JIT equals the reference interpreter, bit
for bit. --paths ends: only the host's best path and generic (the quick tier's
e2e/jit-vs-ref.test); --paths middle: the paths between them (the full tier's
e2e/jit-vs-ref-paths.test); all (default): every path. --one-config: per path only float
requantization at 1 thread (the sanitizer builds' run of the middle paths: there the compiler's
memory safety is under test, and the other configurations compile the same code). --one-thread:
both requantization modes, 1 thread only (the sanitized quick tier: the 2-thread run compiles
the same code; the thread pool has its own TSan test).

The reference does not depend on the ISA path or the thread count, so it runs once per graph and
requantization mode, on the graph as written (`--passes=` empty, the integer ops of the text IR)
and the same seeded random inputs; each JIT configuration is compared with it (compare.py's rules:
same outputs, dtypes, shapes and bytes, NaN equal to NaN). Graphs run on N workers (default 2)."""
import concurrent.futures as cf
import os, subprocess, sys, tempfile
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def host_isas():
    flags = open("/proc/cpuinfo").read().split("\nflags", 1)[-1].split("\n", 1)[0].split()
    isas = ["generic"] + [i for i, f in (("avx2", "avx2"), ("avxvnni", "avx_vnni"),
                                          ("avx512vnni", "avx512_vnni")) if f in flags]
    # the AVX-512 VBMI kernels (byte permutes: lut, depthwise) on top of avx512vnni
    if "avx512vnni" in isas and "avx512vbmi" in flags:
        isas.append("avx512vbmi")
    return isas


def isa_flags(isa):
    if isa == "avx512vbmi":
        return ["--isa=avx512vnni", "--mattr=+avx512vbmi"]
    return ["--isa=" + isa]


def run(qdqc, graph, out, extra):
    cmd = [qdqc, "run", graph, "--random-inputs", "1", "--output-dir", out, "--passes="] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, "%s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr)
    return {f: np.load(os.path.join(out, f)) for f in sorted(os.listdir(out))}, ""


def differ(ref, jit):
    if sorted(ref) != sorted(jit) or not ref:
        return "output sets differ: %s vs %s" % (sorted(ref), sorted(jit))
    for f in sorted(ref):
        a, b = ref[f], jit[f]
        if a.dtype != b.dtype or a.shape != b.shape:
            return "%s: ref %s%s vs jit %s%s" % (f, a.dtype, a.shape, b.dtype, b.shape)
        eq = a == b
        if a.dtype.kind == "f":
            eq |= np.isnan(a) & np.isnan(b)
        if not eq.all():
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            return "%s: %d of %d elements differ, max %g" % (f, int((~eq).sum()), a.size, np.nanmax(d))
    return ""


def check_graph(qdqc, graph, isas, one_config=False, one_thread=False):
    """(runs, failure lines) for one graph over every configuration."""
    runs, fails = 0, []
    name = os.path.basename(graph)
    with tempfile.TemporaryDirectory() as tmp:
        for requant in ([[]] if one_config else [[], ["--requant=fixed"]]):
            ref, err = run(qdqc, graph, os.path.join(tmp, "ref"), ["--engine=ref"] + requant)
            threads = [[], ["--threads", "2"]] if not (requant or one_config or one_thread) else [[]]
            for isa in isas:
                for t in threads:
                    runs += 1
                    flags = requant + isa_flags(isa) + t
                    if ref is None:
                        fails.append("FAIL %s %s: reference: %s" % (name, " ".join(flags), err))
                        continue
                    d = os.path.join(tmp, "jit-%d" % runs)
                    jit, jerr = run(qdqc, graph, d, ["--engine=jit"] + flags)
                    why = jerr if jit is None else differ(ref, jit)
                    if why:
                        fails.append("FAIL %s %s: %s" % (name, " ".join(flags), why))
    return runs, fails


def main():
    argv = sys.argv[1:]
    jobs = 2
    paths = "all"
    if "--paths" in argv:
        i = argv.index("--paths")
        paths = argv[i + 1]
        del argv[i:i + 2]
        if paths not in ("all", "ends", "middle"):
            print(__doc__, file=sys.stderr)
            return 2
    one_config = "--one-config" in argv
    if one_config:
        argv.remove("--one-config")
    one_thread = "--one-thread" in argv
    if one_thread:
        argv.remove("--one-thread")
    if "--jobs" in argv:
        i = argv.index("--jobs")
        jobs = int(argv[i + 1])
        del argv[i:i + 2]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    qdqc = argv[0]
    graphs = argv[1:] or [os.path.join(here, "graphs", g)
                          for g in sorted(os.listdir(os.path.join(here, "graphs")))]
    isas = host_isas()
    if paths == "ends":
        isas = sorted(set([isas[0], isas[-1]]), key=isas.index)
    elif paths == "middle":
        isas = isas[1:-1]
        if not isas:
            print("0 runs, 0 failed (paths: none between generic and the best on this host)")
            return 0
    runs = nfail = 0
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        for n, fails in pool.map(lambda g: check_graph(qdqc, g, isas, one_config, one_thread), graphs):
            runs += n
            nfail += len(fails)
            for f in fails:
                print(f)
    print("%d runs, %d failed (paths: %s)" % (runs, nfail, ", ".join(isas)))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
