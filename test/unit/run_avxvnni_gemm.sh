#!/bin/sh
# run_avxvnni_gemm.sh TEST_KERN_GEMM: bit-exact check of the AVX-VNNI GEMM kernel as compiled for
# an AVX-VNNI CPU without AVX-512 (x86-64-v3 + avxvnni: `{vex} vpdpbusd` on ymm, and `{vex}
# vpdpwssd` for 16-bit activations, 16 vector registers), on every case of test_kern_gemm (edge
# shapes, tiles, K chunks, the int64 accumulation of 16-bit activations, thread splits).
#
# test_kern_gemm --cross ... asm writes the kernels as assembly with the expected outputs
# (computed on the host by the scalar reference) and a driver. qemu-user 7.2 executes neither
# AVX-VNNI nor AVX-512 (docs/targets.md), so on a host without AVX-VNNI but with AVX512-VNNI +
# AVX512VL the VEX dot products are re-encoded as EVEX (`{vex} vpdp*` -> `{evex} vpdp*`: the same
# operation on the same ymm registers) before assembling; on an AVX-VNNI host the assembly runs
# as LLVM wrote it. Linked statically with gcc, run natively. ctest e2e.avxvnni-gemm.
# Exit 0 iff every case matched; 77 (skip) on a CPU with neither AVX-VNNI nor AVX512-VNNI + VL.
set -eu
tg=${1:?usage: run_avxvnni_gemm.sh path/to/unit_test_kern_gemm}
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
if has avx_vnni; then
    reencode=0
elif has avx512_vnni && has avx512vl; then
    reencode=1
else
    echo "run_avxvnni_gemm: this CPU has neither AVX-VNNI nor AVX512-VNNI + AVX512VL; skip"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
"$tg" --cross x86_64-linux-gnu x86-64-v3 +avxvnni avxvnni "$tmp" asm
vex=$(grep -c '{vex}[[:space:]]*vpdpbusd' "$tmp/kernels.s" || true)
vex16=$(grep -c '{vex}[[:space:]]*vpdpwssd' "$tmp/kernels.s" || true) # 16-bit activations
if [ "$vex" = 0 ] || [ "$vex16" = 0 ] ||
   grep -Eq '%zmm|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|%k[0-7]\b' "$tmp/kernels.s"; then
    echo "run_avxvnni_gemm: expected {vex} vpdpbusd, {vex} vpdpwssd and no AVX-512 register in kernels.s"
    exit 1
fi
if [ "$reencode" = 1 ]; then
    sed -E 's/\{vex\}([[:space:]]+vpdp(bus|wss)ds?[[:space:]])/{evex}\1/' "$tmp/kernels.s" > "$tmp/k.s"
    echo "run_avxvnni_gemm: $vex {vex} vpdpbusd and $vex16 {vex} vpdpwssd re-encoded as EVEX (no AVX-VNNI on this CPU)"
else
    cp "$tmp/kernels.s" "$tmp/k.s"
fi
gcc -c "$tmp/k.s" -o "$tmp/kernels.o"
gcc -std=c11 -O1 -static "$tmp/driver.c" "$tmp/kernels.o" -o "$tmp/driver"
(cd "$tmp" && ./driver cases.bin)
