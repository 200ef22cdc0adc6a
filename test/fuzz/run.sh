#!/bin/sh
# run.sh NAME SECONDS: build the libFuzzer harness test/fuzz/fuzz_NAME.c (clang-22, ASan) in
# build-fuzz/ and run it for SECONDS over its corpus test/fuzz/corpus/NAME/ (new inputs go to
# build-fuzz/fuzz/corpus-NAME/, crashes to build-fuzz/fuzz/). Exit status: the fuzzer's.
set -eu
name=${1:?usage: run.sh NAME SECONDS}
secs=${2:?usage: run.sh NAME SECONDS}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${QDQC_FUZZ_BUILD:-$src/build-fuzz}
cmake -S "$src" -B "$build" -G Ninja -DQDQC_FUZZ=ON -DQDQC_ENABLE_MLIR=OFF \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer" >/dev/null
ninja -j "$(nproc)" -C "$build" "fuzz_$name"   # not nproc + 2: CI and dev machines have 2 cores
work="$build/fuzz/corpus-$name"
mkdir -p "$work"
cd "$build/fuzz"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "./fuzz_$name" -max_total_time="$secs" \
    -rss_limit_mb=2048 -timeout=10 -max_len=65536 "$work" "$src/test/fuzz/corpus/$name"
