#!/usr/bin/python3
"""cross.py QDQC [options] [MODEL...]: models compiled for a target this machine cannot run
directly, run as static binaries, outputs compared byte for byte with the reference interpreter.

  --arch aarch64    (default) --target=aarch64-linux-gnu, linked statically by
                    aarch64-linux-gnu-gcc, run under qemu-aarch64; configurations:
        i8mm     --mattr=+neon,+dotprod,+i8mm --isa=i8mm      qemu -cpu max
        dotprod  --mattr=+neon,+dotprod,+i8mm --isa=dotprod   qemu -cpu max (usdot for u8 A)
        neon     --mattr=+neon --isa=neon                     qemu -cpu cortex-a53 (ARMv8.0:
                                                              no dotprod, no i8mm)
        a76      --mcpu=cortex-a76 --isa=dotprod              qemu -cpu cortex-a76 (dotprod,
                                                              no i8mm: sdot + xor 0x80)
  --arch avxvnni    --target=x86_64-linux-gnu --mcpu=x86-64-v3 --mattr=+avxvnni --isa=avxvnni
                    (AVX2 + AVX-VNNI, no AVX-512: the `{vex} vpdpbusd` ymm path), emitted as
                    assembly, linked statically by gcc, run natively. qemu-user 7.2 executes
                    neither AVX-VNNI nor AVX-512 (docs/targets.md), so on a host without
                    AVX-VNNI but with AVX512-VNNI + AVX512VL the VEX dot products are re-encoded
                    as EVEX (`{vex} vpdp*` -> `{evex} vpdp*`: the same operation on the same ymm
                    registers); everything else is the code LLVM chose for the AVX-VNNI target.
                    The assembly must contain `{vex} vpdpbusd` (`{vex} vpdpwssd` for 16-bit
                    activations) wherever there is a GEMM kernel,
                    and no zmm, ymm16-31 or mask register. Configuration: avxvnni.

Variants: float (--requant=float), fixed (--requant=fixed), literal (--passes=: the graph as
imported, i.e. the float kernels); the reference runs with the same flags.

Which runs (a run = one model x one configuration x one variant):
  default   aarch64: every model in i8mm/float, i8mm/fixed, i8mm/literal and a76/float; the
            models with a GEMM kernel (a `model.gemmN` symbol; only these kernels depend on the
            ISA path) also in dotprod and neon, float and fixed; a quarter of the others in
            neon/float, rotating daily (--rotate K, K in 0..3, picks the quarter; the summary
            line names it). avxvnni: every model float, the GEMM models also fixed.
  --all     every model in every configuration and variant
  --config A,B / --variants V,W   exactly these for every model (defaults: all / float)
Models: every test/models/fixtures/*.onnx, or the MODELs given (the 224x224 example model,
examples/mobilenetv2_qdq.onnx, is too slow under qemu; the 32x32 mobilenetv2_* fixtures from the
same generator have its block types).

Inputs are random (numpy, seed 7 per model), the reference is `qdqc run --engine=ref` on the
same inputs (once per model and variant). The driver (cross_driver.c, compiled once per target
and linked with each model) fills the workspace and the outputs with garbage before the run.

Other options: -j N (parallel jobs, default: the number of CPUs), --keep DIR (keep the files),
-v (one line per run), --qemu PATH, --qemu-cpu CPU (instead of each configuration's),
--self-test (proves that a mismatch, a wrong reference and
a missing tool are reported, by running this script with QDQC_E2E_PERTURB / --inject-ref /
a missing qemu).

Exit 0 iff every run matched; 1 on a mismatch or any other failure; 77 (skip) when qemu, the
cross toolchain or (avxvnni) a host CPU that can run the code is missing. QDQC_REQUIRE_CROSS=1
(set by .ci/run) makes a missing tool an error (exit 1); a host CPU without AVX512-VNNI or
AVX-VNNI stays a skip."""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))

