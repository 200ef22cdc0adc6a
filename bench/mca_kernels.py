#!/usr/bin/python3
"""mca_kernels.py [--qdqc PATH] [--work DIR] [--write docs/performance.md]

Static throughput analysis of qdqc's GEMM microkernels with llvm-mca-22 (the AArch64
instruction mix under -mcpu=neoverse-v1 and neoverse-n1, since no ARM machine is available to
time). For each kernel path it

  1. compiles one int8 GEMM (a text-IR qmatmul: u8 A 64x512, per-channel i8 weights 512x96, u8
     output, float requantization) with `qdqc --emit=asm` for that path;
  2. extracts the microkernel's inner loop: in `model.gemm0`, the single-block loop (a label and
     the backward branch to it) with the most dot-product instructions;
  3. runs `llvm-mca-22 -iterations=500 -bottleneck-analysis` on it, and on a block of 16
     independent dot instructions of the same kind (the instruction's own peak in the model);
  4. reports cycles per iteration, MACs per cycle against that peak, accumulators, loads, stack
     accesses (spills) and the resources that bound the loop.

Paths: avx512vnni and avxvnni on x86 (-mcpu=cascadelake / alderlake), i8mm, dotprod and neon on
AArch64 (-mcpu=neoverse-v1), and dotprod without i8mm (sdot + xor 0x80, the cortex-a76 build)
on neoverse-n1 (the A76's server sibling; LLVM has no Cortex-A76 model). Figures are the
scheduling models' view, not measurements. With --write the table replaces the text between
`<!-- mca:begin -->` and `<!-- mca:end -->` in that file; otherwise it is printed."""
import os
import re
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
MCA = "llvm-mca-22"
M, K, N = 64, 512, 96

# name, qdqc flags, mca triple, mca cpu, dot-instruction regex, MACs per dot instruction,
# synthetic peak block (16 independent instructions), what the peak is
PATHS = [
    ("avx512vnni", ["--mcpu=cascadelake", "--isa=avx512vnni"], "x86_64-linux-gnu", "cascadelake",
     r"^vpdpbusd\s+%zmm", 64,
     ["vpdpbusd %%zmm30, %%zmm31, %%zmm%d" % i for i in range(16)], "vpdpbusd zmm"),
    ("avxvnni", ["--mcpu=alderlake", "--isa=avxvnni"], "x86_64-linux-gnu", "alderlake",
     r"^\{vex\}\s+vpdpbusd\s+%ymm", 32,
     ["{vex} vpdpbusd %%ymm14, %%ymm15, %%ymm%d" % i for i in range(14)], "{vex} vpdpbusd ymm"),
    ("i8mm", ["--target=aarch64-linux-gnu", "--mcpu=neoverse-v1", "--isa=i8mm"],
     "aarch64-linux-gnu", "neoverse-v1", r"^u?s?mmla\s", 32,
     ["usmmla v%d.4s, v0.16b, v1.16b" % (16 + i) for i in range(16)], "usmmla"),
    ("dotprod", ["--target=aarch64-linux-gnu", "--mcpu=neoverse-v1", "--isa=dotprod"],
     "aarch64-linux-gnu", "neoverse-v1", r"^(s|u|us|su)dot\s", 16,
     ["sudot v%d.4s, v0.16b, v1.4b[0]" % (16 + i) for i in range(16)], "sudot by element"),
    ("dotprod, no i8mm", ["--target=aarch64-linux-gnu", "--mcpu=neoverse-n1", "--isa=dotprod"],
     "aarch64-linux-gnu", "neoverse-n1", r"^(s|u)dot\s", 16,
     ["sdot v%d.4s, v0.16b, v1.4b[0]" % (16 + i) for i in range(16)], "sdot by element"),
    # neon: i16 products (mul .8h) widened into i32 accumulators (saddw/saddw2: 4 MACs each);
    # peak: the better of smlal and mul + 2 saddw per 8 MACs
    ("neon", ["--target=aarch64-linux-gnu", "--mcpu=neoverse-v1", "--isa=neon"],
     "aarch64-linux-gnu", "neoverse-v1", r"^(saddw2?|smlal2?|uaddw2?|umlal2?)\s", 4,
     ["smlal v%d.4s, v0.4h, v1.4h" % (16 + i) for i in range(16)], "smlal (= mul + 2 saddw)"),
]


def who():
    """The running script's name (mca_kernels or mca_dw, which imports these helpers)."""
    return os.path.splitext(os.path.basename(sys.argv[0]))[0]


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit("%s: %s failed:\n%s" % (who(), " ".join(cmd), r.stderr))
    return r.stdout


