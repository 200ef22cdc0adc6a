#!/usr/bin/env bash
# run-install-test.sh: install qdqc into a temporary prefix, then build and run the out-of-tree
# consumer (test/install/consumer) against it: with CMake (shared and static targets) and with
# pkg-config + cc. Also checks that libqdqc.so exports only qdqc_ symbols, and runs the example
# model the three ways docs/embedding.md shows: JIT (run_model, CMake and pkg-config builds),
# ahead of time (the installed qdqc tool -> model.o + model.h -> aot_model, no libqdqc), with
# identical logits; and libqdqc_runtime alone (test/install/runtime: examples/run_threads.c runs
# the AOT model through model_run_ex with a qdqc_threadpool, with CMake and pkg-config, without
# libqdqc; find_package(qdqc) without the static component prints nothing of LLVM or MLIR).
#   run-install-test.sh BUILD_DIR [CC]
set -euo pipefail
build=$(cd "$1" && pwd)
cc=${2:-cc}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
model=$src/examples/mobilenetv2_qdq.onnx
input=$src/examples/input.npy
work=$(mktemp -d "${TMPDIR:-/tmp}/qdqc-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "run-install-test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in lib/libqdqc.so lib/libqdqc.a include/qdqc/qdqc.h include/qdqc/status.def bin/qdqc \
         lib/libqdqc_runtime.so lib/libqdqc_runtime.so.0 lib/libqdqc_runtime.a \
         include/qdqc/runtime.h lib/pkgconfig/qdqc-runtime.pc \
         lib/cmake/qdqc/qdqcConfig.cmake lib/cmake/qdqc/qdqcConfigVersion.cmake \
         lib/cmake/qdqc/qdqcTargets.cmake lib/cmake/qdqc/qdqcStaticTargets.cmake \
         lib/pkgconfig/qdqc.pc; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
soname=$(objdump -p "$prefix/lib/libqdqc.so" | awk '/SONAME/ {print $2}')
[ "$soname" = libqdqc.so.0 ] || fail "soname is '$soname', expected libqdqc.so.0"
[ -e "$prefix/lib/$soname" ] || fail "$soname not installed"
leaked=$(nm -D --defined-only "$prefix/lib/libqdqc.so" | awk '{print $NF}' | grep -v '^qdqc_' || true)
[ -z "$leaked" ] || fail "libqdqc.so exports non-qdqc symbols: $(echo "$leaked" | head -5 | tr '\n' ' ')"
rt_syms=$(nm -D --defined-only "$prefix/lib/libqdqc_runtime.so" | awk '{print $NF}' | sort | tr '\n' ' ')
[ "$rt_syms" = "qdqc_threadpool_create qdqc_threadpool_destroy qdqc_threadpool_parallel_for " ] \
    || fail "libqdqc_runtime.so exports: $rt_syms"
rt_needed=$(objdump -p "$prefix/lib/libqdqc_runtime.so" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')
case "$rt_needed" in *LLVM*|*MLIR*|*qdqc*|*protobuf*|*stdc++*) fail "libqdqc_runtime.so needs $rt_needed" ;; esac
# find_package(qdqc) output beyond CMake's own compiler checks: LLVM's and MLIR's dependency
# searches (FFI, LibEdit, zstd, ...) must not show
noise() { grep -E 'LLVM|MLIR|FFI|LibEdit|zstd|ZLIB|LibXml2|CURL|Could NOT find|Performing Test' "$1" || true; }

check_output() { # name, output file
    grep -q '^graph @relu_qdq' "$2" || fail "$1: no IR printed"
    grep -q "^qdqc " "$2" || fail "$1: no version line"
}

# 1. CMake: find_package(qdqc) -> qdqc::qdqc and qdqc::qdqc_static
cmake -S "$here/consumer" -B "$work/cmake" -DCMAKE_C_COMPILER="$cc" -DQDQC_MODEL="$model" \
      -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/cmake.log" 2>&1 \
    || { cat "$work/cmake.log"; fail "consumer configure"; }
cmake --build "$work/cmake" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "consumer build"; }
"$work/cmake/consumer_shared" >"$work/shared.out" || fail "consumer_shared exited $?"
check_output consumer_shared "$work/shared.out"
# (ldd output is captured first: grep -q closing the pipe early would fail it under pipefail)
deps=$(ldd "$work/cmake/consumer_shared")
grep -q "$prefix/lib/libqdqc.so.0" <<<"$deps" \
    || fail "consumer_shared does not load the installed libqdqc.so.0: $deps"
"$work/cmake/consumer_static" >"$work/static.out" || fail "consumer_static exited $?"
check_output consumer_static "$work/static.out"
deps=$(ldd "$work/cmake/consumer_static")
if grep -q libqdqc <<<"$deps"; then fail "consumer_static loads libqdqc.so"; fi
# the example model: JIT == reference, and the AOT object computes the same logits
"$work/cmake/run_model" "$model" "$input" >"$work/jit.out" || fail "run_model exited $?"
grep -q '^jit == reference: yes$' "$work/jit.out" || fail "run_model: $(cat "$work/jit.out")"
grep -q '^logits: ' "$work/jit.out" || fail "run_model printed no logits"
"$work/cmake/aot_model" "$input" >"$work/aot.out" || fail "aot_model exited $?"
[ "$(head -1 "$work/jit.out")" = "$(cat "$work/aot.out")" ] \
    || fail "aot_model and run_model differ: $(cat "$work/aot.out") vs $(head -1 "$work/jit.out")"
