"""dynamic_batch_check.py [--aarch64] QDQC CC MODEL.onnx LO HI N...: compile MODEL once with its
symbol N in [LO, HI] (--dim N=LO..HI), run the object through model_run_shapes at each size n,
and compare every output bit for bit with `qdqc run` of the same inputs (which binds N = n and
compiles a static model) and with the reference interpreter. Prints one line per size.
--aarch64: the object for aarch64-linux-gnu (i8mm), the driver linked statically by CC (the
cross compiler) and run under qemu-aarch64 -cpu max; compared with the reference only.
--sym NAME: the run-time symbol (default N); --bind NAME=V: another symbol's size;
--qdqc-flag F: an option of the dynamic compile (e.g. --isa=avx2: another kernel path)."""
import json
import os
import re
import subprocess
import sys

import numpy as np

args = sys.argv[1:]
cross, sym, binds, extra = False, "N", {}, []
while args[0].startswith("--"):
    opt = args.pop(0)
    if opt == "--aarch64":
        cross = True
    elif opt == "--sym":  # the run-time symbol (default N)
        sym = args.pop(0)
    elif opt == "--bind":  # NAME=V: another symbol, bound for every run
        k, v = args.pop(0).split("=")
        binds[k] = int(v)
    elif opt == "--qdqc-flag":  # an option of the dynamic compile (e.g. --isa=avx2)
        extra.append(args.pop(0))
qdqc, cc, model, lo, hi = args[0], args[1], args[2], int(args[3]), int(args[4])
sizes = [int(s) for s in args[5:]]
src = os.path.dirname(os.path.abspath(__file__))
target = ["--target=aarch64-linux-gnu", "--mattr=+neon,+dotprod,+i8mm", "--isa=i8mm"] if cross else []
bind_args = [a for k, v in binds.items() for a in ("--dim", f"{k}={v}")]
subprocess.run([qdqc, model, "--dim", f"{sym}={lo}..{hi}", "-o", "model.o", "-o", "model.h"] +
               bind_args + target + extra, check=True)
subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I."] +
               (["-static"] if cross else []) +
               [os.path.join(src, "run_shapes_main.c"), "model.o", "-lm", "-o", "run_shapes"],
               check=True)
runner = ["qemu-aarch64", "-cpu", "max"] if cross else []

# inputs and outputs as the header describes them (works for ONNX and text IR alike)
hdr = open("model.h").read()
DT = {"f32": np.float32, "u8": np.uint8, "i8": np.int8, "i64": np.int64, "i32": np.int32,
      "bool": np.bool_, "u16": np.uint16, "i16": np.int16}


def io(kind, i):
    get = lambda key: re.search(r"#define MODEL_%s%d_%s (.*)" % (kind, i, key), hdr).group(1)
    dims = [int(v) for v in get("DIMS").strip("{}").split(",")]
    return dict(name=json.loads(get("NAME")), dt=DT[json.loads(get("ELEM_TYPE"))], dims=dims,
                axis=int(get("DIM_AXIS")), coef=int(get("DIM_COEF")))


nin = int(re.search(r"#define MODEL_NUM_INPUTS (\d+)", hdr).group(1))
nout = int(re.search(r"#define MODEL_NUM_OUTPUTS (\d+)", hdr).group(1))
inputs = [io("INPUT", i) for i in range(nin)]
outputs = [io("OUTPUT", i)["name"] for i in range(nout)]
rng = np.random.default_rng(7)
for n in sizes:
    args, files = [], []
    for k, v in enumerate(inputs):
        dt, shape = v["dt"], list(v["dims"])
        if v["axis"] >= 0:
            shape[v["axis"]] = v["coef"] * n
        if np.issubdtype(dt, np.floating):
            x = rng.standard_normal(shape).astype(dt)
        else:
            x = rng.integers(0, 2, shape).astype(dt)
        x.tofile(f"in{k}.bin")
        np.save(f"in{k}_{n}.npy", x)
        files.append(f"{v['name']}=in{k}_{n}.npy")
    r = subprocess.run(runner + ["./run_shapes", str(n)] + [f"in{k}.bin" for k in range(len(inputs))] +
                       [f"out{k}.bin" for k in range(len(outputs))],
                       capture_output=True, text=True)
    if r.returncode:
        print(f"n={n}: run_shapes failed {r.returncode}: {r.stdout} {r.stderr}")
        sys.exit(1)
    for eng in ("ref",) if cross else ("jit", "ref"):
        d = f"{eng}_{n}"
        cmd = [qdqc, "run", model, "--engine=" + eng, "--output-dir", d]
        for f in files:
            cmd += ["--input", f]
        subprocess.run(cmd, check=True, capture_output=True)
        for k, name in enumerate(outputs):
            want = np.load(os.path.join(d, [f for f in os.listdir(d) if f.endswith(".npy") and
                                            f[:-4] == name.replace("/", "_")][0]))
            got = np.fromfile(f"out{k}.bin", dtype=want.dtype)
            if got.size != want.size or got.tobytes() != want.ravel().tobytes():
                bad = int(np.count_nonzero(got != want.ravel())) if got.size == want.size else -1
                print(f"n={n}: output {name} differs from qdqc run --engine={eng} "
                      f"({bad} elements)")
                sys.exit(1)
    print(f"n={n}: {r.stdout.strip().splitlines()[1:]} identical to "
          f"{'ref' if cross else 'static jit and ref'}")
