#!/usr/bin/env bash
# tools/run-tests.sh: set up a fresh Debian 12 machine, build qdqc and run the whole test suite
# (C unit tests + lit, through ctest). README's second command; .ci/run calls it.
#   tools/run-tests.sh            warnings-as-errors build in build/
#   tools/run-tests.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh --peer
dir=build
flags=(-DQDQC_WERROR=ON)
if [ "${1:-}" = "--asan" ]; then
  dir=build-asan
  flags+=(-DQDQC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir"
ctest --test-dir "$dir" --output-on-failure -j2
