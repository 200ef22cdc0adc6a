#!/usr/bin/python3
"""mca_dw.py [--qdqc PATH] [--work DIR] [--only TEXT] [--write docs/performance.md]

Static throughput of qdqc's depthwise convolution kernels on AArch64 with llvm-mca-22 (no ARM
machine is available to time them; bench/mca_kernels.py does the same for the GEMM
microkernels). For a representative set of bench/dw_bench.py's shapes (each kernel size x
stride, dilation, small maps), in both of its forms (`nchw`: the conv alone, the NCHW kernel;
`nhwc`: between two 1x1 convs, the NHWC kernel), and for two builds:

  neoverse-v1   `qdqc --target=aarch64-linux-gnu --mcpu=neoverse-v1` (dotprod + i8mm),
                llvm-mca -mcpu=neoverse-v1, nominal clock 2.6 GHz (AWS Graviton3)
  cortex-a76    `qdqc --target=aarch64-linux-gnu --mcpu=cortex-a76` (dotprod, no i8mm),
                llvm-mca -mcpu=neoverse-n1 (LLVM has no Cortex-A76 model; the N1 is its server
                sibling), nominal clock 2.5 GHz (AWS Graviton2)

it compiles the graph with `--emit=asm`, takes the depthwise node's function (the function,
other than the GEMM kernels, with the most multiply-accumulate instructions) and in it the
interior block: the basic block with the most multiply-accumulate lane products (on maps of
more than 16 output columns a register-blocked loop body over full vectors; on small maps the
per-channel block, computed once per channel, which mca repeats as if it were a loop). It runs
`llvm-mca-22 -iterations=200` on that block and divides the useful MACs of one pass by the
cycles per iteration. Useful MACs = the lane products of the block's instructions (mla / smlal
/ umlal .4s: 4, sdot / udot / usdot .4s: 16) times the share that is real taps: a quad step (4
taps per 32-bit lane, sdot) covers KW taps with 4 x ceil(KW / 4) slots (NHWC: the KH x KW
taps with 4 x ceil(KH x KW / 4); NHWC by kernel columns, the form whose function reads a
constant named dwqc: the first rc rows (3x3: 3, else a multiple of 4) by kernel columns, KW x
4 x ceil(rc / 4) slots, the other rows' taps in order, 4 x ceil((KH - rc) x KW / 4)), a
stride-2 pair step
2 x ceil(KW / 2), and an NCHW row of OW columns is ceil(OW / 4) vectors of 4 lanes (interleaved
quad form: ceil(OW / g) groups of g = 16 / stride columns), the node's average. The plane
copy, the blocks of the last rows and column groups and the per-channel set-up are not
modelled: the figure is the kernel's interior rate. The peak is llvm-mca's throughput of 16 independent `sdot` .4s on the
same -mcpu. These are the scheduling models' figures, not measurements.

With --write the table replaces the text between `<!-- mcadw:begin -->` and
`<!-- mcadw:end -->` in that file; otherwise it is printed."""
import math
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, here)
import dw_bench  # noqa: E402
from mca_kernels import git_rev, sh, write_block  # noqa: E402

MCA = "llvm-mca-22"
ITER = 200

# one per kernel size x stride, the dilated 3x3, and maps of 7x7 (vectors of 4 lanes overhang
# a 7-column row)
SHAPES = [
    "mnv2 144x56 3x3 s1",
    "mnv2 144x56 3x3 s2",
    "mnv2 960x7 3x3 s1",
    "effb0 240x28 5x5 s1",
    "effb0 144x56 5x5 s2",
    "effb0 1152x7 5x5 s1",
    "cnxt 96x56 7x7",
    "cnxt 768x7 7x7",
    "deeplab 576x28 3x3 d2",
]

# build, qdqc flags, mca cpu, nominal GHz
CPUS = [
    ("neoverse-v1", ["--target=aarch64-linux-gnu", "--mcpu=neoverse-v1"], "neoverse-v1", 2.6),
    ("cortex-a76", ["--target=aarch64-linux-gnu", "--mcpu=cortex-a76"], "neoverse-n1", 2.5),
]

# multiply-accumulate instructions into int32 lanes: lane products per instruction
MACS = [
    (re.compile(r"^(s|u|us)dot\s+v\d+\.4s"), 16),
    (re.compile(r"^(s|u)ml[as]l2?\s+v\d+\.4s"), 4),
    (re.compile(r"^ml[as]\s+v\d+\.4s"), 4),
]