def write_block(path, section, text):
    """Replace the text between <!-- SECTION:begin --> and <!-- SECTION:end --> in path."""
    doc = open(path).read()
    a, b = "<!-- %s:begin -->\n" % section, "<!-- %s:end -->" % section
    if a not in doc or b not in doc:
        sys.exit("%s: %s has no %s ... %s markers" % (who(), path, a.strip(), b))
    doc = doc[:doc.index(a) + len(a)] + text + "\n" + doc[doc.index(b):]
    with open(path, "w") as f:
        f.write(doc)
    print("%s: wrote %s" % (who(), path))


def gen_graph(path):
    rng = np.random.default_rng(1)
    w = rng.integers(-127, 128, (K, N)).astype(np.int8)
    b = rng.integers(-1000, 1000, N).astype(np.int32)
    sc = ", ".join("%.6g" % x for x in rng.uniform(0.01, 0.02, N))
    zp = ", ".join("0" for _ in range(N))
    with open(path, "w") as f:
        f.write("graph @g(%%a: u8[%d,%d]{scale=0.04, zp=100}) -> u8[%d,%d]{scale=0.3, zp=3} {\n"
                "  %%w = const dense<i8[%d,%d]{axis=1, scale=[%s], zp=[%s]}, 0x%s>\n"
                "  %%b = const dense<i32[%d], 0x%s>\n"
                "  %%y = qmatmul %%a, %%w, %%b : u8[%d,%d]{scale=0.3, zp=3}\n"
                "  return %%y\n}\n" % (M, K, M, N, K, N, sc, zp, w.tobytes().hex().upper(), N,
                                      b.tobytes().hex().upper(), M, N))


def inner_loop(asm, dot_re, comment):
    """Lines of the single-block loop in model.gemm0 with the most dot instructions."""
    lines = asm.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith("model.gemm0:"))
    except StopIteration:
        sys.exit("mca_kernels: no model.gemm0 in the assembly")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(".Lfunc_end")),
               len(lines))
    body = [l.split(comment)[0].rstrip() for l in lines[start:end]]
    labels = {}
    best = None
    for i, l in enumerate(body):
        m = re.match(r"^(\.L\w+):", l)
        if m:
            labels[m.group(1)] = i
            continue
        t = l.strip()
        m = re.match(r"^(b\.\w+|b|cbnz|cbz|tbnz|tbz|j\w+)\s+(?:.*,\s*)?(\.L\w+)$", t)
        if not m or m.group(2) not in labels:
            continue
        lo = labels[m.group(2)]
        if any(re.match(r"^\.L\w+:", x) for x in body[lo + 1:i]):
            continue  # not a single block
        loop = [x.strip() for x in body[lo + 1:i + 1]
                if x.strip() and not x.strip().startswith(".")]
        ndot = sum(1 for x in loop if re.match(dot_re, x))
        if ndot and (best is None or ndot > best[0]):
            best = (ndot, loop)
    if not best:
        sys.exit("mca_kernels: no loop with %s in model.gemm0" % dot_re)
    return best[1]


def mca(path, triple, cpu, extra=()):
    out = sh([MCA, "-mtriple=" + triple, "-mcpu=" + cpu, "-iterations=500", *extra, path])
    it = int(re.search(r"Iterations:\s+(\d+)", out).group(1))
    cyc = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    rthr = float(re.search(r"Block RThroughput:\s+([\d.]+)", out).group(1))
    # resources: legend "[3]   - V1UnitL2", pressure per iteration row
    legend = re.findall(r"^\[([\d.]+)\]\s+-\s+(\S+)", out, re.M)
    m = re.search(r"Resource pressure per iteration:\n(.*)\n(.*)\n", out)
    keys = re.findall(r"\[([\d.]+)\]", m.group(1))
    vals = [0.0 if v == "-" else float(v) for v in m.group(2).split()]
    names = dict(legend)
    pressure = [(names.get(k, k), v) for k, v in zip(keys, vals)]
    bott = re.findall(r"^\s+-\s+(\S+)\s+\[\s*([\d.]+)%\s*\]", out, re.M)
    return it, cyc, rthr, pressure, bott, out


