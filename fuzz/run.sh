#!/usr/bin/env bash
# Builds the control-protocol fuzzer with clang in build-fuzz and runs it for a
# bounded time. Usage: fuzz/run.sh [SECONDS] [TARGET]   (default 60, request_parser_fuzz;
# the other target is dispatcher_fuzz)
set -euo pipefail
seconds="${1:-60}"
target="${2:-request_parser_fuzz}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="$root/build-fuzz"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DLEASEFS_FUZZ=ON >/dev/null
cmake --build "$build" --target "$target" -j"$(nproc)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here"/corpus/* "$work"/
"$build/fuzz/$target" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
  "$work"
