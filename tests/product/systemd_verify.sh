#!/bin/sh
# Verifies the systemd units with systemd-analyze: no error and no warning.
# usage: systemd_verify.sh LEASEFS_BINARY UNIT_DIR LEASEFS_BRIDGE_BINARY
set -eu
bin=$1
units=$2
bridge=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root" "$work/xdg"
chmod 700 "$work/xdg"
instance=$(systemd-escape --path "$work/root")

check() { # scope unit-file
  scope=$1
  unit="$work/leasefs@$instance.service"
  sed "s#/usr/local/bin/leasefs#$bin#g" "$2" > "$unit"
  out=$(XDG_RUNTIME_DIR="$work/xdg" systemd-analyze $scope verify "$unit" 2>&1) || {
    echo "FAIL: systemd-analyze $scope verify $2 exited non-zero:"; echo "$out"; exit 1; }
  if [ -n "$out" ]; then
    echo "FAIL: systemd-analyze $scope verify $2 printed:"; echo "$out"; exit 1
  fi
  echo "ok: $2"
}

# The check itself must be able to fail: a unit with a bad key is reported.
printf '[Service]\nType=notify\nExecStart=/bin/true\nNoSuchKey=1\n' > "$work/bad.service"
if [ -z "$(systemd-analyze verify "$work/bad.service" 2>&1)" ]; then
  echo "FAIL: systemd-analyze did not report a unit with an unknown key"; exit 1
fi

check --system "$units/leasefs@.service"
check --user "$units/user/leasefs@.service"
grep -q '^Type=notify$' "$units/leasefs@.service"
grep -q '^Type=notify$' "$units/user/leasefs@.service"

# The fleet's bridge: its own user (never root, never a DynamicUser= that could
# not own its credentials), its settings from /etc/leasefs, hardened, no listening.
unit="$work/leasefs-bridge.service"
sed "s#/usr/local/bin/leasefs-bridge#$bridge#g" "$units/leasefs-bridge.service" > "$unit"
out=$(systemd-analyze verify "$unit" 2>&1) || {
  echo "FAIL: systemd-analyze verify leasefs-bridge.service exited non-zero:"; echo "$out"; exit 1; }
if [ -n "$out" ]; then echo "FAIL: systemd-analyze verify leasefs-bridge.service printed:"; echo "$out"; exit 1; fi
for line in '^User=leasefs-bridge$' '^EnvironmentFile=/etc/leasefs/leasefs-bridge.env$' \
            '^ExecStart=/usr/local/bin/leasefs-bridge run --credentials ${LEASEFS_BRIDGE_CREDENTIALS} $LEASEFS_BRIDGE_DAEMONS' \
            '^Restart=on-failure$' '^NoNewPrivileges=yes$' '^ProtectSystem=strict$' '^ProtectHome=yes$' \
            '^PrivateTmp=yes$' '^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$' '^SocketBindDeny=any$' \
            '^SystemCallFilter=~.* listen accept accept4$' '^CapabilityBoundingSet=$'; do
  grep -q -- "$line" "$units/leasefs-bridge.service" || { echo "FAIL: leasefs-bridge.service lacks $line"; exit 1; }
done
if grep -q '^DynamicUser=' "$units/leasefs-bridge.service"; then echo "FAIL: leasefs-bridge.service has DynamicUser="; exit 1; fi
# The example settings name the credentials file under /etc/leasefs, and no daemon
# until one is filled in.
grep -q '^LEASEFS_BRIDGE_CREDENTIALS=/etc/leasefs/' "$units/leasefs-bridge.env.example" ||
  { echo "FAIL: leasefs-bridge.env.example sets no credentials file under /etc/leasefs"; exit 1; }
grep -q '^#LEASEFS_BRIDGE_DAEMONS=--daemon /' "$units/leasefs-bridge.env.example" ||
  { echo "FAIL: leasefs-bridge.env.example has no commented LEASEFS_BRIDGE_DAEMONS"; exit 1; }
score=$(systemd-analyze security --offline=yes "$unit" 2>&1 | awk '/Overall exposure level/ {print $(NF-2)}')
awk -v s="$score" 'BEGIN { exit !(s + 0 > 0 && s + 0 <= 2.0) }' || { echo "FAIL: leasefs-bridge.service exposure $score is above 2.0"; exit 1; }
echo "ok: $units/leasefs-bridge.service (exposure $score)"
