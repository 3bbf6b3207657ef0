#!/usr/bin/env bash
# FUSE requests the kernel sends to one mount while a command runs, counted by
# opcode (the fuse:fuse_request_send tracepoint, kernel >= 6.15; needs perf from
# linux-perf and root).
#
#   bench/fuse_ops.sh MOUNTPOINT COMMAND [ARGS...]
#
# Only requests of that mount's connection are counted (its device minor), so
# other FUSE mounts on the machine do not mix in.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 MOUNTPOINT COMMAND [ARGS...]" >&2; exit 2; }
mp=$1; shift
command -v perf >/dev/null || { echo "perf is missing: apt-get install -y linux-perf" >&2; exit 2; }
dev=$(mountpoint -d "$mp") || { echo "$mp is not a mountpoint" >&2; exit 2; }
conn=${dev#*:}
data=$(mktemp /tmp/fuse-ops.XXXXXX)
trap 'rm -f "$data"' EXIT
perf record -q -a -e fuse:fuse_request_send -o "$data" -- "$@" >/dev/null 2>&1
perf script -i "$data" -F trace 2>/dev/null |
  awk -v c="$conn" '$2 == c { n[$7]++; t++ } END { for (k in n) printf "%-22s %8d\n", k, n[k]; printf "%-22s %8d\n", "total", t }' |
  sort -k2 -nr
