#!/bin/sh
# Build and run the f32 GEMM bench (bench/sgemm_bench.c): the f32 FMA peak probe, then the
# generated kernels per shape (and oneDNN's sgemm when libdnnl is installed), 1 thread.
# Usage: bench/peak/run_sgemm.sh [--isa=avx2] [--threads=2] [--m= --n= --k=] ...
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${TMPDIR:-/tmp}
llvm_inc=$(llvm-config-22 --includedir)
dnnl=
if [ -f /usr/include/dnnl.h ]; then dnnl="-DHAVE_DNNL -ldnnl"; fi
clang-22 -std=c11 -O2 -Wall -Wextra -Werror -I"$root/lib" -I"$root/include" -I"$llvm_inc" \
    "$root"/lib/codegen/target/*.c "$root"/lib/codegen/irb/core.c "$root"/lib/support/*.c \
    "$root"/lib/codegen/gemm/*.c "$root"/bench/sgemm_bench.c \
    $(llvm-config-22 --ldflags) -lLLVM-22 $dnnl -lpthread -lm -o "$out/qdqc_sgemm_bench"
OMP_NUM_THREADS=1 exec nice "$out/qdqc_sgemm_bench" "$@"
