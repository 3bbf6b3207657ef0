#!/usr/bin/env bash
# The daemon's CPU for COUNT creates of names made to collide in std::hash
# (bench/colliding_names.py) against COUNT other names, in one turn, a grant held.
# Ordered containers keep the two close; a hash set keyed by path makes the first
# grow with COUNT squared.
#
#   bench/hash_flood.sh [BUILD_DIR] [COUNT]     (build, 20000)
set -euo pipefail
BUILD=${1:-build} COUNT=${2:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d "${FS_BENCH_DIR:-/var/tmp}/hash-flood.XXXXXX")
mkdir -p "$W/root/small"
"$BUILD/daemon/leasefs" mount "$W/root" --socket "$W/s" --log-level warn >/dev/null
trap '"$BUILD/daemon/leasefs" unmount "$W/root" >/dev/null 2>&1 || fusermount3 -uz "$W/root"; rm -rf "$W"' EXIT
"$BUILD/leasectl/leasectl" --socket "$W/s" start "hash flood" >/dev/null
"$BUILD/leasectl/leasectl" --socket "$W/s" grant --reason "hash flood" >/dev/null
pid=$(pgrep -f "leasefs mount $W/root" | head -1)
python3 "$HERE/colliding_names.py" small/ "$COUNT" >"$W/names.hex"
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
for kind in plain colliding; do
  before=$(ticks) start=$(date +%s.%N)
  python3 - "$W/root/small" "$W/names.hex" "$kind" <<'PY'
import os, sys
d, hexes, kind = sys.argv[1].encode(), sys.argv[2], sys.argv[3]
names = [bytes.fromhex(line.strip()) for line in open(hexes)]
if kind == "plain":
    names = [b"p%023d" % i for i in range(len(names))]  # the same length
for n in names:
    os.close(os.open(os.path.join(d, n), os.O_CREAT | os.O_WRONLY, 0o644))
PY
  end=$(date +%s.%N) after=$(ticks)
  printf '%-9s %s creates: %.2f s, daemon CPU %s ticks\n' "$kind" "$COUNT" \
    "$(echo "$end - $start" | bc -l)" $((after - before))
done
