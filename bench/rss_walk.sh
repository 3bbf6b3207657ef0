#!/usr/bin/env bash
# Daemon memory after a walk over many inodes: builds DIRS x PER files (empty)
# under a scratch directory (kept between runs, in FS_BENCH_DIR), mounts the real
# daemon over it (`leasefs mount ROOT`), runs `find ROOT -printf %s` (a stat, so a lookup, of
# every entry, all kept by the kernel while the dentries stay cached) and prints
# the daemon's VmRSS and open descriptors before and after, and bytes per inode.
#
#   bench/rss_walk.sh [BUILD_DIR]
#   env: FS_BENCH_DIR (default /var/tmp), RSS_DIRS (1000), RSS_PER (1000),
#        RSS_BIN (bench: leasefs_bench_mount at a separate mountpoint instead)
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/.." && pwd)/build}
LEASEFS="$BUILD/daemon/leasefs"
DIRS=${RSS_DIRS:-1000}
PER=${RSS_PER:-1000}
TREE="${FS_BENCH_DIR:-/var/tmp}/rss-walk-${DIRS}x${PER}"
if [ ! -f "$TREE/.complete" ]; then
  echo "creating $((DIRS * PER)) files under $TREE (once)..." >&2
  rm -rf "$TREE"
  mkdir -p "$TREE"
  python3 - "$TREE" "$DIRS" "$PER" <<'PY'
import os, sys
root, dirs, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    p = os.path.join(root, f"d{d:04}")
    os.mkdir(p)
    for f in range(per):
        open(os.path.join(p, f"f{f:04}"), "w").close()
PY
  touch "$TREE/.complete"
fi
SOCK=$(mktemp -u /tmp/rss-walk.XXXXXX.sock)
cleanup() { "$LEASEFS" unmount "$TREE" >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM
"$LEASEFS" mount "$TREE" --socket "$SOCK" >/dev/null 2>&1
for _ in $(seq 100); do grep -q " $TREE " /proc/self/mountinfo && break; sleep 0.05; done
PID=$(pgrep -n -f "leasefs mount $TREE") || { echo "daemon not found" >&2; exit 1; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$PID/status"; }
fds() { ls "/proc/$PID/fd" | wc -l; }
r0=$(rss); f0=$(fds)
t0=$(date +%s.%N)
n=$(find "$TREE" -printf "%s\n" | wc -l)  # -printf %s: a lookup of every entry
t1=$(date +%s.%N)
r1=$(rss); f1=$(fds)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
inodes=$("$BUILD/leasectl/leasectl" --socket "$SOCK" --json status |
  python3 -c "import json,sys; j=json.load(sys.stdin); print(j['result'].get('file_plane', {}).get('inodes', '?'))")
echo "entries walked:      $n  ($(echo "$t1 - $t0" | bc -l | cut -c1-6) s)"
echo "VmRSS before (KiB):  $r0   fds $f0"
echo "VmRSS after  (KiB):  $r1   fds $f1   VmHWM $hwm"
echo "inodes in the table: $inodes"
[ "$inodes" -gt 0 ] 2>/dev/null || inodes=$n
echo "bytes per inode:     $(( (r1 - r0) * 1024 / inodes ))"
echo "load average:        $(cut -d' ' -f1-3 /proc/loadavg)"
