#!/bin/sh
# The console's HTTP surface against a real daemon: every route needs the token;
# a wrong Host or Origin is refused; an action needs the token in its header, not
# only the cookie; a command that is not an action is refused; and a console run
# by the agent (uid 65534) cannot approve, while the daemon owner's can.
# Usage: console_http_test.sh LEASEFS LEASECTL
set -eu
leasefs=$1
leasectl=$2
base=$(mktemp -d /tmp/leasefs-console-http.XXXXXX)
chmod 0755 "$base"
root=$base/root
sock=$base/ctl.sock
mkdir -p "$root"
chmod 0777 "$root"
consoles=""
cleanup() {
  for p in $consoles; do kill "$p" 2>/dev/null || true; done
  "$leasefs" unmount "$root" >/dev/null 2>&1 || true
  fusermount3 -uz "$root" 2>/dev/null || true
  rm -rf "$base"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

status_of() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# start_console NAME [setpriv args...] [-- console args...]: the console's URL in
# $url, its pid in $consoles.
start_console() {
  name=$1
  shift
  args="--socket $sock"
  out=$base/$name.out
  : >"$out"
  if [ "$name" = discovery ]; then args=""; fi
  # shellcheck disable=SC2086
  "$@" "$leasectl" console $args >"$out" 2>"$base/$name.err" &
  consoles="$consoles $!"
  i=0
  while ! grep -q '^http://' "$out"; do
    i=$((i + 1))
    [ $i -lt 100 ] || fail "$name console printed no URL: $(cat "$base/$name.err")"
    sleep 0.1
  done
  url=$(head -n 1 "$out")
}

# A console started before the mount, with no --socket, finds the daemon by itself.
start_console discovery
discovery_url=$url

group=$(getent group 65534 | cut -d: -f1)
timeout 30 "$leasefs" mount "$root" --socket "$sock" --socket-group "$group" >/dev/null 2>&1 ||
  fail "leasefs mount"
timeout 10 "$leasectl" --socket "$sock" start "console http test" >/dev/null

start_console owner
owner_url=$url
hostport=$(printf '%s' "$url" | sed -E 's|^http://([^/]+)/.*|\1|')
token=$(printf '%s' "$url" | sed -E 's|.*token=||')
origin="http://$hostport"
[ ${#token} -eq 64 ] || fail "token of 64 hex digits: $token"

[ "$(status_of "$origin/")" = 401 ] || fail "no token must be 401"
[ "$(status_of "$origin/events")" = 401 ] || fail "events without token must be 401"
[ "$(status_of "$origin/console.js")" = 401 ] || fail "script without token must be 401"
[ "$(status_of "$origin/?token=0000$token" )" = 401 ] || fail "a wrong token must be 401"
[ "$(status_of -H "Host: evil.example:${hostport#*:}" "$owner_url")" = 403 ] ||
  fail "a rebound Host must be 403"
[ "$(status_of -H "Origin: http://evil.example" "$owner_url")" = 403 ] ||
  fail "a foreign Origin must be 403"
echo "ok: token, Host and Origin are required"

headers=$(curl -s -D - -o /dev/null "$owner_url")
printf '%s' "$headers" | grep -q '^HTTP/1.1 303' || fail "the token URL redirects: $headers"
printf '%s' "$headers" | grep -qi '^Set-Cookie: leasefs_console_token=.*HttpOnly; SameSite=Strict' ||
  fail "the token goes into a strict cookie: $headers"
page=$(curl -s -D - -H "Cookie: leasefs_console_token=$token" "$origin/")
printf '%s' "$page" | grep -qi "^Content-Security-Policy: default-src 'none'; script-src 'self';.*frame-ancestors 'none'" ||
  fail "a strict CSP: $page"
printf '%s' "$page" | grep -qi '^X-Content-Type-Options: nosniff' || fail "nosniff"
if printf '%s' "$page" | grep -qi '<script>'; then fail "no inline script"; fi
echo "ok: the page comes with a strict CSP and no inline script"

# An agent's request, as the agent.
req=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$leasectl" --json --socket "$sock" \
  request --reason "edit a.txt" --path a.txt | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["request"]["id"])')

post() { # post URL TOKEN ORIGIN BODY
  curl -s -w '\n%{http_code}' -X POST -H "Content-Type: application/json" \
    -H "X-Console-Token: $2" -H "Origin: $3" -H "Cookie: leasefs_console_token=$token" \
    --data "$4" "$1/api/action"
}
approve="{\"daemon\":\"$sock\",\"cmd\":\"approve\",\"args\":{\"id\":\"$req\"}}"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Content-Type: application/json" \
  -H "Origin: $origin" -H "Cookie: leasefs_console_token=$token" --data "$approve" "$origin/api/action")
[ "$code" = 401 ] || fail "an action with the cookie alone must be 401, got $code"
[ "$(post "$origin" "$token" "http://evil.example" "$approve" | tail -n 1)" = 403 ] ||
  fail "an action from another Origin must be 403"
[ "$(post "$origin" "" "$origin" "$approve" | tail -n 1)" = 401 ] ||
  fail "an action without the token header must be 401"
post "$origin" "$token" "$origin" "{\"daemon\":\"$sock\",\"cmd\":\"memory.save\",\"args\":{}}" |
  grep -q '"not an action"' || fail "memory.save is not a console action"
post "$origin" "$token" "$origin" '{"daemon":7,"cmd":["approve"]}' | grep -q '"not an action"' ||
  fail "a body of the wrong types is refused as such"
echo "ok: an action needs the token header and this Origin"

# The agent's own console: the daemon refuses the agent's approval.
start_console agent setpriv --reuid 65534 --regid 65534 --clear-groups
agent_url=$url
agent_origin="http://$(printf '%s' "$agent_url" | sed -E 's|^http://([^/]+)/.*|\1|')"
agent_token=$(printf '%s' "$agent_url" | sed -E 's|.*token=||')
reply=$(curl -s -X POST -H "Content-Type: application/json" -H "X-Console-Token: $agent_token" \
  -H "Origin: $agent_origin" --data "$approve" "$agent_origin/api/action")
printf '%s' "$reply" | grep -q '"code":"forbidden"' || fail "the agent's console approved: $reply"
[ "$agent_token" != "$token" ] || fail "two consoles, one token"
echo "ok: the agent's console cannot approve ($req stays pending)"

reply=$(post "$origin" "$token" "$origin" "$approve" | head -n 1)
printf '%s' "$reply" | grep -q '"ok":true' || fail "the owner's console could not approve: $reply"
echo "ok: the owner's console approves $req"

# The discovery console's live events name the daemon mounted after it started
# (it rescans every 2 s; other daemons on the machine may slow a round): each
# curl reads the stream for 8 s, for at most 10 tries.
d_origin=$(printf '%s' "$discovery_url" | sed -E 's|^(http://[^/]+)/.*|\1|')
d_token=$(printf '%s' "$discovery_url" | sed -E 's|.*token=||')
i=0
until grep -q "\"socket\":\"$sock\"" "$base/events" 2>/dev/null; do
  i=$((i + 1))
  [ $i -le 10 ] ||
    fail "the console without --socket did not find the new mount: $(head -c 300 "$base/events")"
  curl -s -N --max-time 8 -H "Cookie: leasefs_console_token=$d_token" "$d_origin/events" \
    >"$base/events" || true
done
echo "ok: a console without --socket shows a daemon mounted after it started"