# name, qdqc flags, qemu -cpu (None: run natively)
CONFIGS = {
    "aarch64": [
        ("i8mm", ["--mattr=+neon,+dotprod,+i8mm", "--isa=i8mm"], "max"),
        ("dotprod", ["--mattr=+neon,+dotprod,+i8mm", "--isa=dotprod"], "max"),
        ("neon", ["--mattr=+neon", "--isa=neon"], "cortex-a53"),
        ("a76", ["--mcpu=cortex-a76", "--isa=dotprod"], "cortex-a76"),
    ],
    "avxvnni": [
        ("avxvnni", ["--mcpu=x86-64-v3", "--mattr=+avxvnni", "--isa=avxvnni"], None),
    ],
}
TRIPLE = {"aarch64": "aarch64-linux-gnu", "avxvnni": "x86_64-linux-gnu"}
CC = {"aarch64": "aarch64-linux-gnu-gcc", "avxvnni": "gcc"}
# run variants: the default pipeline with either requantization, or the graph as imported
# (literal QDQ semantics: the float kernels); the reference runs with the same flags
VARIANT = {"float": ["--requant=float"], "fixed": ["--requant=fixed"], "literal": ["--passes="]}
# The default (CI) plans: (every model, models with a GEMM kernel, a rotating quarter of the
# others) x (configuration, variant). Only the GEMM kernels depend on --isa; dotprod has the
# same target features as i8mm, so its other kernels are i8mm's code; neon's are not.
DEFAULT_PLAN = {
    "aarch64": ((("i8mm", "float"), ("i8mm", "fixed"), ("i8mm", "literal"), ("a76", "float")),
                (("dotprod", "float"), ("dotprod", "fixed"), ("neon", "float"), ("neon", "fixed")),
                (("neon", "float"),)),
    "avxvnni": ((("avxvnni", "float"),), (("avxvnni", "fixed"),), ()),
}
TYPES = {"f32": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
         "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "bool": np.bool_}


def usage(msg):
    print("cross.py: %s (usage: the comment at the top of %s)" % (msg, __file__), file=sys.stderr)
    sys.exit(2)


def host_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def missing_tools(arch, qemu):
    """What this machine lacks to build and run ARCH, or None. (kind, message): kind 'tool' is an
    error under QDQC_REQUIRE_CROSS=1, kind 'cpu' (the host cannot execute the code) always a skip."""
    if not shutil.which(CC[arch]):
        return "tool", "%s not found (tools/setup.sh)" % CC[arch]
    if arch == "aarch64":
        if not shutil.which(qemu):
            return "tool", "%s not found (tools/setup.sh: qemu-user)" % qemu
        if not os.path.exists("/usr/aarch64-linux-gnu/lib/libc.a"):
            return "tool", "/usr/aarch64-linux-gnu/lib/libc.a missing (libc6-dev-arm64-cross)"
    else:
        fl = host_flags()
        if "avx_vnni" not in fl and not {"avx512_vnni", "avx512vl", "avx2"} <= fl:
            return "cpu", "this CPU has neither AVX-VNNI nor AVX512-VNNI + AVX512VL"
    return None


RUN_TIMEOUT = 600  # seconds per binary run: a hang fails its run, not the whole test
TIMES = {}
TIMES_LOCK = threading.Lock()


def timed(stage, f, *args, **kw):
    """f(*args, **kw), its wall time added to TIMES[stage]."""
    t = time.time()
    try:
        return f(*args, **kw)
    finally:
        with TIMES_LOCK:
            TIMES[stage] = TIMES.get(stage, 0.0) + time.time() - t


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def parse_header(path):
    h = open(path).read()

    def io(kind, i):
        def d(field):
            m = re.search(r"#define MODEL_%s%d_%s (.*)" % (kind, i, field), h)
            return m.group(1).strip() if m else None
        name = d("NAME")
        dims = [int(x) for x in (d("DIMS") or "{}").strip("{}").split(",") if x.strip()]
        return {"name": name[1:-1] if name else "", "type": (d("ELEM_TYPE") or '""')[1:-1],
                "dims": dims if d("RANK") != "0" else [],  # a scalar's DIMS is {1} (C)
                "bytes": int((d("BYTES") or "0").rstrip("u"))}
    nin = int(re.search(r"#define MODEL_NUM_INPUTS (\d+)", h).group(1))
    nout = int(re.search(r"#define MODEL_NUM_OUTPUTS (\d+)", h).group(1))
    return [io("INPUT", i) for i in range(nin)], [io("OUTPUT", i) for i in range(nout)]


def npy_name(name):
    """qdqc run's file of an output (tools/qdqc/run_cmd.c: output_file_names; the _2, _3
    suffixes of colliding names are not reproduced)."""
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name[:200])
    s = "".join("_" if c == "." and (i == 0 or name[i - 1] == ".") else c for i, c in enumerate(s))
    return (s or "output") + ".npy"


