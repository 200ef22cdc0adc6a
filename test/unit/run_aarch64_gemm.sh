#!/bin/sh
# run_aarch64_gemm.sh: bit-exact check of the AArch64 GEMM kernels under qemu-user.
#
# test_kern_gemm --cross emits the same cases as the x86 JIT test for aarch64-linux-gnu into an
# object file, with inputs and the expected outputs (computed on the host by the scalar
# reference) in cases.bin and a generated driver.c. The driver is linked statically with
# aarch64-linux-gnu-gcc and run:
#   - qemu-aarch64 -cpu max:        neon, dotprod (usdot for u8 A), i8mm (smmla/usmmla), generic
#   - qemu-aarch64 -cpu cortex-a76: neon, dotprod built without i8mm (sdot + xor for u8 A)
#   - qemu-aarch64 -cpu max again, every kernel sharing its body with a decoy (other weights and
#     bias: cg_gemm_emit_shared)
# The three configurations run in parallel. Exits 1 on any mismatch. Usage:
# test/unit/run_aarch64_gemm.sh [path/to/test_kern_gemm] (without an argument the test is built
# here with clang-22); ctest unit.aarch64_gemm. Without the cross toolchain or qemu-user: installs
# them with apt-get when we are root, else exit 77 (skip), or 1 if QDQC_REQUIRE_CROSS=1 (CI).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1 \
   || [ ! -e /usr/aarch64-linux-gnu/lib/libc.a ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "run_aarch64_gemm: installing gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
        apt-get install -y -qq gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null \
            || { apt-get update -qq >/dev/null && apt-get install -y -qq gcc-aarch64-linux-gnu \
                 libc6-dev-arm64-cross qemu-user >/dev/null; }
    else
        echo "run_aarch64_gemm: need aarch64-linux-gnu-gcc, libc6-dev-arm64-cross and qemu-aarch64" >&2
        [ "${QDQC_REQUIRE_CROSS:-}" = 1 ] && exit 1
        exit 77
    fi
fi

tg=${1:-}
if [ -z "$tg" ]; then
    llvm_inc=$(llvm-config-22 --includedir)
    clang-22 -std=c11 -O2 -Wall -Wextra -Werror -I"$root/lib" -I"$root/include" -I"$llvm_inc" \
        "$root"/lib/codegen/target/*.c "$root"/lib/codegen/irb/core.c "$root"/lib/support/errbuf.c \
        "$root"/lib/codegen/gemm/*.c \
        "$root"/test/unit/test_kern_gemm.c $(llvm-config-22 --ldflags) -lLLVM-22 -lm -lpthread \
        -o "$tmp/test_kern_gemm"
    tg="$tmp/test_kern_gemm"
fi

# run NAME QEMU_CPU LLVM_CPU MATTR ISAS [shared]: writes "PASSED FAILED" to $tmp/NAME.sum
# (shared: every kernel emitted with a decoy that shares its body, cg_gemm_emit_shared)
run() {
    dir="$tmp/$1"
    mkdir -p "$dir"
    if ! "$tg" --cross aarch64-linux-gnu "$3" "$4" "$5" "$dir" ${6:-} > "$dir/gen.log" 2>&1 \
            || ! aarch64-linux-gnu-gcc -std=c11 -O1 -static "$dir/driver.c" "$dir/kernels.o" \
                 -o "$dir/driver" > "$dir/cc.log" 2>&1; then
        cat "$dir/gen.log"
        head -20 "$dir/cc.log"
        echo "0 1" > "$tmp/$1.sum"
        return
    fi
    cat "$dir/gen.log"
    out=$(cd "$dir" && qemu-aarch64 -cpu "$2" "$dir/driver" "$dir/cases.bin") && rc=0 || rc=$?
    printf '%s\n' "$out" | grep -v '^[0-9]* passed' || true
    line=$(printf '%s\n' "$out" | grep '^[0-9]* passed' || echo "0 passed, 1 failed")
    echo "qemu -cpu $2 ($5): $line"
    p=$(echo "$line" | sed 's/ passed.*//')
    f=$(echo "$line" | sed 's/.* passed, \([0-9]*\) failed.*/\1/')
    [ "$rc" = 0 ] || [ "$f" != 0 ] || f=1
    echo "$p $f" > "$tmp/$1.sum"
}

run max max generic "+neon,+dotprod,+i8mm" "generic,neon,dotprod,i8mm" > "$tmp/max.log" 2>&1 &
run a76 cortex-a76 cortex-a76 "" "neon,dotprod" > "$tmp/a76.log" 2>&1 &
run maxsh max generic "+neon,+dotprod,+i8mm" "generic,neon,dotprod,i8mm" shared > "$tmp/maxsh.log" 2>&1 &
wait
cat "$tmp/max.log" "$tmp/a76.log" "$tmp/maxsh.log"
pass=0
fail=0
for n in max a76 maxsh; do
    read -r p f < "$tmp/$n.sum" || { p=0; f=1; }
    pass=$((pass + p))
    fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
