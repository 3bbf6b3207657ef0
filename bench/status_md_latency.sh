#!/bin/sh
# How long a refusal takes to show in status.md: the README's tour reads it
# right after the refused command. Mounts a throwaway root, refuses N writes
# (each a new name, one after another, as an agent retrying does), and prints
# each refusal's milliseconds until status.md names it, then min/median/max.
#   bench/status_md_latency.sh [BUILD_DIR] [N]     (as root; default build, 20)
set -eu
build=${1:-build} n=${2:-20}
leasefs=$build/daemon/leasefs leasectl=$build/leasectl/leasectl
work=$(mktemp -d /tmp/leasefs-latency-XXXXXX)
root=$work/root sock=$work/ctl.sock
mkdir "$root"
cleanup() { "$leasefs" unmount "$root" >/dev/null 2>&1 || fusermount3 -uz "$root" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM
"$leasefs" mount "$root" --socket "$sock" >/dev/null
"$leasectl" --socket "$sock" start "latency" >/dev/null
python3 - "$root" "$n" <<'PY'
import os, sys, time
root, n = sys.argv[1], int(sys.argv[2])
status = os.path.join(root, ".longrun", "status.md")
ms = []
for i in range(n):
    name = f"refused-{i}-{time.monotonic_ns()}"
    t0 = time.monotonic()
    try:
        open(os.path.join(root, name), "w").close()
    except PermissionError:
        pass
    while True:
        with open(status) as f:
            if name in f.read():
                break
        if time.monotonic() - t0 > 5:
            break
        time.sleep(0.002)
    ms.append((time.monotonic() - t0) * 1000)
ms.sort()
print("refusal to status.md, ms:", " ".join(f"{m:.0f}" for m in ms))
print(f"min {ms[0]:.0f}  median {ms[len(ms)//2]:.0f}  max {ms[-1]:.0f}  (n={n})")
PY
