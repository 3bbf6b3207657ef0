#!/bin/sh
# The fleet's ledger under load (bench/fleet_load.cpp): a throwaway PostgreSQL
# cluster on loopback, BRIDGES simulated bridges at RATE requests/s each for
# SECONDS, approvers deciding everything. Prints decision delivery p50/p90/p99
# and the server's CPU. Run as root:
#   bench/fleet_load.sh [BUILD_DIR] [BRIDGES] [RATE] [SECONDS]   (build 1000 1.0 300)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
bridges=${2:-1000}
rate=${3:-1.0}
seconds=${4:-300}
. scripts/lib/pg-cluster.sh
bin=$build/bench/fleet_load
[ -x "$bin" ] || { echo "fleet_load.sh: $bin is missing: cmake --build $build --target fleet_load" >&2; exit 2; }
work=$(mktemp -d /tmp/leasefs-fleet-load.XXXXXX)
chmod 755 "$work"  # the server (postgres) reaches its directory through it
trap 'trap "" INT TERM; set +e; pg_cluster_stop immediate 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
port=54339
pg_cluster_init "$work/pg" $port 127.0.0.1 "max_connections=$((bridges + 50))" \
  "shared_buffers=256MB" >/dev/null
password=$(sed 's/.*password=//' "$work/pg/admin.conninfo")
ulimit -n $((bridges * 2 + 256))
echo "PostgreSQL $(pg_cluster_sql -c 'SHOW server_version'), fsync on, on 127.0.0.1:$port; $(nproc) CPUs"
"$bin" --admin "host=127.0.0.1 port=$port dbname=fleet user=fleet_admin password=$password" \
  --postgres-pid "$(pg_cluster_pid)" --bridges "$bridges" --rate "$rate" --seconds "$seconds"
