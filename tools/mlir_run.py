#!/usr/bin/env python3
"""mlir_run.py: run a tosa/linalg MLIR function (qdqc --emit=mlir, or a quant + tosa model)
with the upstream MLIR tools, on .npy inputs, and write its results as .npy files.

usage: mlir_run.py MODEL.mlir --input X.npy [--input Y.npy ...] --output-dir DIR
                   [--names a,b] [--func NAME] [--keep DIR] [-v]

The first func.func of MODEL.mlir (or --func) is called from a generated @main with the inputs
as constants (in argument order); each result is bit-cast / extended to i32 and printed with
printMemrefI32, so the .npy files written (DIR/NAME.npy, names from --names or result0, ...)
are bit-exact. Lowering (printed with -v):
  mlir-opt-22 --lower-quant-ops --tosa-to-linalg-pipeline --tosa-to-tensor
              --tosa-to-arith=include-apply-rescale=true --convert-elementwise-to-linalg
              --canonicalize
  mlir-opt-22 --one-shot-bufferize=bufferize-function-boundaries --buffer-deallocation-pipeline
              --convert-linalg-to-loops --lower-affine --convert-scf-to-cf
              --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm
              --convert-math-to-libm --convert-arith-to-llvm --convert-cf-to-llvm
              --convert-index-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts
  mlir-runner -e main -entry-point-result=void
              -shared-libs=libmlir_runner_utils.so,libmlir_c_runner_utils.so
Tools are looked up on PATH, then in /usr/lib/llvm-22/bin. Element types: f32, i8, ui8 (run as i8
bytes), i16, ui16 (run as i16), i4 (an i8 .npy, one value a byte, truncated), i32, i64 (results
printed through i32: values outside its range wrap) and i1 (results only: a bool .npy).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

LLVM_BIN = "/usr/lib/llvm-22/bin"
LOWER_1 = ["--lower-quant-ops", "--tosa-to-linalg-pipeline", "--tosa-to-tensor",
           "--tosa-to-arith=include-apply-rescale=true", "--convert-elementwise-to-linalg",
           "--canonicalize"]
LOWER_2 = ["--one-shot-bufferize=bufferize-function-boundaries", "--buffer-deallocation-pipeline",
           "--convert-linalg-to-loops", "--lower-affine", "--convert-scf-to-cf",
           "--expand-strided-metadata", "--lower-affine", "--finalize-memref-to-llvm", "--convert-math-to-llvm",
           "--convert-math-to-libm", "--convert-arith-to-llvm", "--convert-cf-to-llvm",
           "--convert-index-to-llvm", "--convert-func-to-llvm", "--reconcile-unrealized-casts"]
DTYPES = {"f32": np.float32, "i8": np.int8, "ui8": np.uint8, "i16": np.int16,
          "ui16": np.uint16, "i4": np.int8, "i32": np.int32, "i64": np.int64,
          "i1": np.bool_}
# ui8 (qdqc's u8 at the function boundary) runs as i8: tensor.bitcast has no bufferization,
# and the boundary's tosa.rescale reads the bytes as unsigned by its input_unsigned /
# output_unsigned flags, not by the type, so renaming ui8 to i8 keeps the arithmetic.
SIGNLESS = {"ui8": "i8", "ui16": "i16"}


def tool(name):
    path = shutil.which(name) or os.path.join(LLVM_BIN, name)
    if not os.path.exists(path):
        sys.exit(f"mlir_run: {name} not found (PATH or {LLVM_BIN}); tools/setup.sh installs it")
    return path


def parse_tensor(t):
    m = re.fullmatch(r"tensor<((?:\d+x)*)(f32|i8|ui8|i16|ui16|i4|i32|i64|i1)>", t.strip())
    if not m:
        sys.exit(f"mlir_run: unsupported type {t.strip()} (static tensors of f32, i8, ui8, i16, "
                 "ui16, i4, i32, i64, i1)")
    dims = tuple(int(d) for d in m.group(1).split("x") if d)
    return dims, m.group(2)


def split_types(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [t for t in (out + [cur]) if t.strip()]


def signature(text, func):
    pat = r"func\.func\s+@(%s)\s*\(([^)]*)\)\s*->\s*(\([^)]*\)|tensor<[^>]*>)" % (
        re.escape(func) if func else r"[\w.$]+")
    m = re.search(pat, text)
    if not m:
        sys.exit("mlir_run: no func.func" + (f" @{func}" if func else "") + " with results")
    args = [a.split(":", 1)[1] for a in split_types(m.group(2))]
    res = m.group(3)
    res = split_types(res[1:-1]) if res.startswith("(") else [res]
    return m.group(1), [parse_tensor(a) for a in args], [parse_tensor(r) for r in res]


def ttype(dims, et):
    return "tensor<" + "".join(f"{d}x" for d in dims) + SIGNLESS.get(et, et) + ">"


def main_func(name, args, results, inputs):
    lines = ["  func.func private @printMemrefI32(memref<*xi32>)", "  func.func @main() {"]
    names = []
    for i, ((dims, et), a) in enumerate(zip(args, inputs)):
        if a.shape != dims or a.dtype != DTYPES[et]:
            sys.exit(f"mlir_run: input {i}: {a.dtype}{a.shape}, expected {et}{dims}")
        data = np.ascontiguousarray(a).tobytes().hex().upper()
        if et == "i4":  # i8 bytes truncated to i4
            lines.append(f'    %c{i} = arith.constant dense<"0x{data}"> : {ttype(dims, "i8")}')
            lines.append(f"    %in{i} = arith.trunci %c{i} : {ttype(dims, 'i8')} to "
                         f"{ttype(dims, et)}")
        else:
            lines.append(f'    %in{i} = arith.constant dense<"0x{data}"> : {ttype(dims, et)}')
        names.append(f"%in{i}")
    rt = ", ".join(ttype(d, e) for d, e in results)
    outs = ", ".join(f"%r{i}" for i in range(len(results)))
    lines.append(f"    {outs} = call @{name}({', '.join(names)}) : "
                 f"({', '.join(ttype(d, e) for d, e in args)}) -> ({rt})")
    for i, (dims, et) in enumerate(results):
        t32 = ttype(dims, "i32")
        conv = {"f32": "arith.bitcast", "i8": "arith.extsi", "ui8": "arith.extui",
                "i16": "arith.extsi", "ui16": "arith.extui", "i4": "arith.extsi", "i32": None,
                "i64": "arith.trunci", "i1": "arith.extui"}[et]
        src = f"%r{i}"
        if conv:
            lines.append(f"    %b{i} = {conv} %r{i} : {ttype(dims, et)} to {t32}")
            src = f"%b{i}"
        mt = "memref<" + "".join(f"{d}x" for d in dims) + "i32>"
        lines.append(f"    %m{i} = bufferization.to_buffer {src} : {t32} to {mt}")
        lines.append(f"    %u{i} = memref.cast %m{i} : {mt} to memref<*xi32>")
        lines.append(f"    call @printMemrefI32(%u{i}) : (memref<*xi32>) -> ()")
    lines += ["    return", "  }"]
    return "\n".join(lines) + "\n"


def run(cmd, verbose, **kw):
    if verbose:
        print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"mlir_run: {os.path.basename(cmd[0])} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--output-dir", required=True)
    ap.add_argument("--names", default="")
    ap.add_argument("--func", default="")
    ap.add_argument("--keep", default="", help="directory for the intermediate files")
    ap.add_argument("-v", action="store_true", help="print the commands")
    o = ap.parse_args()
    text = open(o.model).read()
    name, args, results = signature(text, o.func)
    if len(o.input) != len(args):
        sys.exit(f"mlir_run: @{name} takes {len(args)} inputs, {len(o.input)} given")
    inputs = [np.load(p) for p in o.input]
    body = text.replace("xui8>", "xi8>").replace("xui16>", "xi16>").rstrip()
    if not body.startswith("module"):
        body = "module {\n" + body + "\n}"
    body = body[:-1] + main_func(name, args, results, inputs) + "}\n"
    work = o.keep or tempfile.mkdtemp(prefix="mlir_run.")
    os.makedirs(work, exist_ok=True)
    paths = [os.path.join(work, f) for f in ("main.mlir", "linalg.mlir", "llvm.mlir")]
    with open(paths[0], "w") as f:
        f.write(body)
    opt = tool("mlir-opt-22") if shutil.which("mlir-opt-22") else tool("mlir-opt")
    run([opt, paths[0], *LOWER_1, "-o", paths[1]], o.v)
    run([opt, paths[1], *LOWER_2, "-o", paths[2]], o.v)
    libdir = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(opt))), "lib")
    libs = ",".join(os.path.join(libdir, f"lib{n}.so")
                    for n in ("mlir_runner_utils", "mlir_c_runner_utils"))
    out = run([tool("mlir-runner"), "-e", "main", "-entry-point-result=void",
               f"-shared-libs={libs}", paths[2]], o.v)
    blocks = re.split(r"Unranked Memref[^\n]*\n", out)[1:]
    if len(blocks) != len(results):
        sys.exit(f"mlir_run: expected {len(results)} printed results:\n{out}")
    names = o.names.split(",") if o.names else [f"result{i}" for i in range(len(results))]
    os.makedirs(o.output_dir, exist_ok=True)
    for blk, (dims, et), nm in zip(blocks, results, names):
        vals = np.array([int(v) for v in re.findall(r"-?\d+", blk)], np.int64)
        v32 = vals.astype(np.int32)
        arr = (v32.view(np.float32) if et == "f32" else v32.astype(DTYPES[et])).reshape(dims)
        np.save(os.path.join(o.output_dir, nm + ".npy"), arr)
    if not o.keep:
        shutil.rmtree(work)
    print(f"{len(results)} results of @{name} written to {o.output_dir}")


if __name__ == "__main__":
    main()
