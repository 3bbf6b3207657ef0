#!/bin/sh
# `turn` while the audit ships: a real daemon over a root, an agent writing files
# under a grant at a steady rate (each an allowed create and a hashed close in the
# audit, about RATE records a second), a person ending the turn and granting
# again every half second, timing each `turn` call on the control socket. Run
# twice: without a bridge, then with a real bridge shipping every record to a
# throwaway PostgreSQL ledger (scripts/lib/pg-cluster.sh). Prints the records a
# second and turn's p50/p99 for each. Run as root:
#   bench/fleet_audit_turn.sh [BUILD_DIR] [SECONDS] [RATE]      (build 60 150)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
case "$build" in /*) ;; *) build=$(pwd)/$build ;; esac
seconds=${2:-60}
rate=${3:-150}
leasefs=$build/daemon/leasefs
leasectl=$build/leasectl/leasectl
bridge=$build/fleet/leasefs-bridge
for b in "$leasefs" "$leasectl" "$bridge"; do
  [ -x "$b" ] || { echo "fleet_audit_turn.sh: $b is missing" >&2; exit 2; }
done
. scripts/lib/pg-cluster.sh
work=$(mktemp -d /tmp/leasefs-audit-turn.XXXXXX)
chmod 755 "$work"
user=lfsbenchbridge
cleanup() {
  trap '' INT TERM
  set +e  # every step is tried, whatever the one before did
  [ -f "$work/bridge.pid" ] && kill "$(cat "$work/bridge.pid")" 2>/dev/null
  for r in "$work"/root-*; do "$leasefs" unmount "$r" >/dev/null 2>&1; done
  [ -n "${pg_dir:-}" ] && pg_cluster_stop immediate 2>/dev/null
  pkill -KILL -u "$user" 2>/dev/null
  userdel "$user" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
id "$user" >/dev/null 2>&1 || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin "$user"

# One run: a fresh root, the daemon, the agent's writer and the turn loop.
# $1: a label; with $2 = bridge, a bridge ships the audit meanwhile.
run() {
  root=$work/root-$1
  sock=$work/$1.sock
  mkdir -p "$root"
  "$leasefs" mount "$root" --socket "$sock" --approver-uid "$(id -u $user)" >/dev/null
  "$leasectl" --socket "$sock" start "audit under load" >/dev/null
  "$leasectl" --socket "$sock" grant --reason "bench" >/dev/null
  if [ "${2:-}" = bridge ]; then
    printf 'host=%s port=%s dbname=fleet user=bench password=%s\n' "$work/pg/sock" 54349 "$machine_pw" >"$work/bridge.conninfo"
    chown "$user" "$work/bridge.conninfo"
    chmod 600 "$work/bridge.conninfo"
    echo "SELECT fleet.delegate('watcher', 'bench', :'root');" | pg_cluster_sql -v root="$root" >/dev/null
    setpriv --reuid=$user --regid=$user --clear-groups "$bridge" run --credentials "$work/bridge.conninfo" \
      --daemon "$root=$sock" >"$work/bridge.log" 2>&1 &
    echo $! >"$work/bridge.pid"
  fi
  python3 - "$root" "$sock" "$seconds" "$rate" "$1" <<'PY'
import json, os, socket, sys, threading, time
root, sock_path, seconds, rate, label = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
stop = time.monotonic() + seconds
def writer():
    # Each file: an allowed create and a closed write, two audit records.
    gap, i, nxt = 2.0 / rate, 0, time.monotonic()
    while time.monotonic() < stop:
        nxt += gap
        i += 1
        try:
            with open(os.path.join(root, f"f{i % 500}"), "w") as f:
                f.write("x" * 100)
        except OSError:
            pass  # between a turn and its grant: refused, and audited as such
        time.sleep(max(0.0, nxt - time.monotonic()))
s = socket.socket(socket.AF_UNIX)
s.connect(sock_path)
buf = b""
def call(cmd, args, n=[0]):
    global buf
    n[0] += 1
    s.sendall((json.dumps({"id": n[0], "cmd": cmd, "args": args}) + "\n").encode())
    while True:
        while b"\n" not in buf:
            buf += s.recv(65536)
        line, buf = buf.split(b"\n", 1)
        r = json.loads(line)
        if r.get("id") == n[0]:
            return r
audit = os.path.join(root, ".longrun", "audit.jsonl")
lines_at = lambda: sum(1 for _ in open(audit, "rb"))
t = threading.Thread(target=writer)
t.start()
time.sleep(1.0)
start_lines, start = lines_at(), time.monotonic()
lat = []
while time.monotonic() < stop:
    t0 = time.perf_counter()
    r = call("turn", {})
    lat.append((time.perf_counter() - t0) * 1e6)
    assert r.get("ok"), r
    call("grant", {"reason": "bench"})
    time.sleep(0.5)
t.join()
records = (lines_at() - start_lines) / (time.monotonic() - start)
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print(f"{label:>12}: {records:6.0f} audit records/s, turn over {len(lat)} calls: "
      f"p50 {q(0.50):7.0f} us, p99 {q(0.99):7.0f} us, max {lat[-1]:7.0f} us")
PY
  if [ "${2:-}" = bridge ]; then
    shipped=$(echo "SELECT count(*) FROM fleet.audit_records;" | pg_cluster_sql)
    echo "              the bridge shipped $shipped records (the root's audit holds $(grep -c '' "$root/.longrun/audit.jsonl"))"
    kill "$(cat "$work/bridge.pid")" 2>/dev/null
    rm -f "$work/bridge.pid"
  fi
  "$leasefs" unmount "$root" >/dev/null
}

echo "a throwaway ledger..."
pg_cluster_init "$work/pg" 54349 "" >/dev/null
"$bridge" migrate --credentials "$work/pg/admin.conninfo" >/dev/null
machine_pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
echo "SELECT fleet.enroll_machine('bench', :'pw'); SELECT fleet.enroll_person('watcher', :'pw');" |
  pg_cluster_sql -v pw="$machine_pw" >/dev/null
echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $seconds s each, the agent writing for ~$rate records/s"
run no-bridge
run bridge bridge
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
