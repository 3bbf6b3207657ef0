#!/bin/sh
# The fleet console's HTTP surface against a real ledger (a throwaway PostgreSQL
# cluster): every route needs the token, a wrong Host or Origin is refused, an
# action needs the token header; it listens on loopback only and takes no
# password on its command line. What it shows is what the person's role may
# see, as inert text; a person outside the delegation sees nothing and cannot
# decide; a second decision is refused naming the first; a batch gives one
# decision row per request; a stopped ledger is said, and a decision then is an
# error, never a success.
# Usage: fleet_console_http_test.sh LEASECTL LEASEFS_BRIDGE SOURCE_DIR
set -eu
leasectl=$1
bridge=$2
src=$3
. "$src/tests/fleet/console_ledger.sh"
base=$(mktemp -d /tmp/leasefs-fleet-console-http.XXXXXX)
chmod 0755 "$base"
cleanup() {
  ledger_down
  rm -rf "$base"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
status_of() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# post ORIGIN TOKEN BODY: the reply's body, then its status on a line of its own.
post() {
  curl -s -w '\n%{http_code}' -X POST -H "Content-Type: application/json" -H "X-Console-Token: $2" \
    -H "Origin: $1" --data "$3" "$1/api/action"
}
# has JSON PYTHON-EXPRESSION: the expression holds of the parsed JSON (s).
has() {
  printf '%s' "$1" | python3 -c 'import json, sys; s = json.load(sys.stdin); sys.exit(0 if ('"$2"') else 1)'
}
decisions() { echo "SELECT count(*) FROM fleet.decisions;" | admin; }

ledger_up "$base"
# A reason that is markup, a terminal escape and a right-to-left override.
hostile=$(printf '<script>window.pwned=1</script> \033[2J\342\200\256gpj.exe')
r1=$(file_request R_0001 '["src/main.c"]' "$hostile")
echo "INSERT INTO fleet.audit_records (project_id, seq, ts_ms, prev, hash, line, event)
      VALUES (:'project', 1, 1765100000000, repeat('0', 64), repeat('1', 64), '{}',
        jsonb_build_object('type', 'refusal', 'op', 'write', 'path', :'path', 'pid', 4242,
          'uid', 1000, 'process', 'sh', 'reason', 'no_lease', 'count', 1, 'turn', 3,
          'ts_ms', 1765100000000));" |
  as_machine -v project="$project" -v path='<img src=x onerror=1>.txt' >/dev/null

# No console on another address, none with a password on its command line.
if PGPASSFILE=$base/people.pgpass "$leasectl" fleet --db "host=$base/pg/sock port=5432 dbname=fleet user=alice" \
  console --listen 0.0.0.0:0 >"$base/wide.out" 2>&1; then fail "a console on 0.0.0.0"; else code=$?; fi
if [ "$code" != 2 ] || ! grep -q 'loopback address only' "$base/wide.out"; then
  fail "0.0.0.0 refused: $code $(cat "$base/wide.out")"
fi
if "$leasectl" fleet --db "host=$base/pg/sock port=5432 dbname=fleet user=alice password=$alice_pw" \
  console >"$base/pw.out" 2>&1; then fail "a console with a password in --db"; else code=$?; fi
if [ "$code" != 2 ] || ! grep -q 'holds a password' "$base/pw.out"; then
  fail "a password refused: $code $(cat "$base/pw.out")"
fi
echo "ok: loopback only, and no password on the command line"

start_fleet_console alice alice
alice_origin=$origin
alice_token=$token
alice_url=$url
[ ${#token} -eq 64 ] || fail "token of 64 hex digits: $token"
hostport=${origin#http://}
[ "$(status_of "$origin/")" = 401 ] || fail "no token must be 401"
[ "$(status_of "$origin/events")" = 401 ] || fail "events without token must be 401"
[ "$(status_of "$origin/fleet.js")" = 401 ] || fail "the script without token must be 401"
[ "$(status_of "$origin/?token=0000$token")" = 401 ] || fail "a wrong token must be 401"
[ "$(status_of -H "Host: evil.example:${hostport#*:}" "$url")" = 403 ] || fail "a rebound Host must be 403"
[ "$(status_of -H "Origin: http://evil.example" "$url")" = 403 ] || fail "a foreign Origin must be 403"
headers=$(curl -s -D - -o /dev/null "$url")
printf '%s' "$headers" | grep -qi '^Set-Cookie: leasefs_fleet_console_token=.*HttpOnly; SameSite=Strict' ||
  fail "the token goes into the fleet console's own strict cookie: $headers"
page=$(curl -s -D - -H "Cookie: leasefs_fleet_console_token=$token" "$origin/")
printf '%s' "$page" | grep -qi "^Content-Security-Policy: default-src 'none'; script-src 'self';" || fail "a strict CSP"
if printf '%s' "$page" | grep -qi '<script>'; then fail "no inline script"; fi
approve1="{\"cmd\":\"approve\",\"id\":\"$r1\"}"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Content-Type: application/json" \
  -H "Origin: $origin" -H "Cookie: leasefs_fleet_console_token=$token" --data "$approve1" "$origin/api/action")
[ "$code" = 401 ] || fail "an action with the cookie alone must be 401, got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Content-Type: application/json" \
  -H "X-Console-Token: $token" -H "Origin: http://evil.example" --data "$approve1" "$origin/api/action")
[ "$code" = 403 ] || fail "an action from another Origin must be 403, got $code"
[ "$(post "$origin" "" "$approve1" | tail -n 1)" = 401 ] || fail "an action without the token header must be 401"
post "$origin" "$token" '{"cmd":"approve","id":"1 OR 1=1"}' | grep -q '"bad_request"' || fail "an id that is not a number"
[ "$(decisions)" = 0 ] || fail "nothing decided yet"
echo "ok: token, Host, Origin and the action header are required"

snap=$(snapshot "$origin" "$token")
has "$snap" "s['user'] == 'alice' and s['centre']['reachable']" || fail "alice, reachable: $snap"
has "$snap" "[(p['machine'], p['root']) for p in s['projects']] == [('machine_a', '/srv/a')]" ||
  fail "alice sees her one project: $snap"
has "$snap" "[(r['id'], r['machine'], r['turn'], r['task_id'], r['paths'], r['ops'], r['requester_pid'], r['requester_command']) for r in s['requests']] == [('$r1', 'machine_a', '3', 'T1', ['src/main.c'], ['write'], '4242', 'python3 edit.py')]" ||
  fail "alice sees the pending request with its machine, turn, paths, ops and process: $snap"
has "$snap" "s['requests'][0]['reason'] == '<script>window.pwned=1</script> \\\\x1b[2J\\\\u{202e}gpj.exe'" ||
  fail "the reason comes as leasectl fleet prints it (escapes, markup as text): $snap"
has "$snap" "not any(c in json.dumps(s, ensure_ascii=False) for c in '\\x1b\\u202e')" ||
  fail "no escape or bidi character reaches the page: $snap"
has "$snap" "[(f['op'], f['path'], f['reason'], f['turn']) for f in s['refusals']] == [('write', '<img src=x onerror=1>.txt', 'no_lease', '3')]" ||
  fail "the shipped refusal is listed: $snap"
echo "ok: alice's console lists her project, request $r1 (its reason inert) and the shipped refusal"

start_fleet_console bob bob
snap=$(snapshot "$origin" "$token")
has "$snap" "s['user'] == 'bob' and s['projects'] == [] and s['requests'] == [] and s['refusals'] == []" ||
  fail "bob sees nothing: $snap"
case "$snap" in *pwned*|*main.c*) fail "bob's page holds alice's request: $snap" ;; esac
reply=$(post "$origin" "$token" "$approve1" | head -n 1)
has "$reply" "not s['ok'] and s['error']['code'] == 'refused' and 'not one you may decide as bob' in s['error']['message']" ||
  fail "bob's approval is refused: $reply"
reply=$(post "$origin" "$token" "{\"cmd\":\"approve\",\"project\":\"$project\"}" | head -n 1)
has "$reply" "s['ok'] and s['result']['decided'] == []" || fail "bob's batch decides nothing: $reply"
[ "$(decisions)" = 0 ] || fail "bob decided something"
echo "ok: bob, outside the delegation, sees nothing and cannot decide"

reply=$(post "$alice_origin" "$alice_token" "{\"cmd\":\"approve\",\"id\":\"$r1\",\"reason\":\"fine\"}" | head -n 1)
has "$reply" "s['ok'] and s['result']['by'] == 'alice' and [d['request_id'] for d in s['result']['decided']] == ['$r1']" ||
  fail "alice approves $r1: $reply"
row=$(echo "SELECT decision, decided_by, reason FROM fleet.decisions WHERE request_id = :'r';" | admin -v r="$r1")
[ "$row" = "approve|alice|fine" ] || fail "one decision row by alice: $row"
reply=$(post "$alice_origin" "$alice_token" "{\"cmd\":\"reject\",\"id\":\"$r1\"}" | head -n 1)
has "$reply" "not s['ok'] and 'decided already: approve by alice' in s['error']['message']" ||
  fail "a second decision is refused naming the first: $reply"
[ "$(decisions)" = 1 ] || fail "still one decision"
echo "ok: alice approves $r1 once; a second decision is refused naming hers"

r2=$(file_request R_0002 '["src/a.c"]' "two")
r3=$(file_request R_0003 '["src/lib/**", "src/b.h"]' "three")
r4=$(file_request R_0004 '["srcx/c"]' "four")
reply=$(post "$alice_origin" "$alice_token" "{\"cmd\":\"approve\",\"project\":\"$project\",\"path_prefix\":\"src\"}" | head -n 1)
has "$reply" "s['ok'] and sorted(d['request_id'] for d in s['result']['decided']) == sorted(['$r2', '$r3'])" ||
  fail "the batch under src decides $r2 and $r3: $reply"
rows=$(echo "SELECT string_agg(request_id || ':' || decided_by, ' ' ORDER BY request_id) FROM fleet.decisions WHERE request_id <> :'r';" |
  admin -v r="$r1")
[ "$rows" = "$r2:alice $r3:alice" ] || fail "one row per request of the batch: $rows"
snap=$(snapshot "$alice_origin" "$alice_token")
has "$snap" "[r['id'] for r in s['requests']] == ['$r4']" || fail "only $r4 is pending: $snap"
echo "ok: a batch by project and path prefix gives one decision row per request ($r4 stays)"

r5=$(file_request R_0005 '["src/late.c"]' "five")
pg_cluster_stop fast
reply=$(post "$alice_origin" "$alice_token" "{\"cmd\":\"approve\",\"id\":\"$r5\"}" | head -n 1)
has "$reply" "not s['ok'] and s['error']['code'] == 'unreachable'" || fail "a decision with the ledger stopped is an error: $reply"
i=0
until has "$(snapshot "$alice_origin" "$alice_token")" "not s['centre']['reachable']"; do
  i=$((i + 1))
  [ $i -lt 20 ] || fail "the page never says the ledger is unreachable"
done
pg_cluster_start
i=0
until has "$(snapshot "$alice_origin" "$alice_token")" "s['centre']['reachable'] and '$r5' in [r['id'] for r in s['requests']]"; do
  i=$((i + 1))
  [ $i -lt 20 ] || fail "the page never sees the ledger again"
done
[ "$(echo "SELECT count(*) FROM fleet.decisions WHERE request_id = :'r';" | admin -v r="$r5")" = 0 ] ||
  fail "the failed decision wrote nothing"
echo "ok: with the ledger stopped a decision is an error and the page says so; it reconnects"

# `leasectl console --fleet` is the same console.
out=$base/alias.out
PGPASSFILE=$base/people.pgpass "$leasectl" console --fleet --db "host=$base/pg/sock port=5432 dbname=fleet user=alice" \
  >"$out" 2>"$base/alias.err" &
fleet_consoles="$fleet_consoles $!"
i=0
until grep -q '^http://' "$out"; do
  i=$((i + 1))
  [ $i -lt 100 ] || fail "console --fleet printed no URL: $(cat "$base/alias.err")"
  sleep 0.1
done
a_url=$(head -n 1 "$out")
snap=$(snapshot "$(printf '%s' "$a_url" | sed -E 's|^(http://[^/]+)/.*|\1|')" "$(printf '%s' "$a_url" | sed -E 's|.*token=||')")
has "$snap" "s['user'] == 'alice' and '$r5' in [r['id'] for r in s['requests']]" || fail "console --fleet: $snap"
[ "$a_url" != "$alice_url" ] || fail "two consoles, one URL"
echo "ok: leasectl console --fleet serves the same"
