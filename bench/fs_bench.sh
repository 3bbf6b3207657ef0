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
#   hpnowb   the same passthrough_hp without its writeback cache, everything else
#            as in hp (86400 s timeouts, splice, keep_cache). libfuse 3.14's
#            passthrough_hp has no option for that alone (--nocache also sets every
#            timeout to 0), so it is compiled a second time with its one
#            `conn->want |= FUSE_CAP_WRITEBACK_CACHE` line taken out.
#            FS_BENCH_HP_NOWB=/path/to/binary uses that one. leasefs may not use the
#            writeback cache (I6), so this is the column to hold it against.
#   hp318    libfuse 3.18's passthrough_hp with `-o io_uring`, its defaults otherwise
#            (kernel passthrough for reads and writes, so no writeback cache),
#            built by scripts/build-libfuse --examples from Debian unstable's
#            fuse3 source package into the scratch directory (never kept).
#            io_uring only where /sys/module/fuse/parameters/enable_uring is Y:
#            the header line says. FS_BENCH_HP318=/path/to/binary uses that one.
#   daemondev (asked for only) the daemon column with --no-io-uring: /dev/fuse
#   daemonpt  (asked for only) the daemon column with --passthrough-reads
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
# Prints each figure and its ratio to native, then daemon/native over hp/native
# and over hpnowb/native (above 1: leasefs faster than passthrough_hp).
# FS_BENCH_FRESH_FS=1 gives every column, in every pass, a freshly made ext4
# (mkfs.ext4's defaults, in a sparse image on FS_BENCH_DIR, loop-mounted) to
# hold its tree, so that no column starts in block groups another one has just
# filled and emptied: on a file system that has seen many deletions, ext4's
# inode allocator searches recently deleted inodes, and a create's cost then
# depends on which block group a new directory lands in more than on the
# server in front of it.
# With FS_BENCH_PASSES=N (N > 1) the columns run N times, the order rotated by
# one column each pass so that no column always runs first or last; each pass's
# table is printed, then per line the median of the N ratios and their spread.
#
# --busy N runs N CPU-bound processes (a shell loop each) beside the whole run, as
# an agent's compiler or test suite does while it writes files.
#
#   bench/fs_bench.sh [--busy N] [BUILD_DIR]          FS_BENCH_QUICK=1 for a short run
#   env: FS_BENCH_DIR (scratch, default /var/tmp), FS_BENCH_SIZE (seq size, 1g; quick 128m),
#        FS_BENCH_FILES (small files, 10000 also when quick), FS_BENCH_RUNTIME (s per
#        random job, 10; quick 3), FS_BENCH_ENOSYS=1 (add the enosys column),
#        FS_BENCH_FRESH_FS=1 (a fresh ext4 per column and pass),
#        FS_BENCH_TOOLS (1: the real tools' lines, tools_target below; 0 leaves them out),
#        FS_BENCH_PASSES (1), FS_BENCH_COLUMNS (which columns, in pass 1's order;
#        default "native bindfs daemon nojrnl bench gateoff hp hpnowb hp318")
set -euo pipefail

BUSY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --busy) BUSY=$2; shift 2 ;;
    --busy=*) BUSY=${1#--busy=}; shift ;;
    *) break ;;
  esac
done
BUILD=${1:-$(cd "$(dirname "$0")/.." && pwd)/build}
for tool in fio bindfs bc python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install -y fio bindfs bc" >&2; exit 2; }
done
read -ra COLS <<<"${FS_BENCH_COLUMNS:-native bindfs daemon nojrnl bench gateoff hp hpnowb hp318}"
[ "${FS_BENCH_ENOSYS:-0}" = 1 ] && COLS+=(enosys)
want() { [[ " ${COLS[*]} " == *" $1 "* ]]; }
MOUNT_BIN=$(find "$BUILD" -name leasefs_bench_mount -type f -perm -u+x 2>/dev/null | head -1)
{ want bench || want enosys; } && [ ! -x "$MOUNT_BIN" ] && { echo "leasefs_bench_mount not found under $BUILD" >&2; exit 2; }
GATEOFF_BIN=$(find "$BUILD" -name leasefs_bench_mount_gate_off -type f -perm -u+x 2>/dev/null | head -1)
want gateoff && [ ! -x "$GATEOFF_BIN" ] && { echo "leasefs_bench_mount_gate_off not found under $BUILD" >&2; exit 2; }
LEASEFS="$BUILD/daemon/leasefs"
LEASECTL="$BUILD/leasectl/leasectl"
{ want daemon || want nojrnl || want daemondev || want daemonpt; } && { [ -x "$LEASEFS" ] && [ -x "$LEASECTL" ] || { echo "leasefs/leasectl not built under $BUILD" >&2; exit 2; }; }
if [ "${FS_BENCH_QUICK:-0}" = 1 ]; then
  SIZE=${FS_BENCH_SIZE:-128m}; FILES=${FS_BENCH_FILES:-10000}; RUNTIME=${FS_BENCH_RUNTIME:-3}
