#!/bin/sh
# aarch64.sh QDQC [cross.py options] [MODEL...]: the AArch64 end-to-end sweep (ctest e2e.aarch64):
# fixture models and the example compiled for aarch64-linux-gnu (i8mm, dotprod, neon, cortex-a76
# configurations; float, fixed and literal variants), linked statically, run under qemu-aarch64,
# compared byte for byte with `qdqc run --engine=ref`. The whole harness is test/e2e/cross.py
# (its header comment lists the runs and options; --all for the full cross product).
# Exit 0 iff every run matched; 77 (skip) without qemu-user / the cross toolchain, unless
# QDQC_REQUIRE_CROSS=1 (CI), which makes that an error.
here=$(cd "$(dirname "$0")" && pwd)
exec /usr/bin/python3 "$here/cross.py" "$@" --arch aarch64
