#!/usr/bin/env bash
# Where a create, a rename and an unlink go, in leasefs as shipped (over the
# root, a task started, a grant held, journal and audit on) and in a
# passthrough_hp binary, one after the other on the same scratch file system:
#  - FUSE requests per operation (bench/fuse_ops.sh, over a smaller run);
#  - the server's CPU per operation (utime+stime of all its threads, from
#    /proc/PID/stat, over the whole run);
#  - the share of the server's samples under each part of leasefs's own work
#    (perf record --call-graph dwarf -p PID, inclusive shares by symbol).
#
#   bench/mutation_profile.sh BUILD_DIR HP_BINARY [FILES]
# HP_BINARY: passthrough_hp (fs_bench.sh builds it; hpnowb is the fair one).
# MUT_PROF_HP_ARGS: its options (e.g. "-o io_uring" for libfuse 3.18's).
# MUT_PROF_OPS: the workloads of mutation_workload.sh to profile, in order
# (default "create rename unlink"; "write" needs no files before it).
# Needs perf (linux-perf) and root. Prints one block per server and operation.
set -euo pipefail
BUILD=${1:?build dir}
HP=${2:?passthrough_hp binary}
FILES=${3:-10000}
LEASEFS="$BUILD/daemon/leasefs"
LEASECTL="$BUILD/leasectl/leasectl"
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${FS_BENCH_DIR:-/var/tmp}/mut-prof.XXXXXX")
PIDS=()
cleanup() {
  fusermount3 -uz "$WORK/root" 2>/dev/null || true
  fusermount3 -uz "$WORK/mnt-hp" 2>/dev/null || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
mkdir -p "$WORK/root" "$WORK/back-hp" "$WORK/mnt-hp"
TCK=$(getconf CLK_TCK)

# shellcheck source=bench/wait_mounted.sh
. "$HERE/wait_mounted.sh"
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# shellcheck source=bench/mutation_workload.sh
. "$HERE/mutation_workload.sh"

# Inclusive share of the samples under each part, by symbol substring.
PARTS=(
  "journal record (entry, index line, blob):leasefs::journal::Journal::before"
  "allowed report (FUSE side):leasefs::gate::Gate::report_allowed"
  "gate decision:leasefs::gate::Gate::check"
  "path resolution (readlink of /proc/self/fd/N):fd_target"
  "refusal bookkeeping:leasefs::fuse::Filesystem::refuse"
  "audit thread (hash, line, sync):leasefs::memory::AuditLog::"
  "release of a written file (FUSE side):leasefs::fuse::op_release"
  "event pump (reports to events):leasefs::control::GateEventPump::"
  "replies (fuse_reply_*):fuse_reply_"
  "backing file system (openat/renameat2/unlinkat):__x64_sys_openat|__x64_sys_renameat2|__x64_sys_unlinkat"
  "reading requests (fuse_session_receive_buf):fuse_session_receive_buf"
)

profile() {  # label pid mountdir
  local label=$1 pid=$2 dir=$3 op before after data
  mkdir -p "$dir/small" "$dir/count"
  for op in ${MUT_PROF_OPS:-create rename unlink}; do
    data="$WORK/$label-$op.data"
    before=$(ticks "$pid")
    perf record -q -F 999 --call-graph dwarf,16384 -p "$pid" -o "$data" -- \
      bash -c "$(declare -f workload); workload $op '$dir/small' $FILES" >/dev/null 2>&1
    after=$(ticks "$pid")
    printf '\n== %s %s: %s ops, server CPU %s ticks = %.1f us per op\n' "$label" "$op" "$FILES" \
      $((after - before)) "$(echo "($after - $before) * 1000000 / $TCK / $FILES" | bc -l)"
    "$HERE/fuse_ops.sh" "$dir" bash -c "$(declare -f workload); workload $op '$dir/count' 1000" |
      awk '{ printf "  %-20s %6.2f requests per op\n", $1, $2 / 1000 }' || true
    perf report -i "$data" --children --stdio --sort sym -g none 2>/dev/null >"$data.txt" || true
    for part in "${PARTS[@]}"; do
      local name=${part%%:*} pat=${part#*:}
      share=$({ grep -E -- "$pat" "$data.txt" || true; } |
        awk '{ gsub("%","",$1); if ($1 > m) m = $1 } END { print m + 0 }')
      printf '  %-50s %6.2f%% of samples\n' "$name" "$share"
    done
    echo "  most samples, by symbol (self):"
    perf report -i "$data" --no-children --stdio --sort comm,sym -g none 2>/dev/null |
      { grep -E '^ +[0-9]' || true; } | sed -n '1,12s/^/    /p'
  done
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$LEASEFS" mount "$WORK/root" --socket "$WORK/ctl.sock" --foreground >/dev/null 2>&1 &
PIDS+=($!)
LPID=$!
wait_mounted "$WORK/root"
"$LEASECTL" --socket "$WORK/ctl.sock" start "profile" >/dev/null
"$LEASECTL" --socket "$WORK/ctl.sock" grant --reason "profile writes" >/dev/null
profile leasefs "$LPID" "$WORK/root"
"$LEASEFS" unmount "$WORK/root" >/dev/null

# shellcheck disable=SC2086  # options, split on purpose
"$HP" ${MUT_PROF_HP_ARGS:-} --foreground "$WORK/back-hp" "$WORK/mnt-hp" >/dev/null 2>&1 &
PIDS+=($!)
HPID=$!
wait_mounted "$WORK/mnt-hp"
profile hp "$HPID" "$WORK/mnt-hp"
fusermount3 -u "$WORK/mnt-hp"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
