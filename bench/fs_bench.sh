#!/usr/bin/env bash
# Same workloads, side by side, one run. Columns:
#   native   the scratch directory itself
#   bindfs   bindfs mirroring a directory onto a separate mountpoint
#   daemon   the real daemon as people run it: `leasefs mount ROOT` over the root
#            itself, then `leasectl start` and `leasectl grant`; per-turn journal
#            on (the default), closed files hashed (SHA-256) and reported to audit
#   nojrnl   the same with `leasefs mount --journal=off ROOT`
#   bench    leasefs_bench_mount (tests/fuse/bench_mount.cpp): the passthrough
#            library with the gate on and an allow-all snapshot; no journal, no
#            control plane, no audit; separate mountpoint
#   gateoff  leasefs_bench_mount_gate_off: the same mount and the same
#            libleasefs_fuse.a, with the gate's three allow-path checks redirected
#            at link time to "allowed" (tests/fuse/gate_off.cpp); it publishes no
#            task at all, so it writes only if the gate really is out of the path
#   hp       libfuse's own example/passthrough_hp.cc (built with xattrs, its
#            defaults: writeback cache, 86400 s timeouts, splice), compiled at run
#            time from Debian's fuse3 source package of the installed libfuse3-dev
#            version (apt-get source; a private deb-src list under the scratch
#            directory when the system has none). Skipped, with the reason, when
#            it cannot be fetched or built. FS_BENCH_HP=/path/to/binary uses that one.
#   enosys   (FS_BENCH_ENOSYS=1 only) bench with xattrs answered ENOSYS, to price
#            the security.capability lookups the kernel makes before every write
# Workloads: fio sequential/random (seqread after drop_caches, then cached: read
# again with --invalidate=0, since fio otherwise drops the file's pages first,
# which on a FUSE mount sends every read to the daemon again);
# FILES empty files created (create), stat'ed just after (stat) and again
# (stat_warm), renamed, removed; /usr/include untarred (untar), then in it git
# init+add+commit (git), a second `git status` (gitstatus_warm), `ls -lR` after a
# `find` (lslR_warm), and `grep -r` cold-ish and warm.
# FILES files of 4 KiB written one by one by python3 (open, write, close: what an
# agent's tool does; write_small), then stat'ed (stat_written) and again
# (stat_written_warm).
# Prints each figure and its ratio to native.
#
#   bench/fs_bench.sh [BUILD_DIR]          FS_BENCH_QUICK=1 for a short run
#   env: FS_BENCH_DIR (scratch, default /var/tmp), FS_BENCH_SIZE (seq size, 1g; quick 128m),
#        FS_BENCH_FILES (small files, 10000 also when quick), FS_BENCH_RUNTIME (s per
#        random job, 10; quick 3), FS_BENCH_ENOSYS=1 (add the enosys column)
set -euo pipefail

BUILD=${1:-$(cd "$(dirname "$0")/.." && pwd)/build}
for tool in fio bindfs bc python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install -y fio bindfs bc" >&2; exit 2; }
done
MOUNT_BIN=$(find "$BUILD" -name leasefs_bench_mount -type f -perm -u+x | head -1)
[ -x "$MOUNT_BIN" ] || { echo "leasefs_bench_mount not found under $BUILD" >&2; exit 2; }
GATEOFF_BIN=$(find "$BUILD" -name leasefs_bench_mount_gate_off -type f -perm -u+x | head -1)
[ -x "$GATEOFF_BIN" ] || { echo "leasefs_bench_mount_gate_off not found under $BUILD" >&2; exit 2; }
LEASEFS="$BUILD/daemon/leasefs"
LEASECTL="$BUILD/leasectl/leasectl"
[ -x "$LEASEFS" ] && [ -x "$LEASECTL" ] || { echo "leasefs/leasectl not built under $BUILD" >&2; exit 2; }
if [ "${FS_BENCH_QUICK:-0}" = 1 ]; then
  SIZE=${FS_BENCH_SIZE:-128m}; FILES=${FS_BENCH_FILES:-10000}; RUNTIME=${FS_BENCH_RUNTIME:-3}
else
  SIZE=${FS_BENCH_SIZE:-1g}; FILES=${FS_BENCH_FILES:-10000}; RUNTIME=${FS_BENCH_RUNTIME:-10}
