#!/usr/bin/env bash
# tools/run-example.sh: set up a fresh Debian 12 machine, build qdqc and run the main job on the
# bundled example QDQ model (README's example: examples/build_and_run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja >/dev/null
ninja -C build
# README example: compile to model.o + model.h, link examples/run_model.c with cc, run it and
# check the output against the reference interpreter (examples/build_and_run.sh)
bash examples/build_and_run.sh ./build/bin/qdqc