else
  SIZE=${FS_BENCH_SIZE:-1g}; FILES=${FS_BENCH_FILES:-10000}; RUNTIME=${FS_BENCH_RUNTIME:-10}
fi
WORK=$(mktemp -d "${FS_BENCH_DIR:-/var/tmp}/fs-bench.XXXXXX")
PIDS=()
BUSY_PIDS=()
cleanup() {
  for r in "$WORK"/root-* "$WORK"/fs-*/root-*; do
    if [ -x "$LEASEFS" ]; then "$LEASEFS" unmount "$r" >/dev/null 2>&1 || true; fi
  done
  for mp in "$WORK"/mnt-*; do fusermount3 -uz "$mp" 2>/dev/null || true; done
  for p in "${PIDS[@]}" "${BUSY_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for f in "$WORK"/fs-*; do umount -l "$f" 2>/dev/null || true; done
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
  [ "${#TOOL_KEYS[@]}" -gt 0 ] && tools_target "$label" "$d"
  return 0
}

# The real tools an agent runs, each timed as a whole (FS_BENCH_TOOLS=1, the
# default): a local `git clone` of this repository, a meson + ninja build of
# libfuse's source, `npm ci` of a lockfile from a warm cache, and `rm -rf` of
# all three trees; tools_total is their sum. A tool that could not be prepared
# is left out of every column, with the reason said once at the start.
tools_target() {  # label dir
  local label=$1 d=$2 t total=0 k
  if want_tool git_clone; then
    t=$(now); git clone -q --no-local "$TOOLS_REPO" "$d/clone"; R[$label,git_clone]=$(elapsed "$t")
  fi
  if want_tool meson_build; then
    mkdir -p "$d/meson" && tar -xf "$WORK/meson.tar" -C "$d/meson"
    # Nothing is installed: the udev and init script directories are only named.
    t=$(now); (cd "$d/meson/tree" && meson setup build -Dudevrulesdir=/nonexistent -Dinitscriptdir= -Duseroot=false \
      >/dev/null && ninja -C build >/dev/null)
    R[$label,meson_build]=$(elapsed "$t")
  fi
  if want_tool npm_ci; then
    mkdir -p "$d/npm" && cp "$WORK/npm/package.json" "$WORK/npm/package-lock.json" "$d/npm/"
    t=$(now); (cd "$d/npm" && npm ci --offline --no-audit --no-fund --ignore-scripts >/dev/null 2>&1)
    R[$label,npm_ci]=$(elapsed "$t")
  fi
  t=$(now); rm -rf "$d/clone" "$d/meson" "$d/npm"; R[$label,rm_rf]=$(elapsed "$t")
  for k in "${TOOL_KEYS[@]}"; do [ "$k" = tools_total ] || total=$(echo "$total + ${R[$label,$k]}" | bc -l); done
  R[$label,tools_total]=$total
}
want_tool() { [[ " ${TOOL_KEYS[*]} " == *" $1 "* ]]; }

# shellcheck source=bench/wait_mounted.sh
. "$(dirname "$0")/wait_mounted.sh"

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "building a source tree to untar (/usr/include)..." >&2
tar -cf "$WORK/tree.tar" -C /usr include 2>/dev/null


mkdir -p "$WORK/mnt-bindfs" "$WORK/mnt-bench" "$WORK/mnt-gateoff" "$WORK/mnt-hp" \
  "$WORK/mnt-enosys" "$WORK/mnt-hpnowb" "$WORK/mnt-hp318"

# The real daemon over the root (`leasefs mount ROOT`), a task started and a grant held.
daemon_target() {  # label column extra-mount-options...
  # A fresh root each pass: the last pass's task is still in progress there.
  local label=$1 root="$H/root-$2-${1%%:*}" sock="$WORK/ctl-$2-${1%%:*}.sock"; shift 2
  mkdir -p "$root"
  "$LEASEFS" mount "$root" --socket "$sock" "$@" >/dev/null 2>&1
  wait_mounted "$root"
  "$LEASECTL" --socket "$sock" start "benchmark" >/dev/null
  "$LEASECTL" --socket "$sock" grant --reason "benchmark writes" >/dev/null
  bench_target "$label" "$root"
  "$LEASEFS" unmount "$root" >/dev/null
}

