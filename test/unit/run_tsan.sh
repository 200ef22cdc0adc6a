#!/bin/sh
# run_tsan.sh [BUILD_DIR]: the thread-pool and session tests (ctest label tsan:
# unit.test_shared_pool) in a ThreadSanitizer build. Builds only what that test needs (libqdqc's
# objects and the test) with clang -fsanitize=thread in BUILD_DIR (default build-tsan), then runs
# it under ctest with a time limit; any TSan report fails it (halt_on_error). .ci/run calls it.
set -eu
cd "$(dirname "$0")/../.."
dir=${1:-build-tsan}
cc=${QDQC_TSAN_CC:-/usr/lib/llvm-22/bin/clang}
# -Wshadow=local (QDQC_WARN) is GCC's spelling: clang would reject it under -Werror
cmake -S . -B "$dir" -G Ninja -DQDQC_TSAN=ON -DQDQC_WERROR=ON -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS=-Wno-unknown-warning-option -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$dir" unit_test_shared_pool
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  ctest --test-dir "$dir" -L tsan --output-on-failure --timeout 900