def macs_of(ins):
    for rx, m in MACS:
        if rx.match(ins):
            return m
    return 0


def functions(asm):
    """{name: [instruction or label lines]} of the global functions (not .L labels)."""
    fns, cur = {}, None
    for line in asm.splitlines():
        line = line.split("//")[0].rstrip()
        m = re.match(r"^([A-Za-z_][\w.]*):", line)
        if m:
            cur = m.group(1)
            fns[cur] = []
            continue
        if line.startswith(".Lfunc_end"):
            cur = None
            continue
        if cur is not None and line.strip():
            fns[cur].append(line)
    return fns


def blocks(body):
    """Basic blocks: split at labels and after branches."""
    out, cur = [], []
    for line in body:
        t = line.strip()
        if re.match(r"^\.L\w+:", t):
            if cur:
                out.append(cur)
            cur = []
            continue
        if t.startswith("."):
            continue
        cur.append(t)
        if re.match(r"^(b\.\w+|b|cbnz|cbz|tbnz|tbz|ret|br)\b", t):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def dw_block(asm):
    fns = functions(asm)
    cand = [(sum(1 for x in b if macs_of(x.strip())), n) for n, b in fns.items()
            if not n.startswith("model.gemm")]
    cnt, name = max(cand)
    if not cnt:
        sys.exit("mca_dw: no multiply-accumulate outside the GEMM kernels")
    bl = max(blocks(fns[name]), key=lambda b: sum(macs_of(x) for x in b))
    return name, bl


def dw_bench_fn(asm, name):
    """The lines of function name in asm."""
    return functions(asm)[name]