# passthrough_hp from Debian's source package of the installed libfuse (never
# kept in the repository). Prints the source directory, or why not on stderr.
fetch_hp_source() {
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
  echo "$src/tree/example"
}
build_hp() {  # example-dir out [sed-expression]
  local ex=$1 out=$2 cc="$1/passthrough_hp.cc"
  if [ -n "${3:-}" ]; then
    cc="$WORK/passthrough_hp_nowb.cc"
    sed "$3" "$ex/passthrough_hp.cc" >"$cc"
    ! grep -q 'want |= FUSE_CAP_WRITEBACK_CACHE' "$cc" || { echo "the writeback line was not found" >&2; return 1; }
  fi
  # shellcheck disable=SC2046
  g++ -O2 -std=c++17 -DHAVE_SETXATTR -DHAVE_UTIMENSAT -DHAVE_POSIX_FALLOCATE -I "$ex" "$cc" \
    -o "$out" $(pkg-config --cflags --libs fuse3) -lpthread >"$WORK/hp-build.log" 2>&1 ||
    { echo "passthrough_hp did not build: $(tail -3 "$WORK/hp-build.log")" >&2; return 1; }
  echo "$out"
}
HP_BIN=${FS_BENCH_HP:-}
HP_NOWB_BIN=${FS_BENCH_HP_NOWB:-}
if { want hp && [ -z "$HP_BIN" ]; } || { want hpnowb && [ -z "$HP_NOWB_BIN" ]; }; then
  echo "passthrough_hp: building it from Debian's fuse3 source package..." >&2
  if HP_SRC=$(fetch_hp_source); then
    [ -n "$HP_BIN" ] || HP_BIN=$(build_hp "$HP_SRC" "$WORK/passthrough_hp") || HP_BIN=""
    [ -n "$HP_NOWB_BIN" ] || HP_NOWB_BIN=$(build_hp "$HP_SRC" "$WORK/passthrough_hp_nowb" \
      '/want |= FUSE_CAP_WRITEBACK_CACHE/d') || HP_NOWB_BIN=""
  fi
fi
HP318_BIN=${FS_BENCH_HP318:-}
if want hp318 && [ -z "$HP318_BIN" ]; then
  echo "passthrough_hp 3.18: building it from Debian unstable's fuse3 source package..." >&2
  if LIBFUSE_PREFIX="$WORK/libfuse-3.18" "$(dirname "$0")/../scripts/build-libfuse" \
    --examples "$WORK/hp318" >"$WORK/hp318-build.log" 2>&1; then
    HP318_BIN="$WORK/hp318/passthrough_hp"
  else
    echo "passthrough_hp 3.18 did not build: $(tail -3 "$WORK/hp318-build.log")" >&2
  fi
fi
for c in hp hpnowb hp318; do
  case $c in hp) bin=$HP_BIN ;; hpnowb) bin=$HP_NOWB_BIN ;; hp318) bin=$HP318_BIN ;; esac
  if want "$c" && [ -z "$bin" ]; then
    echo "$c: column skipped (reason above)" >&2
    keep=(); for x in "${COLS[@]}"; do [ "$x" = "$c" ] || keep+=("$x"); done; COLS=("${keep[@]}")
  fi
done

# The real tools' inputs, made once and outside every timing.
TOOL_KEYS=()
if [ "${FS_BENCH_TOOLS:-1}" = 1 ]; then
  TOOLS_REPO="file://$(cd "$(dirname "$0")/.." && pwd)"
  if git ls-remote "$TOOLS_REPO" HEAD >/dev/null 2>&1; then TOOL_KEYS+=(git_clone)
  else echo "tools: no git_clone line (this checkout is not a git repository)" >&2; fi
  if command -v meson >/dev/null && command -v ninja >/dev/null && MESON_SRC=${HP_SRC:-$(fetch_hp_source)}; then
    tar -cf "$WORK/meson.tar" -C "$(dirname "$MESON_SRC")/.." "$(basename "$(dirname "$MESON_SRC")")" && TOOL_KEYS+=(meson_build)
  else echo "tools: no meson_build line (meson, ninja or libfuse's source is missing)" >&2; fi
  # A lockfile of ~5,000 installed files, resolved and cached by one native `npm ci`.
  mkdir -p "$WORK/npm"
  printf '{"name":"fs-bench","version":"1.0.0","private":true,"dependencies":{"eslint":"8.57.0","webpack":"5.91.0","typescript":"5.4.5"}}\n' \
    >"$WORK/npm/package.json"
  if command -v npm >/dev/null && (cd "$WORK/npm" && npm install --package-lock-only --no-audit --no-fund >/dev/null 2>&1 &&
    npm ci --no-audit --no-fund --ignore-scripts >/dev/null 2>&1); then
    echo "tools: npm ci installs $(find "$WORK/npm/node_modules" -type f | wc -l) files" >&2
    rm -rf "$WORK/npm/node_modules"
    TOOL_KEYS+=(npm_ci)
  else echo "tools: no npm_ci line (npm, or the registry to fill its cache, is missing)" >&2; fi
  TOOL_KEYS+=(rm_rf tools_total)
