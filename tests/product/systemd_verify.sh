#!/bin/sh
# Verifies the systemd units with systemd-analyze: no error and no warning.
# usage: systemd_verify.sh LEASEFS_BINARY UNIT_DIR
set -eu
bin=$1
units=$2
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
