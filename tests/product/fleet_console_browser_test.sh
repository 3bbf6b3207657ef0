#!/bin/sh
# The fleet console in a real browser (Debian's chromium, driven by
# playwright-core) against a real ledger (a throwaway PostgreSQL cluster): a
# request whose reason is markup, a terminal escape and a right-to-left override,
# in a project whose root is markup, shows as text; the person approves it with
# a click, then a batch by path prefix; with the ledger stopped a click is an
# error on the page. The decision rows are then read back: decided_by is the
# person, one row per request.
# Usage: fleet_console_browser_test.sh LEASECTL LEASEFS_BRIDGE SOURCE_DIR WORKDIR   (exit 77: skipped)
set -eu
leasectl=$1
bridge=$2
src=$3
work=$4
case "$work" in /*) ;; *) work=$(pwd)/$work ;; esac
here=$(dirname "$0")
for tool in chromium npm node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (scripts/install-deps installs it)"
    exit 77
  fi
done
sh "$src/scripts/install-playwright" "$work/playwright"
. "$src/tests/fleet/console_ledger.sh"
base=$(mktemp -d /tmp/leasefs-fleet-console-browser.XXXXXX)
chmod 0755 "$base"
cleanup() {
  ledger_down
  rm -rf "$base"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

ledger_up "$base"
hostile_root='/srv/<img src=x onerror="window.pwned=2">'
echo "SELECT fleet.delegate('alice', 'machine_a', :'root');" | admin -v root="$hostile_root" >/dev/null
reason=$(printf '<img src=x onerror="window.pwned=1"><script>window.pwned=3</script> \033]0;owned\007 \342\200\256gpj.exe')
r1=$(file_request R_0001 '["src/<b>bold</b>.c"]' "$reason")
r2=$(file_request R_0002 '["src/x.c"]' "two")
r3=$(file_request R_0003 '["src/lib/**"]' "three")
r4=$(file_request R_0004 '["docs/z.md"]' "four")
echo "INSERT INTO fleet.audit_records (project_id, seq, ts_ms, prev, hash, line, event)
      VALUES (:'project', 1, 1765100000000, repeat('0', 64), repeat('1', 64), '{}',
        jsonb_build_object('type', 'refusal', 'op', 'write', 'path', :'path', 'pid', 4242,
          'uid', 1000, 'process', 'sh', 'reason', 'no_lease', 'count', 1, 'turn', 3,
          'ts_ms', 1765100000000));" |
  as_machine -v project="$project" -v path='<img src=x onerror="window.pwned=4">.txt' >/dev/null

start_fleet_console alice alice
mkdir -p "$work/screenshots"
CONSOLE_URL=$url PLAYWRIGHT_DIR="$work/playwright" SHOTS="$work/screenshots" PROJECT="$project" \
  R1="$r1" R2="$r2" R3="$r3" R4="$r4" HOSTILE_ROOT="$hostile_root" \
  STOP_LEDGER="setpriv --reuid=postgres --regid=postgres --clear-groups $pg_bin/pg_ctl -D $base/pg/data -m fast -w stop" \
  timeout 240 node "$here/fleet_console_browser_test.cjs"

# The rows the clicks made, read as the administrator.
pg_cluster_start
rows=$(echo "SELECT string_agg(request_id || ':' || decision || ':' || decided_by || ':' || reason, ' ' ORDER BY request_id)
             FROM fleet.decisions;" | admin)
[ "$rows" = "$r1:approve:alice:looks fine $r2:approve:alice: $r3:approve:alice:" ] ||
  fail "one decision row per clicked request, decided by alice: $rows"
echo "ok: fleet.decisions holds $rows"
