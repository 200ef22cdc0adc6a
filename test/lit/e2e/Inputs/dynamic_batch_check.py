"""dynamic_batch_check.py [--aarch64] QDQC CC MODEL.onnx LO HI N...: compile MODEL once with its
symbol N in [LO, HI] (--dim N=LO..HI), run the object through model_run_shapes at each size n,
and compare every output bit for bit with `qdqc run` of the same inputs (which binds N = n and
compiles a static model) and with the reference interpreter. Prints one line per size.
--aarch64: the object for aarch64-linux-gnu (i8mm), the driver linked statically by CC (the
cross compiler) and run under qemu-aarch64 -cpu max; compared with the reference only."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper

args = sys.argv[1:]
cross = args[0] == "--aarch64"
if cross:
    args = args[1:]
qdqc, cc, model, lo, hi = args[0], args[1], args[2], int(args[3]), int(args[4])
sizes = [int(s) for s in args[5:]]
src = os.path.dirname(os.path.abspath(__file__))
target = ["--target=aarch64-linux-gnu", "--mattr=+neon,+dotprod,+i8mm", "--isa=i8mm"] if cross else []
subprocess.run([qdqc, model, "--dim", f"N={lo}..{hi}", "-o", "model.o", "-o", "model.h"] + target,
               check=True)
subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I."] +
               (["-static"] if cross else []) +
               [os.path.join(src, "run_shapes_main.c"), "model.o", "-lm", "-o", "run_shapes"],
               check=True)
runner = ["qemu-aarch64", "-cpu", "max"] if cross else []

m = onnx.load(model)
inits = {i.name for i in m.graph.initializer}
inputs = [v for v in m.graph.input if v.name not in inits]
outputs = [v.name for v in m.graph.output]
rng = np.random.default_rng(7)
for n in sizes:
    args, files = [], []
    for k, v in enumerate(inputs):
        tt = v.type.tensor_type
        dt = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tt.elem_type]
        shape = [n if d.dim_param else d.dim_value for d in tt.shape.dim]
        if np.issubdtype(dt, np.floating):
            x = rng.standard_normal(shape).astype(dt)
        else:
            x = rng.integers(0, 2, shape).astype(dt)
        x.tofile(f"in{k}.bin")
        np.save(f"in{k}_{n}.npy", x)
        files.append(f"{v.name}=in{k}_{n}.npy")
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
