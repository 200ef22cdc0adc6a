#!/usr/bin/env bash
# tools/setup.sh: install everything qdqc needs on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are left alone. Used by README, .ci/run and developers.
#   tools/setup.sh          Debian packages only
#   tools/setup.sh --peer   also ONNX Runtime (npm) under bench/node_modules
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(
  build-essential cmake ninja-build git pkgconf python3 python3-numpy python3-pytest python3-pip python3-venv
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 libclang-rt-22-dev
  protobuf-c-compiler libprotobuf-c-dev python3-onnx libonnx-dev libonnx-testdata
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
  libdnnl-dev valgrind python3-torch python3-torchvision
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "setup.sh: need root to install: ${missing[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# node/npm: the machine's nodejs (nodesource) ships npm; Debian's npm would conflict with it.
if ! command -v npm >/dev/null 2>&1; then
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ "${1:-}" = "--peer" ]; then
  if [ ! -f "$here/bench/node_modules/onnxruntime-node/package.json" ]; then
    (cd "$here/bench" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --silent)
  fi
fi