class Model:
    def __init__(self, path, work):
        self.path = path
        self.name = os.path.basename(path)[:-5] if path.endswith(".onnx") else os.path.basename(path)
        self.dir = os.path.join(work, self.name)
        self.inputs = self.outputs = None
        self.has_gemm = None
        self.error = None


def prepare(qdqc, arch, m, variants):
    """Header, random inputs and the reference outputs of each variant."""
    os.makedirs(m.dir, exist_ok=True)
    hdr = os.path.join(m.dir, "model.h")
    flags = CONFIGS[arch][0][1]
    r = timed("header", sh, [qdqc, m.path, "--target=" + TRIPLE[arch]] + flags +
              ["--name=model", "--emit=header", "-o", hdr])
    if r.returncode:
        m.error = "header: " + (r.stdout + r.stderr).strip()[:800]
        return
    m.inputs, m.outputs = parse_header(hdr)
    rng = np.random.default_rng(7)
    args = []
    for i, inp in enumerate(m.inputs):
        t = TYPES[inp["type"]]
        if np.issubdtype(t, np.floating):
            a = rng.uniform(-1, 1, inp["dims"]).astype(t)
        elif t is np.bool_:
            a = rng.integers(0, 2, inp["dims"]).astype(t)
        else:
            info = np.iinfo(t)
            a = rng.integers(max(info.min, -128), min(info.max, 255) + 1, inp["dims"]).astype(t)
        np.save(os.path.join(m.dir, "in%d.npy" % i), a)
        a.tofile(os.path.join(m.dir, "in%d.bin" % i))
        args += ["--input", "%s=%s" % (inp["name"], os.path.join(m.dir, "in%d.npy" % i))]
    for v in variants:
        r = timed("reference", sh, [qdqc, "run", m.path, "--engine=ref"] + VARIANT[v] +
                  ["--output-dir", os.path.join(m.dir, "ref-" + v)] + args)
        if r.returncode:
            m.error = "reference (%s): %s" % (v, (r.stdout + r.stderr).strip()[:800])
            return


def vex_to_evex(asm):
    """`{vex} vpdpbusd ...` -> `{evex} vpdpbusd ...` (all AVX-VNNI forms: vpdpbusd(s),
    vpdpwssd(s)); returns the new text and how many lines changed."""
    return re.subn(r"\{vex\}(\s+vpdp(?:bus|wss)ds?\b)", r"{evex}\1", asm)


def build(qdqc, arch, m, cfg, variant, driver_o, native_vnni):
    """Compile, (re-encode,) link; returns (binary, None) or (None, error)."""
    name, flags, _ = cfg
    d = os.path.join(m.dir, "%s-%s" % (name, variant))
    os.makedirs(d, exist_ok=True)
    base = [qdqc, m.path, "--target=" + TRIPLE[arch]] + flags + VARIANT[variant] + ["--name=model"]
    obj = os.path.join(d, "model.o")
    if arch == "aarch64":
        r = timed("compile", sh, base + ["-o", obj])
        if r.returncode:
            return None, "compile: " + (r.stdout + r.stderr).strip()[:800]
        if variant == "float":
            m.has_gemm = re.search(rb"model\.gemm\d", open(obj, "rb").read()) is not None
    else:
        r = timed("compile", sh, base + ["--emit=asm", "-o", "-"])
        if r.returncode:
            return None, "compile: " + r.stderr.strip()[:800]
        asm = r.stdout
        # 8-bit activations: vpdpbusd; 16-bit (A16W8): vpdpwssd
        vex = len(re.findall(r"\{vex\}\s+vpdp(?:busd|wssd)\s", asm))
        bad = re.findall(r"%zmm\d+|%[xy]mm(?:1[6-9]|2\d|3[01])\b|%k[0-7]\b", asm)
        if bad:
            return None, "AVX-512 register in the AVX-VNNI build: " + bad[0]
        gemm = re.search(r"model\.gemm\d", asm) is not None
        if variant == "float":
            m.has_gemm = gemm
        if gemm and not vex:
            return None, "a GEMM kernel but no `{vex} vpdpbusd` / `{vex} vpdpwssd` in the assembly"
        if not native_vnni:
            asm, _ = vex_to_evex(asm)
        with open(os.path.join(d, "model.s"), "w") as f:
            f.write(asm)
        r = timed("assemble", sh, [CC[arch], "-c", os.path.join(d, "model.s"), "-o", obj])
        if r.returncode:
            return None, "assemble: " + r.stderr.strip()[:800]
    exe = os.path.join(d, "driver")
    r = timed("link", sh, [CC[arch], "-static", driver_o, obj, "-lm", "-o", exe])
    if r.returncode:
        return None, "link: " + r.stderr.strip()[:800]
    return exe, None


