#!/usr/bin/env bash
# tools/run-tests.sh: set up a fresh Debian 12 machine, build qdqc and run the whole test suite
# (C unit tests + lit, through ctest). README's second command; .ci/run calls it.
#   tools/run-tests.sh            warnings-as-errors build in build/
#   tools/run-tests.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
#   -j N (or QDQC_JOBS=N)         parallel jobs of ninja and ctest (default: ninja's, ctest 2)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${QDQC_JOBS:-}"
asan=""
while [ $# -gt 0 ]; do
  case "$1" in
    --asan) asan=1; shift ;;
    -j) jobs="${2:?-j needs a number}"; shift 2 ;;
    -j*) jobs="${1#-j}"; shift ;;
    *) echo "usage: tools/run-tests.sh [--asan] [-j N]" >&2; exit 2 ;;
  esac
done
case "$jobs" in ''|[1-9]|[1-9][0-9]|[1-9][0-9][0-9]) ;; *) echo "run-tests.sh: bad job count '$jobs'" >&2; exit 2 ;; esac
bash tools/setup.sh --peer
dir=build
flags=(-DQDQC_WERROR=ON)
exclude=()
if [ -n "$asan" ]; then
  # lit.host-* re-run the codegen lit tests under an Intel and an AMD tuning CPU to prove the
  # emitted IR does not depend on the host (issue 16 item 1): a property of the output, which
  # the -Werror build checks; under the sanitizers the main lit run covers the same inputs.
  exclude=(-E '^lit\.host-')
  dir=build-asan
  flags+=(-DQDQC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" ${jobs:+-j "$jobs"}
ctest --test-dir "$dir" --output-on-failure -j "${jobs:-2}" "${exclude[@]}"
