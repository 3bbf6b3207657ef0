#!/usr/bin/env bash
# Two (or more) daemons against each other on the mutation workload of
# bench/mutation_workload.sh (create, rename, unlink of FILES files in one
# directory; `write`, FILES files of 4 KiB by python3, then `attrs`, a chmod
# and a utime of each, with MUT_AB_WRITE=1),
# interleaved ROUNDS times, each run on a freshly made ext4 (loop-mounted image,
# mkfs.ext4's defaults) with the daemon mounted over the root, a task started
# and a grant held, as shipped. Prints per build and workload the median wall
# time (the lower middle run for an even ROUNDS) and the daemon's median CPU
# per operation (utime+stime of the whole process, from /proc/PID/stat), then
# every run's wall time.
#
#   bench/mutation_ab.sh ROUNDS LABEL=BUILD_DIR [LABEL=BUILD_DIR ...]
#   env: MUT_AB_FILES (10000), MUT_AB_DIR (scratch, default /var/tmp),
#        MUT_AB_MOUNT_ARGS (extra `leasefs mount` options for every build),
#        MUT_AB_WRITE=1 (add the write and attrs workloads)
# A BUILD_DIR needs daemon/leasefs and leasectl/leasectl. Needs root (mount).
set -euo pipefail
ROUNDS=${1:?rounds}
shift
[ $# -ge 1 ] || { echo "usage: $0 ROUNDS LABEL=BUILD_DIR ..." >&2; exit 2; }
FILES=${MUT_AB_FILES:-10000}
OPS="create rename unlink"
[ "${MUT_AB_WRITE:-0}" = 1 ] && OPS="$OPS write attrs"
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/mutation_workload.sh
. "$HERE/mutation_workload.sh"
SCRATCH=$(mktemp -d "${MUT_AB_DIR:-/var/tmp}/mut-ab.XXXXXX")
WORK=
PID=
cleanup() {
  if [ -n "$WORK" ]; then
    fusermount3 -uz "$WORK/root" 2>/dev/null || true
    if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; fi
    umount "$WORK" 2>/dev/null || true
  fi
  rm -rf "$SCRATCH"
}
trap cleanup EXIT INT TERM
TCK=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

one_run() {  # label build -> lines "label op seconds us_per_op"
  local label=$1 build=$2 op t0 t1 c0 c1
  WORK="$SCRATCH/fs"
  mkdir -p "$WORK"
  truncate -s 8G "$SCRATCH/fs.img"
  mkfs.ext4 -q -F "$SCRATCH/fs.img"
  mount -o loop "$SCRATCH/fs.img" "$WORK"
  mkdir "$WORK/root"
  # shellcheck disable=SC2086
  "$build/daemon/leasefs" mount "$WORK/root" --socket "$WORK/ctl.sock" --foreground \
    ${MUT_AB_MOUNT_ARGS:-} >/dev/null 2>&1 &
  PID=$!
  for _ in $(seq 100); do grep -q " $WORK/root " /proc/self/mountinfo && break; sleep 0.05; done
  "$build/leasectl/leasectl" --socket "$WORK/ctl.sock" start "mutation a/b" >/dev/null
  "$build/leasectl/leasectl" --socket "$WORK/ctl.sock" grant --reason "mutation a/b" >/dev/null
  mkdir "$WORK/root/d"
  for op in $OPS; do
    c0=$(ticks "$PID")
    t0=$(date +%s.%N)
    workload "$op" "$WORK/root/d" "$FILES"
    t1=$(date +%s.%N)
    c1=$(ticks "$PID")
    echo "$label $op $(echo "$t1 - $t0" | bc) $(((c1 - c0) * 1000000 / TCK / FILES))"
  done
  "$build/daemon/leasefs" unmount "$WORK/root" >/dev/null
  wait "$PID" 2>/dev/null || true
  PID=
  umount "$WORK"
  rm -f "$SCRATCH/fs.img"
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
RUNS="$SCRATCH/runs"
for _ in $(seq "$ROUNDS"); do
  for spec in "$@"; do one_run "${spec%%=*}" "${spec#*=}"; done
done >"$RUNS"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %-8s %10s %12s   %s\n' build op "median s" "CPU us/op" "each run (s)"
awk '{ k = $1 " " $2; t[k] = t[k] sprintf(" %.3f", $3); c[k] = c[k] " " $4 }
     END { for (k in t) {
             n = split(t[k], a, " "); asort(a); split(c[k], b, " "); asort(b)
             split(k, kk, " ")
             printf "%-12s %-8s %10.3f %12d  %s\n", kk[1], kk[2], a[int((n + 1) / 2)], b[int((n + 1) / 2)], t[k] } }' \
  "$RUNS" | sort
