#!/usr/bin/env bash
# examples/build_and_run.sh [QDQC [OUTDIR]]: the README example. Compiles the bundled model
# (examples/mobilenetv2_qdq.onnx: MobileNetV2 1.0, 1x3x224x224 -> 1000 logits, random weights)
# to an object and a C header, links it with examples/run_model.c using `cc`, runs it on
# examples/input.npy and checks that its logits are bit-identical to the reference interpreter's
# (`qdqc run --engine=ref`). QDQC defaults to build/bin/qdqc (or `qdqc` on PATH); OUTDIR
# (default example-out) keeps model.o, model.h, run_model and ref/logits.npy.
# The last line is the verdict, `example: OK ...` (exit 0) or `example: FAILED ...` (exit 1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
qdqc="${1:-}"
out="${2:-example-out}"
if [ -z "$qdqc" ]; then
    if [ -x "$here/../build/bin/qdqc" ]; then qdqc="$here/../build/bin/qdqc"; else qdqc=qdqc; fi
fi
case "$qdqc" in */*) qdqc="$(cd "$(dirname "$qdqc")" && pwd)/$(basename "$qdqc")" ;; esac
cc="${CC:-cc}"
model="$here/mobilenetv2_qdq.onnx"
input="$here/input.npy"
step=""
trap 'rc=$?; [ $rc -eq 0 ] || echo "example: FAILED — $step (exit $rc); outputs so far in $out/"' EXIT
mkdir -p "$out"
cd "$out"
rm -rf model.o model.h run_model ref run.out

step="qdqc could not compile $model"
( set -x; "$qdqc" "$model" -o model.o -o model.h --name=mobilenet )
step="cc could not link examples/run_model.c with model.o"
( set -x; "$cc" -std=c11 -O2 -I. "$here/run_model.c" model.o -lm -o run_model )
step="the reference interpreter failed"
( set -x; "$qdqc" run "$model" --engine=ref --input input="$input" --output-dir ref >/dev/null )
step="run_model failed or its logits differ from the reference interpreter's"
( set -x; ./run_model "$input" ref/logits.npy ) | tee run.out
argmax=$(sed -n 's/^argmax //p' run.out)
same=$(sed -n 's/^reference .*: \([0-9]* of [0-9]*\) values bit-identical$/\1/p' run.out)
echo "example: OK — compiled examples/mobilenetv2_qdq.onnx to ${out%/}/model.o + model.h, linked" \
     "run_model, ran it: logits bit-identical to the reference interpreter ($same, argmax $argmax)"
