#!/usr/bin/env bash
# tools/run-tests.sh: set up a fresh Debian 12 machine, build qdqc and run its tests, by tier
# (docs/testing.md, "Tiers"). README's test command; .ci/run runs the quick tier, then --full.
#   tools/run-tests.sh           quick tier: warnings-as-errors build in build/, then ctest -L quick
#                                (unit tests, the quick lit tests, install, IR identity)
#   tools/run-tests.sh --full    full tier: ctest -L full in build/ (lit tests marked TIER: long,
#                                the host-variant runs, cross targets, mutation fuzzing), then the
#                                sanitizer part (--asan), the libFuzzer harnesses and the thread
#                                pool under ThreadSanitizer
#   --sweep (with --full)        also the fixture sweep e2e.fixtures-all (every fixture model on
#                                every x86 path, literal and fixed; about 15 CPU minutes)
#   tools/run-tests.sh --asan    only the AddressSanitizer + UndefinedBehaviorSanitizer build
#                                (build-asan/) and both tiers' tests under it
#   -j N (or QDQC_JOBS=N)        parallel jobs of ninja and ctest (default: ninja's, ctest 2)
# Each run ends with its build and test times and the 10 slowest tests (tools/test-report.py).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${QDQC_JOBS:-}"
mode=quick
sweep=OFF
while [ $# -gt 0 ]; do
  case "$1" in
    --full) mode=full; shift ;;
    --asan) mode=asan; shift ;;
    --sweep) sweep=ON; shift ;;
    -j) jobs="${2:?-j needs a number}"; shift 2 ;;
    -j*) jobs="${1#-j}"; shift ;;
    *) echo "usage: tools/run-tests.sh [--full [--sweep] | --asan] [-j N]" >&2; exit 2 ;;
  esac
done
case "$jobs" in ''|[1-9]|[1-9][0-9]|[1-9][0-9][0-9]) ;; *) echo "run-tests.sh: bad job count '$jobs'" >&2; exit 2 ;; esac
bash tools/setup.sh --peer
now() { date +%s; }
summary=()

# build DIR FLAGS...: configure and build, recording the build's wall time
build() {
  local dir=$1; shift
  local t0; t0=$(now)
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null || return 1
  ninja -C "$dir" ${jobs:+-j "$jobs"} || return 1
  summary+=("build $dir: $(( $(now) - t0 )) s")
}

# tests DIR WHAT CTEST-ARGS...: run ctest with per-test results kept for the report
tests() {
  local dir=$1 what=$2; shift 2
  local t0 st=0; t0=$(now)
  rm -rf "$dir/test-results"; mkdir -p "$dir/test-results"
  ctest --test-dir "$dir" --output-on-failure -j "${jobs:-2}" \
    --output-junit "$PWD/$dir/test-results/ctest.xml" "$@" || st=$?
  summary+=("$what: $(( $(now) - t0 )) s wall")
  /usr/bin/python3 tools/test-report.py "$dir/test-results" || true
  return $st
}

asan() {
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  build build-asan -DQDQC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug || return 1
  # both tiers' lit tests and the unit tests; the host-variant runs check a property of the
  # emitted IR, which the -Werror build proves (lit.cfg.py gives sanitized tests 4x the time)
  tests build-asan "tests (ASan+UBSan, both tiers)" -E '^lit\.host-'
}

st=0
case $mode in
quick)
  build build -DQDQC_WERROR=ON -DQDQC_SLOW_TESTS=OFF
  tests build "tests (quick tier)" -L quick || st=$?
  ;;
full)
  build build -DQDQC_WERROR=ON -DQDQC_SLOW_TESTS=$sweep
  tests build "tests (full tier, -Werror build)" -L full || st=$?
  asan || st=$?
  t0=$(now)
  for h in onnx npy ir_parse; do
    QDQC_FUZZ_BUILD="$PWD/build-fuzzers" sh test/fuzz/run.sh "$h" 60 2>&1 | tail -n 3 || st=$?
  done
  summary+=("libFuzzer harnesses: $(( $(now) - t0 )) s")
  t0=$(now)
  sh test/unit/run_tsan.sh build-tsan || st=$?
  summary+=("ThreadSanitizer: $(( $(now) - t0 )) s")
  ;;
asan)
  asan || st=$?
  ;;
esac
echo "== run-tests.sh ($mode): $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
exit $st