def useful_share(shape, form, block, cols=False):
    """Share of the block's lane products that are real taps (see the module comment)."""
    _, c, hw, k, s, dil, _ = shape
    quad = any(re.match(r"^(s|u|us)dot\s", x) for x in block)
    tbl = any(re.match(r"^tbl\s", x) for x in block)
    kind = "widening"
    if quad and form == "nhwc" and cols:  # rc rows by kernel columns, the other rows' taps in order
        rc = 3 if k == 3 else k // 4 * 4
        taps = k * k / (4 * k * math.ceil(rc / 4) + 4 * math.ceil((k - rc) * k / 4))
        kind = "quad, columns"
    elif quad and form == "nhwc":  # the kernel's taps in order, in groups of 4
        taps = k * k / (4 * math.ceil(k * k / 4))
        kind = "quad, zip"
    elif quad:
        taps = k / (4 * math.ceil(k / 4))
        kind = "quad, tbl" if tbl else "quad, interleaved"
    elif form == "nchw" and s == 2 and dil == 1:
        taps = k / (2 * math.ceil(k / 2))
    else:
        taps = 1.0
    cols = 1.0
    if form == "nchw":  # the node's computed columns: vectors of 4, interleaved groups of 16 / s
        ow = (hw + 2 * (dil * (k - 1) // 2) - dil * (k - 1) - 1) // s + 1
        g = 4 * (4 // s) if quad and not tbl else 4
        cols = ow / (g * math.ceil(ow / g))
    return taps * cols, kind


def mca(path, cpu):
    out = sh([MCA, "-mtriple=aarch64-linux-gnu", "-mcpu=" + cpu, "-iterations=%d" % ITER, path])
    it = int(re.search(r"Iterations:\s+(\d+)", out).group(1))
    cyc = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    legend = dict(re.findall(r"^\[([\d.]+)\]\s+-\s+(\S+)", out, re.M))
    m = re.search(r"Resource pressure per iteration:\n(.*)\n(.*)\n", out)
    keys = re.findall(r"\[([\d.]+)\]", m.group(1))
    vals = [0.0 if v == "-" else float(v) for v in m.group(2).split()]
    pressure = sorted(((v, legend.get(k, k)) for k, v in zip(keys, vals)), reverse=True)
    return cyc / it, pressure


def peak(work, cpu):
    p = os.path.join(work, "peak_%s.s" % cpu)
    with open(p, "w") as f:
        f.write("\n".join("sdot v%d.4s, v0.16b, v1.16b" % (16 + i) for i in range(16)) + "\n")
    cyc, _ = mca(p, cpu)
    return 16 * 16 / cyc


def analyse(qdqc, work, shape, form, build):
    bname, flags, cpu, ghz = build
    text, macs, _ = dw_bench.dw_graph(shape, form == "nhwc")
    tag = re.sub(r"\W+", "_", "%s_%s_%s" % (shape[0], form, bname))
    g = os.path.join(work, tag + ".qir")
    with open(g, "w") as f:
        f.write(text)
    asm = sh([qdqc, g, "--emit=asm", "-o", "-"] + flags)
    fn, bl = dw_block(asm)
    # the NHWC quad form by kernel columns reads its weight quads from a constant named dwqc
    cols = "dwqc" in "\n".join(dw_bench_fn(asm, fn))
    lp = os.path.join(work, tag + "_block.s")
    with open(lp, "w") as f:
        f.write("\n".join(x for x in bl if not re.match(r"^(b\.\w+|b|cbnz|cbz)\b", x)) + "\n")
    cyc, pressure = mca(lp, cpu)
    slots = sum(macs_of(x) for x in bl)
    share, kind = useful_share(shape, form, bl, cols)
    mpc = slots * share / cyc
    top = pressure[0][0]
    busy = []
    for v, n in pressure:
        if v >= top - 0.05 and n not in busy:
            busy.append(n)
    mix = {}
    for x in bl:
        op = x.split()[0]
        if macs_of(x):
            mix[op] = mix.get(op, 0) + 1
    return {"shape": shape[0], "form": form, "build": bname, "cpu": cpu, "ghz": ghz, "fn": fn,
            "instrs": len(bl), "mix": ", ".join("%d %s" % (n, o) for o, n in sorted(mix.items())),
            "kind": kind, "cycles": cyc, "useful": slots * share, "mpc": mpc,
            "gops": 2 * mpc * ghz, "busy": "%s (%.1f of %.1f cycles)" % (
                ", ".join(busy), top, cyc)}


def table(rows, peaks):
    ver = sh([MCA, "--version"]).split("\n")
    ver = next((l.strip() for l in ver if "version" in l.lower()), "llvm-mca-22")
    out = ["Generated by `/usr/bin/python3 bench/mca_dw.py --write docs/performance.md` (%s; qdqc %s)."
           " Interior block of the depthwise node, %d iterations; GOPS = 2 x MAC/cycle x the "
           "nominal clock (neoverse-v1 2.6 GHz, neoverse-n1 2.5 GHz); sdot peak: 16 independent "
           "`sdot` .4s in the same model (%s)." % (
               ver, git_rev(), ITER, ", ".join("%s %.0f MAC/cycle" % kv for kv in peaks.items())),
           "",
           "| shape | form | qdqc --mcpu (mca -mcpu) | kernel | block: instrs, multiply-adds | "
           "cycles / pass | useful MACs / pass | MAC / cycle | GOPS | of sdot peak | busiest resources |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %s | %s (%s) | %s | %d: %s | %.1f | %.0f | %.1f | %.0f | %.0f%% | %s |" % (
            r["shape"], r["form"], r["build"], r["cpu"], r["kind"], r["instrs"], r["mix"],
            r["cycles"], r["useful"], r["mpc"], r["gops"], 100 * r["mpc"] / peaks[r["cpu"]],
            r["busy"]))
    return "\n".join(out)


def main():
    argv = sys.argv[1:]
    qdqc = os.path.join(root, "build", "bin", "qdqc")
    work = "/tmp/qdqc_mca_dw"
    write = only = None
    while argv:
        a = argv.pop(0)
        if a == "--qdqc":
            qdqc = argv.pop(0)
        elif a == "--work":
            work = argv.pop(0)
        elif a == "--only":
            only = argv.pop(0)
        elif a == "--write":
            write = argv.pop(0)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    os.makedirs(work, exist_ok=True)
    shapes = {s[0]: s for s in dw_bench.DW}
    peaks = {cpu: peak(work, cpu) for _, _, cpu, _ in CPUS}
    rows = []
    for b in CPUS:
        for name in SHAPES:
            if only and only not in name:
                continue
            for form in ("nchw", "nhwc"):
                rows.append(analyse(qdqc, work, shapes[name], form, b))
                if not write:
                    r = rows[-1]
                    print("%-24s %s %-12s %-12s %6.1f cyc %7.0f MAC %5.1f MAC/c %5.0f GOPS  %s" % (
                        r["shape"], r["form"], r["build"], r["kind"], r["cycles"], r["useful"],
                        r["mpc"], r["gops"], r["mix"]), flush=True)
    text = table(rows, peaks)
    if not write:
        print(text)
        return 0
    write_block(write, "mcadw", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
