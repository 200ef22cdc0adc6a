#!/bin/sh
# Build and run the int8/int16 peak probe, then the generated AVX512-VNNI GEMM at 1024^3 against it.
# Usage: bench/peak/run.sh            probe + GEMM (gemm_bench options may follow: --isa=avx2 ...;
#                                     --a16: the A16W8 GEMM, against the vpdpwssd peak)
#        bench/peak/run.sh --peak12   only the 12-accumulator zmm GMAC/s, machine-readable
#        bench/peak/run.sh --peak12w  the same for vpdpwssd (int16 MACs)
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${TMPDIR:-/tmp}
clang-22 -std=c11 -O2 -Wall -Wextra -Werror -mavx512vnni -mavx512vl -mavxvnni \
    "$here/peak.c" -o "$out/qdqc_peak"
if [ "${1:-}" = "--peak12" ] || [ "${1:-}" = "--peak12w" ]; then
    exec "$out/qdqc_peak" "$1"
fi
"$out/qdqc_peak"
llvm_inc=$(llvm-config-22 --includedir)
clang-22 -std=c11 -O2 -Wall -Wextra -Werror -I"$root/lib" -I"$root/include" -I"$llvm_inc" \
    "$root"/lib/codegen/target/*.c "$root"/lib/codegen/irb/core.c "$root"/lib/support/errbuf.c "$root"/lib/support/support.c "$root"/lib/codegen/gemm/*.c \
    "$root"/bench/gemm_bench.c \
    $(llvm-config-22 --ldflags) -lLLVM-22 -lm -o "$out/qdqc_gemm_bench"
case " $* " in
*" --a16 "*) peak=$("$out/qdqc_peak" --peak12w) ;;
*) peak=$("$out/qdqc_peak" --peak12) ;;
esac
"$out/qdqc_gemm_bench" --peak="$peak" "$@"
