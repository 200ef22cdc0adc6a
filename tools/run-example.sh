#!/usr/bin/env bash
# tools/run-example.sh [-j N]: set up a fresh Debian 12 machine, build the qdqc tool (only the
# targets the example needs) and run README's example (examples/build_and_run.sh) on the bundled
# model, examples/mobilenetv2_qdq.onnx (MobileNetV2 1.0 at 224x224 with random weights).
# Outputs stay in example-out/ (model.o, model.h, run_model, ref/logits.npy, run.out). The last
# line is the verdict: `example: OK ...` (exit 0) or `example: FAILED ...` (exit 1).
# Parallel build jobs: -j N, else $QDQC_JOBS, else ninja's default.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${QDQC_JOBS:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    -j) jobs="${2:?-j needs a number}"; shift 2 ;;
    -j*) jobs="${1#-j}"; shift ;;
    *) echo "usage: tools/run-example.sh [-j N]" >&2; exit 2 ;;
  esac
done
case "$jobs" in ''|[1-9]|[1-9][0-9]|[1-9][0-9][0-9]) ;; *) echo "run-example.sh: bad job count '$jobs'" >&2; exit 2 ;; esac
step=""
trap 'rc=$?; [ $rc -eq 0 ] || [ -z "$step" ] || echo "example: FAILED — $step (exit $rc)"' EXIT
step="tools/setup.sh could not install the packages"
bash tools/setup.sh
step="cmake could not configure build/"
cmake -S . -B build -G Ninja >/dev/null
step="ninja could not build the qdqc tool"
ninja -C build ${jobs:+-j "$jobs"} qdqc_tool
# README example: compile to model.o + model.h, link examples/run_model.c with cc, run it and
# check the output against the reference interpreter (examples/build_and_run.sh prints the verdict)
step=""
bash examples/build_and_run.sh ./build/bin/qdqc example-out
