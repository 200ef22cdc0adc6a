#!/usr/bin/env bash
# tools/setup.sh: install everything qdqc needs on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are left alone. Used by README, .ci/run and developers.
#   tools/setup.sh          Debian packages only
#   tools/setup.sh --peer   also the peer environment: a Python venv with ONNX Runtime and the other
#                           peers, pinned by tools/peer-requirements.txt (docs/testing.md)
# The peer venv is built once per machine and requirements file, in
# ${QDQC_PEER_CACHE:-/var/cache/qdqc}/peer-<first 16 hex digits of the file's sha256>/, and linked
# from the repo as .peer-venv (git-ignored): every clone on the machine (CI's too) reuses it without
# a download; a changed requirements file makes a new venv. A failed build leaves no venv behind.
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
[ "${1:-}" = "--peer" ] || exit 0

req="$here/tools/peer-requirements.txt"
cache="${QDQC_PEER_CACHE:-/var/cache/qdqc}"
venv="$cache/peer-$(sha256sum "$req" | cut -c1-16)"
link="$here/.peer-venv"
mkdir -p "$cache"
# One builder at a time per machine (other clones may run this concurrently).
exec 9>"$cache/.lock"
flock 9
if [ ! -f "$venv/.complete" ]; then
  echo "setup.sh: building the peer environment in $venv (downloads several GB once; tools/peer-requirements.txt)"
  rm -rf "$venv"
  start=$(date +%s)
  log="$cache/$(basename "$venv").log"
  # Debian's python 3.11 (the one the tests use): numpy, onnx and torch 1.13 of /usr/bin/python3
  # stay as they are; the venv does not see them (no --system-site-packages).
  if ! /usr/bin/python3 -m venv "$venv" >"$log" 2>&1 ||
     ! "$venv/bin/pip" install --no-cache-dir --disable-pip-version-check --no-input --progress-bar off \
         --require-virtualenv -r "$req" >>"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "setup.sh: FAILED to build the peer environment ($log); removed $venv" >&2
    rm -rf "$venv"
    exit 1
  fi
  cp "$req" "$venv/requirements.txt"
  touch "$venv/.complete"
  echo "setup.sh: peer environment built in $(( $(date +%s) - start )) s, $(du -sh "$venv" | cut -f1) ($venv)"
fi
flock -u 9
if [ "$(readlink "$link" 2>/dev/null)" != "$venv" ]; then
  ln -sfn "$venv" "$link"
fi
"$link/bin/python" -c "import onnxruntime" || { echo "setup.sh: $link/bin/python cannot import onnxruntime" >&2; exit 1; }