fi

# A freshly made ext4 for one column's run (FS_BENCH_FRESH_FS); its mount point.
fresh_fs() {  # column
  local img="$WORK/img-$1" mp="$WORK/fs-$1"
  truncate -s 8G "$img" && mkfs.ext4 -q -F "$img" && mkdir -p "$mp" && mount -o loop "$img" "$mp" ||
    { echo "could not make a fresh ext4 for $1 (loop devices?)" >&2; exit 2; }
  echo "$mp"
}

# One column's workloads, under the label PASS:COLUMN. H: where its tree lives
# (seen by the functions it calls).
run_column() {  # pass column
  local k="$1:$2" H=$WORK
  [ "${FS_BENCH_FRESH_FS:-0}" = 1 ] && H=$(fresh_fs "$2")
  mkdir -p "$H/native" "$H/back-$2"
  case $2 in
    native) echo "[$1] native..." >&2; bench_target "$k" "$H/native" ;;
    bindfs)
      echo "[$1] bindfs..." >&2
      bindfs --no-allow-other "$H/back-bindfs" "$WORK/mnt-bindfs"
      wait_mounted "$WORK/mnt-bindfs"
      bench_target "$k" "$WORK/mnt-bindfs"
      fusermount3 -u "$WORK/mnt-bindfs" ;;
    daemon) echo "[$1] leasefs daemon over the root, journal on, a grant held..." >&2
      daemon_target "$k" daemon ;;
    nojrnl) echo "[$1] leasefs daemon over the root, --journal=off, a grant held..." >&2
      daemon_target "$k" nojrnl --journal=off ;;
    daemondev) echo "[$1] leasefs daemon over the root, --no-io-uring, a grant held..." >&2
      daemon_target "$k" daemondev --no-io-uring ;;
    daemonpt) echo "[$1] leasefs daemon over the root, --passthrough-reads, a grant held..." >&2
      daemon_target "$k" daemonpt --passthrough-reads ;;
    bench | gateoff | enosys)
      local bin=$MOUNT_BIN extra=()
      [ "$2" = gateoff ] && bin=$GATEOFF_BIN
      [ "$2" = enosys ] && extra=(--xattr-enosys)
      echo "[$1] $2 ($(basename "$bin") ${extra[*]})..." >&2
      "$bin" "$H/back-$2" "$WORK/mnt-$2" "${extra[@]}" >/dev/null & PIDS+=($!)
      wait_mounted "$WORK/mnt-$2"
      bench_target "$k" "$WORK/mnt-$2"
      fusermount3 -u "$WORK/mnt-$2" ;;
    hp | hpnowb | hp318)
      local bin=$HP_BIN extra=()
      [ "$2" = hpnowb ] && bin=$HP_NOWB_BIN
      [ "$2" = hp318 ] && bin=$HP318_BIN extra=(-o io_uring)
      echo "[$1] $2 ($bin ${extra[*]})..." >&2
      "$bin" --foreground "${extra[@]}" "$H/back-$2" "$WORK/mnt-$2" >/dev/null 2>&1 & PIDS+=($!)
      wait_mounted "$WORK/mnt-$2"
      bench_target "$k" "$WORK/mnt-$2"
      fusermount3 -u "$WORK/mnt-$2" ;;
    *) echo "unknown column $2" >&2; exit 2 ;;
  esac
  if [ "$H" != "$WORK" ]; then  # its server may still be letting go of the tree
    for _ in $(seq 50); do umount "$H" 2>/dev/null && break; sleep 0.1; done
    rm -f "$WORK/img-$2"
  fi
}

for ((i = 0; i < BUSY; i++)); do
  sh -c 'while :; do :; done' & BUSY_PIDS+=($!)
done

