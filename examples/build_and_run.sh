#!/usr/bin/env bash
# examples/build_and_run.sh [QDQC]: the README example. Compile the bundled QDQ MobileNetV2 to an
# object and a C header, link it with examples/run_model.c using `cc`, run it on
# examples/input.npy, and check that its output is bit-identical to the reference interpreter's
# (`qdqc run --engine=ref`). QDQC defaults to build/bin/qdqc (or `qdqc` on PATH).
# Exits non-zero if any step fails or the outputs differ.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
qdqc="${1:-}"
if [ -z "$qdqc" ]; then
    if [ -x "$here/../build/bin/qdqc" ]; then qdqc="$here/../build/bin/qdqc"; else qdqc=qdqc; fi
fi
case "$qdqc" in */*) qdqc="$(cd "$(dirname "$qdqc")" && pwd)/$(basename "$qdqc")" ;; esac
cc="${CC:-cc}"
work="$(mktemp -d "${TMPDIR:-/tmp}/qdqc-example.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"
set -x
"$qdqc" "$here/mobilenetv2_qdq.onnx" -o model.o -o model.h --name=mobilenet
"$cc" -std=c11 -O2 -I. "$here/run_model.c" model.o -lm -o run_model
"$qdqc" run "$here/mobilenetv2_qdq.onnx" --engine=ref --input input="$here/input.npy" --output-dir ref
./run_model "$here/input.npy" ref/logits.npy
