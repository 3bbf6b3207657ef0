#!/usr/bin/env bash
# System calls per create, rename and unlink (and, with MUT_SYS_WRITE=1, per
# 4 KiB file written by python3, then per chmod and utime of it) that
# leasefs's daemon makes, as shipped (over the root, a task started, a grant
# held, journal and audit on): `strace -f -c -p DAEMON` over N operations each, in one directory. Counts are
# what load does not change, except those of the once-a-second inode cache
# sweep, which come with wall time.
#
#   bench/mutation_syscalls.sh BUILD_DIR [N]
# Needs strace and root.
set -euo pipefail
BUILD=${1:?build dir}
N=${2:-1000}
WORK=$(mktemp -d "${FS_BENCH_DIR:-/var/tmp}/mut-sys.XXXXXX")
# shellcheck source=bench/mutation_workload.sh
. "$(cd "$(dirname "$0")" && pwd)/mutation_workload.sh"
LPID=
cleanup() {
  fusermount3 -uz "$WORK/root" 2>/dev/null || true
  [ -n "$LPID" ] && kill "$LPID" 2>/dev/null || true
  sleep 0.3
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
mkdir -p "$WORK/root"
"$BUILD/daemon/leasefs" mount "$WORK/root" --socket "$WORK/ctl.sock" --foreground >/dev/null 2>&1 &
LPID=$!
for _ in $(seq 100); do grep -q " $WORK/root " /proc/self/mountinfo && break; sleep 0.05; done
"$BUILD/leasectl/leasectl" --socket "$WORK/ctl.sock" start "count" >/dev/null
"$BUILD/leasectl/leasectl" --socket "$WORK/ctl.sock" grant --reason "count" >/dev/null
mkdir "$WORK/root/d" "$WORK/root/warm"
(cd "$WORK/root/warm" && seq 1 200 | xargs touch)  # each worker's first create
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
OPS="create rename unlink"
[ "${MUT_SYS_WRITE:-0}" = 1 ] && OPS="$OPS write attrs"
for op in $OPS; do
  strace -f -c -o "$WORK/$op.txt" -p "$LPID" 2>/dev/null &
  SP=$!
  sleep 1
  workload "$op" "$WORK/root/d" "$N"
  sleep 1.5
  kill -INT "$SP"
  wait "$SP" 2>/dev/null || true
  echo "== $op: calls per operation, $N operations"
  awk -v n="$N" '$NF ~ /^(newfstatat|umask|openat2|openat|open|fcntl|getxattr|fchmodat|utimensat|syscall_0x1c4|write|readlink|close|renameat2|unlinkat|futex|fdatasync)$/ {
    printf "  %-12s %7.2f\n", $NF, $4 / n }' "$WORK/$op.txt"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
