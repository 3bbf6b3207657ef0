#!/usr/bin/env bash
# The journal's cost: the same workloads through the real daemon with a lease
# held, `--journal=on` (the default) against `--journal=off`, each run REPEAT
# times on a fresh root (the best time is kept). Workloads: create FILES small
# files from a shell loop, untar a tarball of them (TAR_FILES files, 4 KiB each),
# and `git add -A && git commit` of them. Prints seconds and the ratio on/off.
# The backing file system decides clone (FICLONE) or copy: say which in the note.
#
#   bench/journal_bench.sh [BUILD_DIR]
#   env: JB_DIR (scratch, default /var/tmp), JB_FILES (2000), JB_REPEAT (3)
set -euo pipefail

BUILD=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
LEASEFS="$BUILD/daemon/leasefs"
LEASECTL="$BUILD/leasectl/leasectl"
[ -x "$LEASEFS" ] && [ -x "$LEASECTL" ] || { echo "leasefs/leasectl not built under $BUILD" >&2; exit 2; }
FILES=${JB_FILES:-2000}
REPEAT=${JB_REPEAT:-3}
WORK=$(mktemp -d "${JB_DIR:-/var/tmp}/journal-bench.XXXXXX")
cleanup() {
  for r in "$WORK"/root-*; do "$LEASEFS" unmount "$r" >/dev/null 2>&1 || fusermount3 -uz "$r" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

now() { date +%s.%N; }
# A tarball of FILES 4 KiB files in 20 directories, made once.
mkdir -p "$WORK/src"
for ((i = 0; i < FILES; i++)); do
  d="$WORK/src/d$((i % 20))"; mkdir -p "$d"; head -c 4096 /dev/urandom > "$d/f$i"
done
tar -C "$WORK/src" -cf "$WORK/files.tar" .

run_once() {  # mode workload -> seconds
  local mode=$1 what=$2 root="$WORK/root-$RANDOM$RANDOM" t0 t1
  mkdir -p "$root"
  if [ "$what" = commit ]; then
    tar -C "$root" -xf "$WORK/files.tar"
    git -C "$root" init -q . && git -C "$root" config user.email b@b && git -C "$root" config user.name b
    # A tree with history, as a real project has.
    git -C "$root" add -A && git -C "$root" commit -qm base
    find "$root" -name 'f*' -path '*d1/*' -exec sh -c 'echo more >> "$1"' _ {} \;
  fi
  "$LEASEFS" mount "$root" --journal="$mode" >/dev/null
  (cd "$root" && "$LEASECTL" start bench >/dev/null && "$LEASECTL" grant --reason bench >/dev/null) ||
    { echo "could not start and grant on $root" >&2; exit 1; }
  t0=$(now)
  case $what in
    create) (cd "$root" && for ((i = 0; i < FILES; i++)); do echo "$i" > "c$i"; done) ;;
    untar) tar -C "$root" -xf "$WORK/files.tar" ;;
    commit) (cd "$root" && git add -A && git commit -qm bench) ;;
  esac
  t1=$(now)
  [ "$mode" = off ] || [ -s "$root/.longrun/journal/0/index.jsonl" ] || { echo "no journal kept" >&2; exit 1; }
  "$LEASEFS" unmount "$root" >/dev/null
  rm -rf "$root"
  echo "$t1 - $t0" | bc -l
}

best() {  # mode workload
  local b="" t
  for ((r = 0; r < REPEAT; r++)); do
    t=$(run_once "$1" "$2")
    if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
  done
  printf '%.3f' "$b"
}

printf '%-8s %10s %10s %7s\n' workload off_s on_s on/off
for w in create untar commit; do
  off=$(best off "$w")
  on=$(best on "$w")
  printf '%-8s %10s %10s %7.2f\n' "$w" "$off" "$on" "$(echo "$on / $off" | bc -l)"
done
echo "backing fs: $(stat -f -c %T "$WORK") (FICLONE $( [ "$(stat -f -c %T "$WORK")" = btrfs ] || [ "$(stat -f -c %T "$WORK")" = xfs ] && echo may || echo no) work here); files=$FILES repeat=$REPEAT"
