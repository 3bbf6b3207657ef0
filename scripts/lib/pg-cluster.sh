# A throwaway PostgreSQL 15 cluster, for scripts that source this file
# (scripts/fleet-story, bench/fleet_load.sh). Run as root; the server runs as
# `postgres`. The administrator is fleet_admin, with a random password kept in
# DIR/admin.pgpass (0600) and DIR/admin.conninfo (0600, for leasefs-bridge migrate).
# DIR's parent must let postgres through (mode 755).
#   pg_cluster_init DIR PORT LISTEN [SETTING...]   initdb into DIR/data; LISTEN is
#                                                  listen_addresses ('' for the Unix socket only)
#   pg_cluster_start / pg_cluster_stop [MODE]      pg_ctl start -w / stop -m MODE (fast)
#   pg_cluster_sql [psql args...]                  psql as fleet_admin on database fleet
#   pg_cluster_pid                                 the postmaster's pid
pg_bin=/usr/lib/postgresql/15/bin

pg_as_postgres() { setpriv --reuid=postgres --regid=postgres --clear-groups "$@"; }

pg_cluster_init() {
  pg_dir=$1
  pg_port=$2
  pg_listen=$3
  shift 3
  pg_settings="-c listen_addresses=$pg_listen -c port=$pg_port -c unix_socket_directories=$pg_dir/sock"
  for s in "$@"; do pg_settings="$pg_settings -c $s"; done
  mkdir -p "$pg_dir/data" "$pg_dir/sock" "$pg_dir/log"
  chmod 755 "$pg_dir"
  chown postgres:postgres "$pg_dir/data" "$pg_dir/sock" "$pg_dir/log"
  pg_password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  printf '%s\n' "$pg_password" >"$pg_dir/pwfile"
  chown postgres "$pg_dir/pwfile"
  chmod 600 "$pg_dir/pwfile"
  pg_as_postgres "$pg_bin/initdb" -D "$pg_dir/data" -U fleet_admin --pwfile="$pg_dir/pwfile" \
    --auth=scram-sha-256 -E UTF8 --no-instructions --no-sync >"$pg_dir/initdb.log" 2>&1 ||
    { cat "$pg_dir/initdb.log" >&2; rm -f "$pg_dir/pwfile"; return 1; }
  rm -f "$pg_dir/pwfile"
  printf '*:*:*:fleet_admin:%s\n' "$pg_password" >"$pg_dir/admin.pgpass"
  printf 'host=%s port=%s dbname=fleet user=fleet_admin password=%s\n' "$pg_dir/sock" "$pg_port" \
    "$pg_password" >"$pg_dir/admin.conninfo"
  chmod 600 "$pg_dir/admin.pgpass" "$pg_dir/admin.conninfo"
  pg_cluster_start || return 1
  PGPASSFILE=$pg_dir/admin.pgpass psql -X -q -v ON_ERROR_STOP=1 -h "$pg_dir/sock" -p "$pg_port" \
    -U fleet_admin -d postgres -c "CREATE DATABASE fleet"
}

pg_cluster_start() {
  # shellcheck disable=SC2086
  pg_as_postgres "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log/server.log" -w -t 60 \
    -o "$pg_settings" start >/dev/null || { tail -n 20 "$pg_dir/log/server.log" >&2; return 1; }
}

pg_cluster_stop() {
  [ -f "$pg_dir/data/postmaster.pid" ] || return 0
  pg_as_postgres "$pg_bin/pg_ctl" -D "$pg_dir/data" -m "${1:-fast}" -w -t 60 stop >/dev/null
}

pg_cluster_sql() {
  PGPASSFILE=$pg_dir/admin.pgpass psql -X -q -At -v ON_ERROR_STOP=1 -h "$pg_dir/sock" -p "$pg_port" \
    -U fleet_admin -d fleet "$@"
}

pg_cluster_pid() { head -n 1 "$pg_dir/data/postmaster.pid"; }
