#!/bin/sh
# aarch64.sh QDQC [MODEL...]: real models compiled for aarch64-linux-gnu, run under qemu-user,
# compared exactly with the reference interpreter on the host.
#
# For each model (default: conv 3x3 u8/i8, depthwise, matmul, gemm, conv_transpose, a softmax
# float island (libm), and examples/mobilenetv2_qdq.onnx) and each configuration
#   i8mm     --mattr=+neon,+dotprod,+i8mm --isa=i8mm        qemu-aarch64 -cpu max
#   dotprod  --mattr=+neon,+dotprod,+i8mm --isa=dotprod     qemu-aarch64 -cpu max
#   neon     --mattr=+neon                                  qemu-aarch64 -cpu max
#   a76      --mcpu=cortex-a76 (dotprod, no i8mm)           qemu-aarch64 -cpu cortex-a76
# the model is compiled to an object + header (--target=aarch64-linux-gnu), linked statically
# with test/e2e/aarch64_driver.c by aarch64-linux-gnu-gcc (-lm), and run on random inputs;
# its outputs must equal `qdqc run --engine=ref` on the same inputs byte for byte.
# Needs qemu-user, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross (tools/setup.sh) and
# /usr/bin/python3 with numpy. Exit 0 iff every run matched; 77 (skip) without the tools.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
qdqc=${1:?usage: aarch64.sh QDQC [MODEL...]}
shift
case "$qdqc" in */*) qdqc="$(cd "$(dirname "$qdqc")" && pwd)/$(basename "$qdqc")" ;; esac
for t in qemu-aarch64 aarch64-linux-gnu-gcc; do
    command -v "$t" >/dev/null 2>&1 || { echo "aarch64.sh: $t not found (tools/setup.sh)"; exit 77; }
done
[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || { echo "aarch64.sh: libc6-dev-arm64-cross missing"; exit 77; }
if [ $# -eq 0 ]; then
    f=$root/test/models/fixtures
    set -- "$f/conv3x3_pc_u8.onnx" "$f/conv3x3_pc_i8.onnx" "$f/convdw_pc_i8.onnx" \
        "$f/matmul_pc_u8.onnx" "$f/gemm_pc_i8.onnx" "$f/convtranspose_pc_u8.onnx" \
        "$f/softmax_u8.onnx" "$root/examples/mobilenetv2_qdq.onnx"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
py=/usr/bin/python3

runs=0
fails=0
for model in "$@"; do
    name=$(basename "$model" .onnx)
    md="$tmp/$name"
    mkdir -p "$md/ref"
    # inputs (random, from the model's header on the host target) and the reference outputs
    "$qdqc" "$model" --emit=header --name=model -o "$md/host.h"
    $py - "$md" <<'EOF'
import os, re, sys
import numpy as np
md = sys.argv[1]
h = open(os.path.join(md, "host.h")).read()
types = {"f32": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
         "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "bool": np.bool_}
n = int(re.search(r"#define MODEL_NUM_INPUTS (\d+)", h).group(1))
rng = np.random.default_rng(7)
args = []
for i in range(n):
    nm = re.search(r'#define MODEL_INPUT%d_NAME "(.*)"' % i, h).group(1)
    et = re.search(r'#define MODEL_INPUT%d_ELEM_TYPE "(.*)"' % i, h).group(1)
    dims = [int(d) for d in re.search(r"#define MODEL_INPUT%d_DIMS \{(.*)\}" % i, h).group(1).split(",") if d.strip()]
    t = types[et]
    if np.issubdtype(t, np.floating):
        a = rng.uniform(-1, 1, dims).astype(t)
    elif t is np.bool_:
        a = rng.integers(0, 2, dims).astype(t)
    else:
        info = np.iinfo(t)
        a = rng.integers(max(info.min, -128), min(info.max, 255) + 1, dims).astype(t)
    np.save(os.path.join(md, "in%d.npy" % i), a)
    a.tofile(os.path.join(md, "in%d.bin" % i))
    args.append("%s=%s" % (nm, os.path.join(md, "in%d.npy" % i)))
open(os.path.join(md, "ref_args"), "w").write("\n".join(args) + "\n")
EOF
    set --
    while IFS= read -r a; do set -- "$@" --input "$a"; done < "$md/ref_args"
    "$qdqc" run "$model" --engine=ref "$@" --output-dir "$md/ref"
    for cfg in "i8mm max --mattr=+neon,+dotprod,+i8mm --isa=i8mm" \
               "dotprod max --mattr=+neon,+dotprod,+i8mm --isa=dotprod" \
               "neon max --mattr=+neon --isa=neon" \
               "a76 cortex-a76 --mcpu=cortex-a76 --isa=dotprod"; do
        set -- $cfg
        tag=$1 cpu=$2
        shift 2
        d="$md/$tag"
        mkdir -p "$d/out"
        runs=$((runs + 1))
        if ! "$qdqc" "$model" --target=aarch64-linux-gnu "$@" --name=model -o "$d/model.o" \
                || ! "$qdqc" "$model" --target=aarch64-linux-gnu "$@" --name=model --emit=header -o "$d/model.h" \
                || ! aarch64-linux-gnu-gcc -std=c11 -O1 -static -I"$d" "$here/aarch64_driver.c" \
                     "$d/model.o" -lm -o "$d/driver" > "$d/cc.log" 2>&1; then
            cat "$d/cc.log" 2>/dev/null | head -20
            echo "FAIL $name $tag: compile/link"
            fails=$((fails + 1))
            continue
        fi
        if ! $py - "$md" "$d" "$cpu" <<'EOF'
import glob, os, re, subprocess, sys
import numpy as np
md, d, cpu = sys.argv[1:4]
h = open(os.path.join(d, "model.h")).read()
nin = int(re.search(r"#define MODEL_NUM_INPUTS (\d+)", h).group(1))
nout = int(re.search(r"#define MODEL_NUM_OUTPUTS (\d+)", h).group(1))
cmd = ["qemu-aarch64", "-cpu", cpu, os.path.join(d, "driver"), str(nin)]
cmd += [os.path.join(md, "in%d.bin" % i) for i in range(nin)] + [str(nout)]
names = []
for i in range(nout):
    nm = re.search(r'#define MODEL_OUTPUT%d_NAME "(.*)"' % i, h).group(1)
    nb = re.search(r"#define MODEL_OUTPUT%d_BYTES (\d+)u" % i, h).group(1)
    names.append(nm)
    cmd += [os.path.join(d, "out", "o%d.bin" % i), nb]
r = subprocess.run(cmd, capture_output=True, text=True)
if r.returncode != 0:
    print("driver exited %d: %s" % (r.returncode, r.stderr.strip()[:300]))
    sys.exit(1)
ok = True
for i, nm in enumerate(names):
    want = np.load(os.path.join(md, "ref", re.sub(r"[^A-Za-z0-9_.-]", "_", nm) + ".npy"))
    got = np.fromfile(os.path.join(d, "out", "o%d.bin" % i), dtype=want.dtype).reshape(want.shape)
    same = int((got.view(np.uint8) == want.view(np.uint8)).all())
    if not same:
        bad = int((got != want).sum())
        print("output %s: %d of %d differ" % (nm, bad, want.size))
        ok = False
sys.exit(0 if ok else 1)
EOF
        then
            echo "FAIL $name $tag (qemu -cpu $cpu $*)"
            fails=$((fails + 1))
        else
            echo "ok $name $tag (qemu -cpu $cpu)"
        fi
    done
done
echo "$runs runs, $fails failed"
[ "$fails" = 0 ]