deps=$(ldd "$work/cmake/aot_model")
if grep -q libqdqc <<<"$deps"; then fail "aot_model loads libqdqc.so"; fi

[ -z "$(noise "$work/cmake.log")" ] || fail "find_package(qdqc COMPONENTS shared static) printed: $(noise "$work/cmake.log")"

# 1b. CMake, runtime only: find_package(qdqc COMPONENTS runtime) -> qdqc::qdqc_runtime; the
# model compiled ahead of time runs on 2 threads through model_run_ex (examples/run_threads.c)
cmake -S "$here/runtime" -B "$work/rt" -DCMAKE_C_COMPILER="$cc" -DQDQC_MODEL="$model" \
      -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/rt.log" 2>&1 \
    || { cat "$work/rt.log"; fail "runtime consumer configure"; }
[ -z "$(noise "$work/rt.log")" ] || fail "find_package(qdqc COMPONENTS runtime) printed: $(noise "$work/rt.log")"
cmake --build "$work/rt" >"$work/rt-build.log" 2>&1 || { cat "$work/rt-build.log"; fail "runtime consumer build"; }
"$work/rt/run_threads" 2 3 >"$work/rt.out" || fail "run_threads exited $?: $(cat "$work/rt.out")"
grep -q "^output 'logits': 3 of 3 threaded runs identical to model_run$" "$work/rt.out" \
    || fail "run_threads: $(cat "$work/rt.out")"
deps=$(ldd "$work/rt/run_threads")
grep -q "$prefix/lib/libqdqc_runtime.so.0" <<<"$deps" || fail "run_threads does not load libqdqc_runtime: $deps"
if grep -Eq 'libqdqc\.so|LLVM|MLIR' <<<"$deps"; then fail "run_threads loads libqdqc or LLVM: $deps"; fi

# 2. pkg-config + cc (shared), and static from Libs.private
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion qdqc)" = "$(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/qdqc.pc")" ] \
    || fail "pkg-config --modversion"
libdir=$(pkg-config --variable=libdir qdqc)
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -o "$work/pc_shared" "$here/consumer/consumer.c" \
    $(pkg-config --cflags --libs qdqc) -Wl,-rpath,"$libdir" || fail "pkg-config shared build"
"$work/pc_shared" >"$work/pc_shared.out" || fail "pc_shared exited $?"
check_output pc_shared "$work/pc_shared.out"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -o "$work/pc_run_model" "$here/consumer/run_model.c" \
    $(pkg-config --cflags --libs qdqc) -Wl,-rpath,"$libdir" || fail "pkg-config run_model build"
"$work/pc_run_model" "$model" "$input" "$work/model.o" "$work/model.h" >"$work/pc_jit.out" \
    || fail "pc_run_model exited $?"
[ "$(head -2 "$work/pc_jit.out")" = "$(cat "$work/jit.out")" ] || fail "pc_run_model output differs"
"$cc" -std=c11 -Wall -Wextra -Werror -I"$work" -o "$work/pc_aot" "$here/consumer/aot_main.c" \
    "$work/model.o" -lm || fail "aot build from run_model's object"
[ "$("$work/pc_aot" "$input")" = "$(cat "$work/aot.out")" ] || fail "pc_aot output differs"
# libqdqc_runtime through pkg-config, shared and static, with run_model's object (prefix model)
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -I"$work" -o "$work/pc_threads" "$src/examples/run_threads.c" \
    "$work/model.o" $(pkg-config --cflags --libs qdqc-runtime) -Wl,-rpath,"$libdir" -lm \
    || fail "pkg-config qdqc-runtime build"
"$work/pc_threads" 2 2 | grep -q "2 of 2 threaded runs identical" || fail "pc_threads"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -I"$work" -o "$work/pc_threads_static" \
    "$src/examples/run_threads.c" "$work/model.o" $(pkg-config --cflags qdqc-runtime) \
    "$libdir/libqdqc_runtime.a" $(pkg-config --libs-only-other --static qdqc-runtime) -lm \
    || fail "static libqdqc_runtime build"
"$work/pc_threads_static" 2 2 | grep -q "2 of 2 threaded runs identical" || fail "pc_threads_static"
if grep -q libqdqc <<<"$(ldd "$work/pc_threads_static")"; then fail "pc_threads_static loads libqdqc*"; fi
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -o "$work/pc_static" "$here/consumer/consumer.c" \
    $(pkg-config --cflags qdqc) "$libdir/libqdqc.a" \
    $(pkg-config --libs --static qdqc | sed 's/ -lqdqc\b//') || fail "pkg-config static build"
"$work/pc_static" >"$work/pc_static.out" || fail "pc_static exited $?"
check_output pc_static "$work/pc_static.out"
deps=$(ldd "$work/pc_static")
if grep -q libqdqc <<<"$deps"; then fail "pc_static loads libqdqc.so"; fi
echo "run-install-test: ok ($prefix: cmake shared+static+runtime, pkg-config shared+static, qdqc-runtime shared+static, example model JIT+AOT+threads)"
