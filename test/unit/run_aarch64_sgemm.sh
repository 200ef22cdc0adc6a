#!/bin/sh
# run_aarch64_sgemm.sh: bit-exact check of the AArch64 f32 GEMM kernels under qemu-user.
#
# test_kern_sgemm --cross emits the cases of the x86 JIT test (every N x K edge shape, constant
# and run-time B, both B layouts, transA, alpha and bias, small K chunks) for aarch64-linux-gnu
# into an object file, with inputs and the expected outputs (the fmaf chain computed on the host)
# in cases.bin and a generated driver.c, linked statically and run:
#   - qemu-aarch64 -cpu max:        neon, dotprod, i8mm rows' f32 tile (fmla) and generic
#   - qemu-aarch64 -cpu cortex-a53: neon and generic for an in-order v8.0 core (cortex-a53)
# Exits 1 on any mismatch. Usage: test/unit/run_aarch64_sgemm.sh path/to/unit_test_kern_sgemm.
# Without the cross toolchain or qemu-user: exit 77 (skip), or 1 if QDQC_REQUIRE_CROSS=1 (CI).
set -eu
tg=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1 \
   || [ ! -e /usr/aarch64-linux-gnu/lib/libc.a ]; then
    echo "run_aarch64_sgemm: need aarch64-linux-gnu-gcc, libc6-dev-arm64-cross and qemu-aarch64" >&2
    [ "${QDQC_REQUIRE_CROSS:-}" = 1 ] && exit 1
    exit 77
fi
fail=0
# run NAME QEMU_CPU LLVM_CPU MATTR ISAS
run() {
    dir="$tmp/$1"
    mkdir -p "$dir"
    if ! "$tg" --cross aarch64-linux-gnu "$3" "$4" "$5" "$dir" || \
       ! aarch64-linux-gnu-gcc -std=c11 -O1 -static "$dir/driver.c" "$dir/kernels.o" -o "$dir/driver"; then
        echo "FAIL $1: build"
        fail=1
        return
    fi
    out=$(cd "$dir" && qemu-aarch64 -cpu "$2" ./driver cases.bin) || fail=1
    echo "$out" | grep -v '^[0-9]* passed' | head -20
    echo "$1: $(echo "$out" | tail -1)"
}
run max max generic "+neon,+dotprod,+i8mm" neon,dotprod,i8mm,generic
run a53 cortex-a53 cortex-a53 "" neon,generic
exit $fail