def analyse(qdqc, work, graph, path):
    name, flags, triple, cpu, dot_re, macs, peak_block, peak_what = path
    tag = re.sub(r"\W+", "_", name)
    asm = sh([qdqc, graph, "--passes=", "--emit=asm", "-o", "-"] + flags)
    loop = inner_loop(asm, dot_re, "#" if triple.startswith("x86") else "//")
    lp = os.path.join(work, tag + "_loop.s")
    with open(lp, "w") as f:
        f.write("\n".join(loop) + "\n")
    it, cyc, rthr, pressure, bott, out = mca(lp, triple, cpu, ["-bottleneck-analysis"])
    width = int(re.search(r"Dispatch Width:\s+(\d+)", out).group(1))
    uops = int(re.search(r"Total uOps:\s+(\d+)", out).group(1)) / it
    disp = "%.0f uops / %d-wide dispatch = %.1f cycles" % (uops, width, uops / width)
    pk = os.path.join(work, tag + "_peak.s")
    with open(pk, "w") as f:
        f.write("\n".join(x.replace("%%", "%") for x in peak_block) + "\n")
    pit, pcyc, _, _, _, _ = mca(pk, triple, cpu)
    ndot = sum(1 for x in loop if re.match(dot_re, x))
    accs = set()
    for x in loop:
        if re.match(dot_re, x):
            ops = re.split(r",\s*", x.split(None, 1)[1] if not x.startswith("{") else
                           x.split(None, 2)[2])
            accs.add(ops[-1] if triple.startswith("x86") else ops[0].split(".")[0])
    if triple.startswith("x86"):  # a memory operand that is not the destination
        loads = sum(1 for x in loop if re.search(r"\(%", x) and not re.search(r"\)$", x))
    else:
        loads = sum(1 for x in loop if re.match(r"^ld", x))
    spills = sum(1 for x in loop if re.search(r"\[sp\b|\(%rsp\)|\(%rbp\)", x))
    per_it = cyc / it
    mac_it = ndot * macs
    peak = len(peak_block) * macs / (pcyc / pit)
    top = max(v for _, v in pressure)
    busy = [n for n, v in pressure if v >= top - 0.05]
    return {
        "path": name, "cpu": cpu, "instrs": len(loop), "ndot": ndot, "macs": mac_it,
        "accs": len(accs), "loads": loads, "spills": spills, "cycles": per_it, "rthr": rthr,
        "mpc": mac_it / per_it, "peak": peak, "peak_what": peak_what,
        "busy": "%s (%.1f of %.2f cycles)" % (compress(busy), top, per_it),
        "dispatch": disp,
        "bott": ", ".join("%s %s%%" % (n, p) for n, p in bott if float(p) >= 1) or "none reported",
    }


def compress(names):
    """V1UnitV0, V1UnitV1, V1UnitV2, V1UnitV3 -> V1UnitV0-3"""
    out = []
    for n in names:
        m = re.match(r"^(.*?)(\d+)$", n)
        if out and m and out[-1][0] == m.group(1) and out[-1][2] + 1 == int(m.group(2)):
            out[-1][2] = int(m.group(2))
        elif m:
            out.append([m.group(1), int(m.group(2)), int(m.group(2))])
        else:
            out.append([n, None, None])
    return ", ".join(p if a is None else "%s%d" % (p, a) if a == b else "%s%d-%d" % (p, a, b)
                     for p, a, b in out)


def table(rows, qdqc):
    ver = sh([MCA, "--version"]).split("\n")
    ver = next((l.strip() for l in ver if "version" in l.lower()), "llvm-mca-22")
    out = ["Generated by `/usr/bin/python3 bench/mca_kernels.py --write docs/performance.md` "
           "(%s; qdqc %s). Kernel: the `model.gemm0` inner loop of a %dx%dx%d u8 x i8 GEMM "
           "(`--emit=asm`), 500 iterations." % (ver, git_rev(), M, K, N), "",
           "| path | mca -mcpu | loop instrs | dot instrs x MACs | accumulators | loads | "
           "stack accesses | cycles / iter (block RThroughput) | MAC / cycle | peak MAC / cycle "
           "(instruction) | of peak | busiest resources |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %s | %d | %d x %d | %d | %d | %d | %.2f (%.1f) | %.1f | %.0f (%s) | "
                   "%.0f%% | %s |" % (r["path"], r["cpu"], r["instrs"], r["ndot"],
                                      r["macs"] // r["ndot"], r["accs"], r["loads"], r["spills"],
                                      r["cycles"], r["rthr"], r["mpc"], r["peak"], r["peak_what"],
                                      100 * r["mpc"] / r["peak"], r["busy"]))
    out += ["", "Bottleneck analysis (`-bottleneck-analysis`: resources that held back at least 1 % "
            "of the cycles) and the dispatch bound:", ""]
    for r in rows:
        out.append("- %s: %s; %s" % (r["path"], r["bott"], r["dispatch"]))
    return "\n".join(out)


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" + uncommitted changes" if dirty else "")
    except OSError:
        return "?"


def main():
    argv = sys.argv[1:]
    qdqc = os.path.join(root, "build", "bin", "qdqc")
    work = "/tmp/qdqc_mca"
    write = None
    while argv:
        a = argv.pop(0)
        if a == "--qdqc":
            qdqc = argv.pop(0)
        elif a == "--work":
            work = argv.pop(0)
        elif a == "--write":
            write = argv.pop(0)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    os.makedirs(work, exist_ok=True)
    graph = os.path.join(work, "gemm.qir")
    gen_graph(graph)
    rows = [analyse(qdqc, work, graph, p) for p in PATHS]
    text = table(rows, qdqc)
    if not write:
        print(text)
        return 0
    write_block(write, "mca", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
