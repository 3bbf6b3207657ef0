# A ledger for the fleet console's tests, sourced (after `set -eu`) with $src
# (the source tree), $bridge (leasefs-bridge) and $leasectl set:
#   ledger_up DIR       a throwaway cluster under DIR (Unix socket only), the
#                       schema, machine_a, alice (delegated machine_a:/srv/a) and
#                       bob (delegated nothing); passwords in DIR/people.pgpass
#   as_machine          psql as machine_a, SQL on stdin, values as psql variables
#   admin               psql as the administrator
#   file_request LOCAL_ID PATHS_JSON REASON   a request as machine_a: its ledger id
#   start_fleet_console NAME WHO [console args...]   URL in $url, origin in $origin,
#                       token in $token; its pid is added to $fleet_consoles
#   snapshot ORIGIN TOKEN   the first snapshot the console's /events sends
# shellcheck shell=sh disable=SC2034,SC2154
. "$src/scripts/lib/pg-cluster.sh"
fleet_consoles=""

ledger_password() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

ledger_up() {
  ledger_dir=$1
  pg_cluster_init "$ledger_dir/pg" 5432 '' fsync=off >/dev/null
  "$bridge" migrate --credentials "$ledger_dir/pg/admin.conninfo" >/dev/null
  machine_pw=$(ledger_password)
  alice_pw=$(ledger_password)
  bob_pw=$(ledger_password)
  echo "SELECT fleet.enroll_machine('machine_a', :'pw');" | admin -v pw="$machine_pw" >/dev/null
  echo "SELECT fleet.enroll_person('alice', :'pw');" | admin -v pw="$alice_pw" >/dev/null
  echo "SELECT fleet.enroll_person('bob', :'pw');" | admin -v pw="$bob_pw" >/dev/null
  project=$(echo "SELECT fleet.delegate('alice', 'machine_a', '/srv/a');" | admin)
  printf '*:*:*:alice:%s\n*:*:*:bob:%s\n' "$alice_pw" "$bob_pw" >"$ledger_dir/people.pgpass"
  printf '*:*:*:machine_a:%s\n' "$machine_pw" >"$ledger_dir/machine.pgpass"
  chmod 600 "$ledger_dir/people.pgpass" "$ledger_dir/machine.pgpass"
}

admin() { pg_cluster_sql "$@"; }
as_machine() {
  PGPASSFILE=$ledger_dir/machine.pgpass psql -X -q -At -v ON_ERROR_STOP=1 -h "$ledger_dir/pg/sock" \
    -p 5432 -U machine_a -d fleet "$@"
}

file_request() {
  echo "INSERT INTO fleet.requests (project_id, local_id, task_id, turn, paths, ops, reason,
          requester_uid, requester_pid, requester_command, created_ms, digest)
        VALUES (:'project', :'local', 'T1', 3, :'paths'::jsonb, '[\"write\"]', :'reason',
          1000, 4242, 'python3 edit.py', 1, repeat('a', 64)) RETURNING id;" |
    as_machine -v project="$project" -v local="$1" -v paths="$2" -v reason="$3"
}

start_fleet_console() {
  name=$1
  who=$2
  shift 2
  out=$ledger_dir/$name.out
  : >"$out"
  PGPASSFILE=$ledger_dir/people.pgpass "$leasectl" fleet \
    --db "host=$ledger_dir/pg/sock port=5432 dbname=fleet user=$who" console "$@" \
    >"$out" 2>"$ledger_dir/$name.err" &
  fleet_consoles="$fleet_consoles $!"
  i=0
  while ! grep -q '^http://' "$out"; do
    i=$((i + 1))
    [ $i -lt 100 ] || { echo "FAIL: $name console printed no URL: $(cat "$ledger_dir/$name.err")" >&2; exit 1; }
    sleep 0.1
  done
  url=$(head -n 1 "$out")
  origin=$(printf '%s' "$url" | sed -E 's|^(http://[^/]+)/.*|\1|')
  token=$(printf '%s' "$url" | sed -E 's|.*token=||')
}

snapshot() {
  curl -s -N --max-time 3 -H "Cookie: leasefs_fleet_console_token=$2" "$1/events" |
    sed -n 's/^data: //p' | head -n 1
}

ledger_down() {
  for p in $fleet_consoles; do kill "$p" 2>/dev/null || true; done
  [ -z "${pg_dir:-}" ] || pg_cluster_stop immediate 2>/dev/null || true
}