fi
WORK=$(mktemp -d "${FS_BENCH_DIR:-/var/tmp}/fs-bench.XXXXXX")
PIDS=()
cleanup() {
  for r in "$WORK"/root-*; do "$LEASEFS" unmount "$r" >/dev/null 2>&1 || true; done
  for mp in "$WORK"/mnt-*; do fusermount3 -uz "$mp" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc -l; }

# fio job -> bandwidth in MiB/s (or IOPS for random jobs)
fio_run() {  # dir name rw bs extra...
  local dir=$1 name=$2 rw=$3 bs=$4; shift 4
  fio --name="$name" --directory="$dir" --rw="$rw" --bs="$bs" --size="$SIZE" \
    --ioengine=psync --numjobs=1 --group_reporting --output-format=json "$@" 2>/dev/null |
    python3 -c "
import json,sys
j=json.load(sys.stdin)['jobs'][0]
rw='$rw'
side='write' if 'write' in rw else 'read'
if rw.startswith('rand'): print(round(j[side]['iops']))
else: print(round(j[side]['bw_bytes']/1048576,1))"
}

declare -A R
bench_target() {  # label dir
  local label=$1 d=$2 t
  mkdir -p "$d/fio"
  R[$label,seqwrite]=$(fio_run "$d/fio" seq write 1m --end_fsync=1)
  drop_caches
  R[$label,seqread]=$(fio_run "$d/fio" seq read 1m)
  R[$label,seqread_cached]=$(fio_run "$d/fio" seq read 1m --invalidate=0)
  R[$label,randread]=$(fio_run "$d/fio" seq randread 4k --time_based --runtime="$RUNTIME")
  R[$label,randwrite]=$(fio_run "$d/fio" seq randwrite 4k --time_based --runtime="$RUNTIME")
  rm -rf "$d/fio"

  mkdir -p "$d/small"
  t=$(now); (cd "$d/small" && seq 1 "$FILES" | xargs touch); R[$label,create]=$(elapsed "$t")
  t=$(now); (cd "$d/small" && seq 1 "$FILES" | xargs stat -c %s >/dev/null); R[$label,stat]=$(elapsed "$t")
  t=$(now); (cd "$d/small" && seq 1 "$FILES" | xargs stat -c %s >/dev/null); R[$label,stat_warm]=$(elapsed "$t")
  t=$(now); (cd "$d/small" && for i in $(seq 1 "$FILES"); do echo "$i r$i"; done |
    python3 -c "
import os,sys
for line in sys.stdin:
    a,b=line.split(); os.rename(a,b)"); R[$label,rename]=$(elapsed "$t")
  t=$(now); rm -rf "$d/small"; R[$label,unlink]=$(elapsed "$t")

  mkdir -p "$d/written"
  t=$(now); (cd "$d/written" && python3 -c "
import sys
data = b'x' * 4096
for i in range(int(sys.argv[1])):
    with open(str(i), 'wb') as f: f.write(data)" "$FILES"); R[$label,write_small]=$(elapsed "$t")
  t=$(now); (cd "$d/written" && seq 0 $((FILES - 1)) | xargs stat -c %s >/dev/null); R[$label,stat_written]=$(elapsed "$t")
  t=$(now); (cd "$d/written" && seq 0 $((FILES - 1)) | xargs stat -c %s >/dev/null); R[$label,stat_written_warm]=$(elapsed "$t")
  rm -rf "$d/written"

  t=$(now); mkdir -p "$d/src" && tar -xf "$WORK/tree.tar" -C "$d/src"; R[$label,untar]=$(elapsed "$t")
  t=$(now); (cd "$d/src" && git init -q && git add -A &&
    git -c user.name=b -c user.email=b@b commit -qm bench); R[$label,git]=$(elapsed "$t")
  (cd "$d/src" && git status --porcelain >/dev/null)
  t=$(now); (cd "$d/src" && git status --porcelain >/dev/null); R[$label,gitstatus_warm]=$(elapsed "$t")
  find "$d/src" >/dev/null
  t=$(now); ls -lR "$d/src" >/dev/null; R[$label,lslR_warm]=$(elapsed "$t")
  t=$(now); grep -r "define" "$d/src" >/dev/null || true; R[$label,grep]=$(elapsed "$t")
  t=$(now); grep -r "define" "$d/src" >/dev/null || true; R[$label,grep_warm]=$(elapsed "$t")
  rm -rf "$d/src" "$d/.git" 2>/dev/null || true
}

wait_mounted() {
  for _ in $(seq 100); do
    grep -q " $1 " /proc/self/mountinfo && stat "$1" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "mount at $1 did not come up" >&2; exit 1
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "building a source tree to untar (/usr/include)..." >&2
tar -cf "$WORK/tree.tar" -C /usr include 2>/dev/null

mkdir -p "$WORK/native" "$WORK/back-bindfs" "$WORK/mnt-bindfs" "$WORK/back-bench" \
  "$WORK/mnt-bench" "$WORK/back-gateoff" "$WORK/mnt-gateoff" "$WORK/back-hp" "$WORK/mnt-hp" \
  "$WORK/back-enosys" "$WORK/mnt-enosys" "$WORK/root-daemon" "$WORK/root-nojrnl"

# The real daemon over the root (`leasefs mount ROOT`), a task started and a grant held.
daemon_target() {  # label extra-mount-options...
  local label=$1 root="$WORK/root-$1" sock="$WORK/ctl-$1.sock"; shift
  "$LEASEFS" mount "$root" --socket "$sock" "$@" >/dev/null 2>&1
  wait_mounted "$root"
  "$LEASECTL" --socket "$sock" start "benchmark" >/dev/null
  "$LEASECTL" --socket "$sock" grant --reason "benchmark writes" >/dev/null
  bench_target "$label" "$root"
  "$LEASEFS" unmount "$root" >/dev/null
}

LABELS=(bindfs daemon nojrnl bench)
echo "native..." >&2
bench_target native "$WORK/native"

echo "bindfs..." >&2
bindfs --no-allow-other "$WORK/back-bindfs" "$WORK/mnt-bindfs"
wait_mounted "$WORK/mnt-bindfs"
bench_target bindfs "$WORK/mnt-bindfs"
fusermount3 -u "$WORK/mnt-bindfs"

echo "leasefs daemon over the root, journal on, a grant held..." >&2
daemon_target daemon

echo "leasefs daemon over the root, --journal=off, a grant held..." >&2
daemon_target nojrnl --journal=off

echo "leasefs_bench_mount (gate on, allow-all)..." >&2
"$MOUNT_BIN" "$WORK/back-bench" "$WORK/mnt-bench" >/dev/null & PIDS+=($!)
wait_mounted "$WORK/mnt-bench"
bench_target bench "$WORK/mnt-bench"
fusermount3 -u "$WORK/mnt-bench"

echo "leasefs_bench_mount_gate_off (the same library, the gate's checks linked out)..." >&2
"$GATEOFF_BIN" "$WORK/back-gateoff" "$WORK/mnt-gateoff" >/dev/null & PIDS+=($!)
wait_mounted "$WORK/mnt-gateoff"
bench_target gateoff "$WORK/mnt-gateoff"
fusermount3 -u "$WORK/mnt-gateoff"
LABELS+=(gateoff)

# passthrough_hp from Debian's source package of the installed libfuse (never
# kept in the repository). Prints the binary's path, or why not on stderr.
build_hp() {
  local ver src="$WORK/hp-src" apt_opts=()
  ver=$(dpkg-query -W -f='${Version}' libfuse3-dev 2>/dev/null) ||
    { echo "libfuse3-dev is not installed" >&2; return 1; }
  command -v dpkg-source >/dev/null || { echo "dpkg-source is missing (dpkg-dev)" >&2; return 1; }
  mkdir -p "$src"
  if ! (cd "$src" && apt-get source -qq --download-only "fuse3=$ver" >/dev/null 2>&1); then
    # No deb-src in the system's lists: a private one, leaving the system's apt alone.
    local codename
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    mkdir -p "$src/apt/lists/partial" "$src/apt/cache/archives/partial"
    echo "deb-src http://deb.debian.org/debian $codename main" >"$src/apt/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$src/apt/sources.list" -o "Dir::Etc::SourceParts=$src/apt/none"
      -o "Dir::State::Lists=$src/apt/lists" -o "Dir::Cache=$src/apt/cache")
    apt-get -qq "${apt_opts[@]}" update >/dev/null 2>&1 ||
      { echo "apt-get update of a deb-src list for $codename failed (network?)" >&2; return 1; }
    (cd "$src" && apt-get -qq "${apt_opts[@]}" source --download-only "fuse3=$ver" >/dev/null 2>&1) ||
      { echo "apt-get source fuse3=$ver failed" >&2; return 1; }
  fi
  (cd "$src" && dpkg-source -x ./*.dsc tree >/dev/null 2>&1) || { echo "dpkg-source -x failed" >&2; return 1; }
  # shellcheck disable=SC2046
  g++ -O2 -std=c++17 -DHAVE_SETXATTR -DHAVE_UTIMENSAT -DHAVE_POSIX_FALLOCATE \
    -I "$src/tree/example" "$src/tree/example/passthrough_hp.cc" \
    -o "$WORK/passthrough_hp" $(pkg-config --cflags --libs fuse3) -lpthread >"$src/build.log" 2>&1 ||
    { echo "passthrough_hp did not build: $(tail -3 "$src/build.log")" >&2; return 1; }
  echo "$WORK/passthrough_hp"
}
HP_BIN=${FS_BENCH_HP:-}
if [ -z "$HP_BIN" ]; then
  echo "passthrough_hp: building it from Debian's fuse3 source package..." >&2
  HP_BIN=$(build_hp) || HP_BIN=""
fi
if [ -n "$HP_BIN" ]; then
  echo "passthrough_hp ($HP_BIN)..." >&2
  "$HP_BIN" --foreground "$WORK/back-hp" "$WORK/mnt-hp" >/dev/null 2>&1 & PIDS+=($!)
  wait_mounted "$WORK/mnt-hp"
  bench_target hp "$WORK/mnt-hp"
  fusermount3 -u "$WORK/mnt-hp"
  LABELS+=(hp)
else
  echo "passthrough_hp: column skipped (reason above)" >&2
fi

if [ "${FS_BENCH_ENOSYS:-0}" = 1 ]; then
  echo "leasefs_bench_mount, xattrs ENOSYS (reference only)..." >&2
  "$MOUNT_BIN" "$WORK/back-enosys" "$WORK/mnt-enosys" --xattr-enosys >/dev/null & PIDS+=($!)
  wait_mounted "$WORK/mnt-enosys"
  bench_target enosys "$WORK/mnt-enosys"
  fusermount3 -u "$WORK/mnt-enosys"
  LABELS+=(enosys)
fi

printf '\nsize=%s files=%s runtime=%ss  kernel %s  load average %s at the start\n' "$SIZE" "$FILES" \
  "$RUNTIME" "$(uname -r)" "$LOAD_START"
printf '%-22s %10s' workload native
for l in "${LABELS[@]}"; do printf ' %10s %7s' "$l" ratio; done
printf '\n'
row() {  # key unit higher_is_better
  local k=$1 unit=$2 hib=$3 n=${R[native,$1]}
  printf '%-22s %10s' "$k ($unit)" "$n"
  for l in "${LABELS[@]}"; do
    local v=${R[$l,$k]} ratio
    if [ "$hib" = 1 ]; then ratio=$(echo "$v / $n" | bc -l); else ratio=$(echo "$n / $v" | bc -l); fi
    printf ' %10s %6.0f%%' "$(printf '%.3g' "$v")" "$(echo "$ratio * 100" | bc -l)"
  done
  printf '\n'
}
row seqwrite MiB/s 1
row seqread MiB/s 1
row seqread_cached MiB/s 1
row randread IOPS 1
row randwrite IOPS 1
row create s 0
row stat s 0
row stat_warm s 0
row write_small s 0
row stat_written s 0
row stat_written_warm s 0
row rename s 0
row unlink s 0
row untar s 0
row git s 0
row gitstatus_warm s 0
row lslR_warm s 0
row grep s 0
row grep_warm s 0
echo "(ratio = speed relative to native; 100% = as fast as native)"
# The gate's cost: bench (gate on) against gateoff, same library, same run.
printf '\ngate cost (bench against gateoff; + means the gate made it slower):\n'
for k in seqwrite seqread seqread_cached randread randwrite create stat stat_warm write_small \
  stat_written stat_written_warm rename unlink untar git gitstatus_warm lslR_warm grep grep_warm; do
  case $k in seq* | rand*) c=$(echo "${R[gateoff,$k]} / ${R[bench,$k]} - 1" | bc -l) ;;
    *) c=$(echo "${R[bench,$k]} / ${R[gateoff,$k]} - 1" | bc -l) ;; esac
  printf '  %-18s %+6.1f%%\n' "$k" "$(echo "$c * 100" | bc -l)"
done
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