PASSES=${FS_BENCH_PASSES:-1}
want native || COLS=(native "${COLS[@]}")
LABELS=()
for c in "${COLS[@]}"; do [ "$c" = native ] || LABELS+=("$c"); done
for ((p = 1; p <= PASSES; p++)); do
  n=${#COLS[@]} order=()
  for ((i = 0; i < n; i++)); do order+=("${COLS[$(((i + p - 1) % n))]}"); done
  echo "pass $p: ${order[*]} (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  for c in "${order[@]}"; do run_column "$p" "$c"; done
done

KEYS="seqwrite:MiB/s:1 seqread:MiB/s:1 seqread_cached:MiB/s:1 randread:IOPS:1 randwrite:IOPS:1
create:s:0 stat:s:0 stat_warm:s:0 write_small:s:0 stat_written:s:0 stat_written_warm:s:0 rename:s:0
unlink:s:0 untar:s:0 git:s:0 gitstatus_warm:s:0 lslR_warm:s:0 grep:s:0 grep_warm:s:0"
for k in "${TOOL_KEYS[@]}"; do KEYS="$KEYS $k:s:0"; done
for key in "${!R[@]}"; do echo "$key ${R[$key]}"; done >"$WORK/results"
printf '\nsize=%s files=%s runtime=%ss passes=%s fresh_fs=%s busy=%s enable_uring=%s  kernel %s  load average %s at the start\n' \
  "$SIZE" "$FILES" "$RUNTIME" "$PASSES" "${FS_BENCH_FRESH_FS:-0}" "$BUSY" \
  "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null || echo absent)" "$(uname -r)" "$LOAD_START"
python3 - "$WORK/results" "$PASSES" "$KEYS" "${LABELS[@]}" <<'PY'
import statistics, sys
path, passes, keys, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
R = {}
for line in open(path):
    label, value = line.split()
    pc, key = label.split(",")
    p, col = pc.split(":")
    R[int(p), col, key] = float(value)
keys = [(k, u, hib == "1") for k, u, hib in (x.split(":") for x in keys)]
def speed(p, col, k, hib):  # higher is faster
    v = R[p, col, k]
    return v if hib else 1 / v
def ratio(p, col, k, hib):
    return speed(p, col, k, hib) / speed(p, "native", k, hib)
for p in range(1, passes + 1):
    print(f"\npass {p}\n{'workload':<22} {'native':>10}" + "".join(f" {l:>10} {'ratio':>7}" for l in labels))
    for k, u, hib in keys:
        row = f"{k + ' (' + u + ')':<22} {R[p, 'native', k]:>10.4g}"
        for l in labels:
            row += f" {R[p, l, k]:>10.3g} {ratio(p, l, k, hib) * 100:>6.0f}%"
        print(row)
print("(ratio = speed relative to native; 100% = as fast as native)")
def spread(xs):
    return f"{statistics.median(xs):6.2f} [{min(xs):.2f}-{max(xs):.2f}]" if len(xs) > 1 else f"{xs[0]:6.2f}"
if passes > 1:
    print(f"\nratio to native, median of {passes} passes [lowest-highest]")
    print(f"{'workload':<22}" + "".join(f" {l:>18}" for l in labels))
    for k, u, hib in keys:
        print(f"{k:<22}" + "".join(f" {spread([ratio(p, l, k, hib) for p in range(1, passes + 1)]):>18}" for l in labels))
# leasefs as shipped against passthrough_hp: (daemon/native) / (hp/native), per pass.
pairs = [(a, b) for a, b in (("daemon", "hp"), ("daemon", "hpnowb"), ("daemon", "hp318"),
                             ("daemondev", "hp318"), ("daemonpt", "hp318")) if a in labels and b in labels]
if pairs:
    print("\nleasefs/native over passthrough_hp/native (above 1: leasefs faster; each pass's own ratio, then the median [spread])")
    print(f"{'workload':<22}" + "".join(f" {a + '/' + b:>18}" for a, b in pairs))
    for k, u, hib in keys:
        print(f"{k:<22}" + "".join(
            f" {spread([ratio(p, a, k, hib) / ratio(p, b, k, hib) for p in range(1, passes + 1)]):>18}"
            for a, b in pairs))
# The gate's cost: bench (gate on) against gateoff, same library, same run.
if "bench" in labels and "gateoff" in labels:
    print("\ngate cost (bench against gateoff; + means the gate made it slower), median of passes:")
    for k, u, hib in keys:
        c = statistics.median(speed(p, "gateoff", k, hib) / speed(p, "bench", k, hib) - 1 for p in range(1, passes + 1))
        print(f"  {k:<18} {c * 100:+6.1f}%")
PY
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