def run_one(qdqc, arch, m, cfg, variant, driver_o, native_vnni, qemu):
    """Returns (ok, message)."""
    exe, err = build(qdqc, arch, m, cfg, variant, driver_o, native_vnni)
    if err:
        return False, err
    d = os.path.dirname(exe)
    cmd = ([qemu, "-cpu", cfg[2]] if cfg[2] else []) + [exe, str(len(m.inputs))]
    cmd += [os.path.join(m.dir, "in%d.bin" % i) for i in range(len(m.inputs))]
    cmd += [str(len(m.outputs))]
    for i, o in enumerate(m.outputs):
        cmd += [os.path.join(d, "o%d.bin" % i), str(o["bytes"])]
    try:  # cwd: where a crashing qemu leaves its core file
        r = timed("run", sh, cmd, cwd=d, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, "driver did not finish in %d s" % RUN_TIMEOUT
    if r.returncode:
        return False, "driver exited %d: %s" % (r.returncode, (r.stdout + r.stderr).strip()[:300])
    msgs = []
    for i, o in enumerate(m.outputs):
        want = np.load(os.path.join(m.dir, "ref-" + variant, npy_name(o["name"])))
        got = open(os.path.join(d, "o%d.bin" % i), "rb").read()
        if want.nbytes != o["bytes"] or len(got) != want.nbytes:
            msgs.append("output %s: %d bytes, reference %d" % (o["name"], len(got), want.nbytes))
            continue
        if got == want.tobytes():
            continue
        g = np.frombuffer(got, dtype=want.dtype).reshape(want.shape)
        gb = g.reshape(-1).view(np.uint8).reshape(want.size, -1)
        wb = np.ascontiguousarray(want).reshape(-1).view(np.uint8).reshape(want.size, -1)
        diff = np.flatnonzero((gb != wb).any(axis=1))
        k = int(diff[0])
        msgs.append("output %s: %d of %d elements differ (first at flat index %d: got %s, "
                    "reference %s)" % (o["name"], diff.size, want.size, k, g.reshape(-1)[k],
                                       want.reshape(-1)[k]))
    return not msgs, "; ".join(msgs)


def plan(arch, models, mode, configs, variants, rotate):
    """Runs [(model, cfg, variant)] now, and a function giving the runs that depend on their
    results (the default plans pick models by has_gemm), or None."""
    cfgs = {c[0]: c for c in CONFIGS[arch]}
    if mode == "explicit":
        return [(m, cfgs[c], v) for m in models for c in configs for v in variants], None
    if mode == "all":
        return [(m, c, v) for m in models for c in CONFIGS[arch] for v in VARIANT], None
    first, gemm_runs, rot_runs = DEFAULT_PLAN[arch]

    def second():
        gemm = [m for m in models if m.has_gemm]
        others = [m for m in models if m.has_gemm is False]
        return ([(m, cfgs[c], v) for m in gemm for c, v in gemm_runs] +
                [(m, cfgs[c], v) for m in others[rotate::4] for c, v in rot_runs])
    return [(m, cfgs[c], v) for m in models for c, v in first], second


def self_test(qdqc):
    me = [sys.executable, os.path.abspath(__file__), qdqc]
    model = os.path.join(root, "test", "models", "fixtures", "conv3x3_pc_i8.onnx")
    env = dict(os.environ)
    env.pop("QDQC_E2E_PERTURB", None)
    env.pop("QDQC_REQUIRE_CROSS", None)
    checks = []

    def expect(what, args, rc, patterns, extra_env=None):
        e = dict(env)
        e.update(extra_env or {})
        r = subprocess.run(me + args, capture_output=True, text=True, env=e)
        out = r.stdout + r.stderr
        ok = r.returncode == rc and all(re.search(p, out, re.M) for p in patterns)
        checks.append(ok)
        print("%s %s: exit %d (want %d)%s" % ("ok" if ok else "FAIL", what, r.returncode, rc,
                                             "" if ok else "\n" + out.strip()))

    req = {"QDQC_REQUIRE_CROSS": "1"}
    miss = missing_tools("aarch64", "qemu-aarch64")
    if miss:
        print("self-test needs the AArch64 tools: %s" % miss[1])
        return 1 if os.environ.get("QDQC_REQUIRE_CROSS") == "1" else 77
    diff = r"output \S+: 1 of \d+ elements differ \(first at flat index \d+: got "
    expect("aarch64 control", ["--config", "i8mm,a76", "--variants", "float,fixed", model], 0,
           [r"^aarch64: 4 runs over 1 models, 0 failed"])
    expect("aarch64 driver output perturbed", ["--config", "i8mm,a76", model], 1,
           [r"^FAIL conv3x3_pc_i8 i8mm/float: " + diff, r"^FAIL conv3x3_pc_i8 a76/float: " + diff,
            r"^aarch64: 2 runs over 1 models, 2 failed"], {"QDQC_E2E_PERTURB": "3"})
    expect("aarch64 wrong reference", ["--config", "neon", "--variants", "fixed", "--inject-ref",
                                       model], 1,
           [r"^FAIL conv3x3_pc_i8 neon/fixed: " + diff, r"^aarch64: 1 runs over 1 models, 1 failed"])
    expect("aarch64 i8mm build on a CPU without i8mm", ["--config", "i8mm", "--qemu-cpu",
                                                         "cortex-a76", model], 1,
           [r"^FAIL conv3x3_pc_i8 i8mm/float: driver exited -?\d+: qemu: uncaught target signal 4 "
            r"\(Illegal instruction\)"])
    expect("missing qemu, QDQC_REQUIRE_CROSS=1", ["--qemu", "/nonexistent/qemu-aarch64", model],
           1, [r"/nonexistent/qemu-aarch64 not found .*; required \(QDQC_REQUIRE_CROSS=1\)"], req)
    expect("missing qemu, no QDQC_REQUIRE_CROSS", ["--qemu", "/nonexistent/qemu-aarch64", model],
           77, [r"/nonexistent/qemu-aarch64 not found .*; skip"])
    if not missing_tools("avxvnni", None):
        expect("avxvnni driver output perturbed", ["--arch", "avxvnni", "--variants", "float",
                                                   model], 1,
               [r"^FAIL conv3x3_pc_i8 avxvnni/float: " + diff], {"QDQC_E2E_PERTURB": "0"})
    print("self-test: %d checks, %d failed" % (len(checks), checks.count(False)))
    return 0 if all(checks) else 1


def main():
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        usage("first argument: the qdqc binary")
    qdqc = os.path.abspath(argv.pop(0))
    arch, mode, configs, variants, jobs, keep, verbose = "aarch64", "default", None, None, \
        os.cpu_count() or 1, None, False
    qemu, inject_ref, models = None, False, []
    rotate = int(time.time() // 86400) % 4
    qemu_cpu = None
    while argv:
        a = argv.pop(0)
        if a == "--arch":
            arch = argv.pop(0)
        elif a == "--all":
            mode = "all"
        elif a == "--config":
            configs = argv.pop(0).split(",")
        elif a == "--variants":
            variants = argv.pop(0).split(",")
        elif a == "-j":
            jobs = int(argv.pop(0))
        elif re.fullmatch(r"-j\d+", a):
            jobs = int(a[2:])
        elif a == "--keep":
            keep = os.path.abspath(argv.pop(0))
        elif a == "-v":
            verbose = True
        elif a == "--qemu":
            qemu = argv.pop(0)
        elif a == "--qemu-cpu":
            qemu_cpu = argv.pop(0)
        elif a == "--rotate":
            rotate = int(argv.pop(0)) % 4
        elif a == "--inject-ref":
            inject_ref = True
        elif a == "--self-test":
            return self_test(qdqc)
        elif a.startswith("-"):
            usage("unknown option " + a)
        else:
            models.append(os.path.abspath(a))
    if arch not in CONFIGS:
        usage("--arch must be aarch64 or avxvnni")
    names = [c[0] for c in CONFIGS[arch]]
    if configs or variants:
        mode = "explicit"
        configs = configs or names
        variants = variants or ["float"]
        for c in configs:
            if c not in names:
                usage("unknown configuration %s for %s (%s)" % (c, arch, ", ".join(names)))
        for v in variants:
            if v not in VARIANT:
                usage("--variants: float, fixed, literal")
    qemu = qemu or "qemu-aarch64"
    miss = missing_tools(arch, qemu)
    if miss:
        if miss[0] == "tool" and os.environ.get("QDQC_REQUIRE_CROSS") == "1":
            print("cross.py: %s; required (QDQC_REQUIRE_CROSS=1)" % miss[1])
            return 1
        print("cross.py: %s; skip" % miss[1])
        return 77
    native_vnni = "avx_vnni" in host_flags()
    if not models:
        models = sorted(glob.glob(os.path.join(root, "test", "models", "fixtures", "*.onnx")))
    t0 = time.time()
    work = keep or tempfile.mkdtemp(prefix="qdqc-cross-")
    os.makedirs(work, exist_ok=True)
    results = []
    try:
        driver_o = os.path.join(work, "driver-%s.o" % arch)
        r = sh([CC[arch], "-std=c11", "-O1", "-c", os.path.join(here, "cross_driver.c"), "-o",
                driver_o])
        if r.returncode:
            print("cross.py: cannot compile the driver: " + r.stderr.strip())
            return 1
        ms = [Model(p, work) for p in models]
        if qemu_cpu:
            CONFIGS[arch] = [(n, f, qemu_cpu if c else c) for n, f, c in CONFIGS[arch]]
        runs, more = plan(arch, ms, mode, configs, variants, rotate)
        later = [v for _, v in DEFAULT_PLAN[arch][1] + DEFAULT_PLAN[arch][2]] if more else []
        vs = [v for v in VARIANT if v in later or any(r[2] == v for r in runs)]

        def one(run):
            m, cfg, v = run
            if m.error:
                return run, False, m.error
            return (run,) + run_one(qdqc, arch, m, cfg, v, driver_o, native_vnni, qemu)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            list(ex.map(lambda m: prepare(qdqc, arch, m, vs), ms))
            if inject_ref:
                for m in ms:
                    for v in vs:
                        p = os.path.join(m.dir, "ref-" + v, npy_name(m.outputs[0]["name"]))
                        a = np.load(p)
                        a.reshape(-1).view(np.uint8)[0] ^= 1
                        np.save(p, a)
            # biggest models first, so that the two workers finish together
            runs.sort(key=lambda r: -os.path.getsize(r[0].path))
            results += list(ex.map(one, runs))
            if more:
                runs = more()
                runs.sort(key=lambda r: -os.path.getsize(r[0].path))
                results += list(ex.map(one, runs))
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    fails = 0
    per = {}
    results.sort(key=lambda x: (x[0][0].name, x[0][1][0], x[0][2]))
    for (m, cfg, v), ok, msg in results:
        key = "%s/%s" % (cfg[0], v)
        per.setdefault(key, [0, 0])
        per[key][0] += 1
        if not ok:
            fails += 1
            per[key][1] += 1
            print("FAIL %s %s: %s" % (m.name, key, msg))
        elif verbose:
            print("ok %s %s%s" % (m.name, key, " (qemu -cpu %s)" % cfg[2] if cfg[2] else ""))
    for key in sorted(per):
        print("%-16s %3d models, %d failed" % (key, per[key][0], per[key][1]))
    print("time (s, summed over %d jobs): %s" % (jobs, ", ".join(
        "%s %.0f" % (k, TIMES[k]) for k in sorted(TIMES))))
    print("%s: %d runs over %d models, %d failed (%.0f s)%s" % (
        arch, len(results), len(models), fails, time.time() - t0,
        ", rotation %d of 4 (--rotate %d)" % (rotate, rotate) if mode == "default" else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
