#!/usr/bin/env bash
# tools/run-example.sh: set up a fresh Debian 12 machine, build qdqc and run the main job on the
# bundled example QDQ model (README's first command).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja >/dev/null
ninja -C build
./build/bin/qdqc examples/mobilenetv2_qdq.onnx --emit=ir -o -
