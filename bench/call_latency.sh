#!/usr/bin/env bash
# What one call costs its caller, call by call, where fs_bench's lines only say
# how long a whole workload took: python3 makes N new files in a fresh
# directory (open with O_CREAT, a 4 KiB write, close), then stats N names that
# do not exist, then chmods each file, timing every call. Columns: native,
# leasefs as shipped (over the root, a task started, a grant held), leasefs
# with --journal off, and passthrough_hp without its writeback cache, the
# order rotated each round. Prints each round's microseconds per call, then
# the median over rounds. The FUSE requests behind each call: LOOKUP+CREATE
# (open), GETXATTR+WRITE (write), RELEASE and, for passthrough_hp, FLUSH
# (close), LOOKUP (a name that does not exist), SETATTR (chmod).
#
#   bench/call_latency.sh BUILD_DIR [N] [ROUNDS]      (N 3000, ROUNDS 3)
#   env: FS_BENCH_DIR (scratch, default /var/tmp), FS_BENCH_HP_NOWB (the
#        passthrough_hp binary without writeback cache, as fs_bench.sh; its
#        column is skipped without it), FS_BENCH_FRESH_FS=1 (a freshly made
#        ext4 per column and round, as fs_bench.sh: on a file system that has
#        seen many deletions, a create costs what ext4's allocator searches).
# Needs root (mounts). Timings, not assertions: compare columns of one run.
set -euo pipefail
BUILD=${1:?build dir}
N=${2:-3000}
ROUNDS=${3:-3}
LEASEFS="$BUILD/daemon/leasefs"
LEASECTL="$BUILD/leasectl/leasectl"
HP=${FS_BENCH_HP_NOWB:-}
WORK=$(mktemp -d "${FS_BENCH_DIR:-/var/tmp}/call-lat.XXXXXX")
PIDS=()
cleanup() {
  for m in "$WORK"/*/root "$WORK"/*/mnt "$WORK"/fs-*; do
    [ -d "$m" ] && { fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; }
  done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

COLS=(native leasefs nojrnl)
if [ -n "$HP" ] && [ -x "$HP" ]; then COLS+=(hpnowb); else echo "hpnowb: skipped (FS_BENCH_HP_NOWB)" >&2; fi

# Prints "open write close missing chmod", microseconds per call.
CALLS='
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 4096
t = {"open": 0.0, "write": 0.0, "close": 0.0, "missing": 0.0, "chmod": 0.0}
clock = time.perf_counter
for i in range(n):
    a = clock(); fd = os.open("%s/w%d" % (d, i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    b = clock(); os.write(fd, data)
    c = clock(); os.close(fd)
    e = clock()
    t["open"] += b - a; t["write"] += c - b; t["close"] += e - c
for i in range(n):
    a = clock()
    try:
        os.stat("%s/missing%d" % (d, i))
    except FileNotFoundError:
        pass
    t["missing"] += clock() - a
for i in range(n):
    a = clock(); os.chmod("%s/w%d" % (d, i), 0o600); t["chmod"] += clock() - a
print(" ".join("%.1f" % (t[k] / n * 1e6) for k in ("open", "write", "close", "missing", "chmod")))
'

# shellcheck source=bench/wait_mounted.sh
. "$(dirname "$0")/wait_mounted.sh"

# Where one column's tree lives this round: a fresh ext4 or a directory.
home_for() {  # label
  local h="$WORK/$1"
  mkdir -p "$h"
  if [ "${FS_BENCH_FRESH_FS:-0}" = 1 ]; then
    if ! { truncate -s 2G "$WORK/img-$1" && mkfs.ext4 -q -F "$WORK/img-$1" &&
      mount -o loop "$WORK/img-$1" "$h"; }; then
      echo "could not make a fresh ext4 (loop devices?)" >&2
      exit 2
    fi
  fi
  echo "$h"
}

run_leasefs() {  # home [mount options]
  local h=$1 p
  shift
  mkdir -p "$h/root"
  "$LEASEFS" mount "$h/root" --socket "$h/ctl.sock" --foreground "$@" >/dev/null 2>&1 &
  p=$!
  PIDS+=("$p")
  wait_mounted "$h/root"
  "$LEASECTL" --socket "$h/ctl.sock" start "call latency" >/dev/null
  "$LEASECTL" --socket "$h/ctl.sock" grant --reason "call latency" >/dev/null
  mkdir "$h/root/d"
  python3 -c "$CALLS" "$h/root/d" "$N"
  "$LEASEFS" unmount "$h/root" >/dev/null
  wait "$p" 2>/dev/null || true
}

run_column() {  # column round
  local h
  h=$(home_for "$1-$2")
  case $1 in
    native) mkdir "$h/d" && python3 -c "$CALLS" "$h/d" "$N" ;;
    leasefs) run_leasefs "$h" ;;
    nojrnl) run_leasefs "$h" --journal off ;;
    hpnowb)
      mkdir -p "$h/back/d" "$h/mnt"
      "$HP" --foreground "$h/back" "$h/mnt" >/dev/null 2>&1 &
      PIDS+=($!)
      wait_mounted "$h/mnt"
      python3 -c "$CALLS" "$h/mnt/d" "$N"
      fusermount3 -u "$h/mnt"
      ;;
  esac
  if [ "${FS_BENCH_FRESH_FS:-0}" = 1 ]; then umount "$h"; fi
  rm -rf "$h" "$WORK/img-$1-$2"
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-8s %8s %8s %8s %8s %8s   (us per call)\n' round column open write close missing chmod
RESULTS="$WORK/results"
for r in $(seq "$ROUNDS"); do
  n=${#COLS[@]}
  for i in $(seq 0 $((n - 1))); do
    c=${COLS[$(((i + r - 1) % n))]}
    line=$(run_column "$c" "$r")
    echo "$c $line" >>"$RESULTS"
    # shellcheck disable=SC2086 # five numbers, one per column
    printf '%-8s %-8s %8s %8s %8s %8s %8s\n' "$r" "$c" $line
  done
done
echo "median of $ROUNDS rounds:"
for c in "${COLS[@]}"; do
  med=()
  for k in 2 3 4 5 6; do
    med+=("$(awk -v c="$c" -v k="$k" '$1 == c { print $k }' "$RESULTS" | sort -n |
      awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')")
  done
  printf '%-8s %-8s %8s %8s %8s %8s %8s\n' "" "$c" "${med[@]}"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
