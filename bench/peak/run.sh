#!/bin/sh
# Build and run the int8 peak probe. Usage: bench/peak/run.sh [--peak12]
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/qdqc_peak
clang-22 -std=c11 -O2 -Wall -Wextra -Werror -mavx512vnni -mavx512vl -mavxvnni \
    "$here/peak.c" -o "$out"
exec "$out" "$@"
