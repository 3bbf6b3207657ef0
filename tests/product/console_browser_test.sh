#!/bin/sh
# The console in a real browser (Debian's chromium, driven by playwright-core)
# against a real mount: the agent (uid 65534) is refused a write to a file with a
# hostile name and asks for it; the page shows both live, the name as text; the
# person approves on the page; the agent's retry goes through; at the end the
# agent fills the disk and the page names the command that frees it.
# Usage: console_browser_test.sh LEASEFS LEASECTL WORKDIR   (exit 77: skipped)
set -eu
leasefs=$1
leasectl=$2
work=$3
here=$(dirname "$0")
for tool in chromium npm node mkfs.ext4; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (scripts/install-deps installs it)"
    exit 77
  fi
done
sh "$here/../../scripts/install-playwright" "$work/playwright"

base=$(mktemp -d /tmp/leasefs-console-browser.XXXXXX)
chmod 0755 "$base"
root=$base/root
sock=$base/ctl.sock
mkdir -p "$root"
# The root is a small file system of its own, so that the page can be seen on a
# full disk at the end.
truncate -s 64M "$base/disk.img"
mkfs.ext4 -q -F -m 0 "$base/disk.img"
mount -o loop "$base/disk.img" "$root"
chmod 0777 "$root"
# The hostile name: markup and a script, should the page ever parse it.
name='<img src=x onerror="window.pwned=1">.txt'
printf 'before\n' >"$root/$name"
chmod 0666 "$root/$name"
console=""
cleanup() {
  [ -z "$console" ] || kill "$console" 2>/dev/null || true
  "$leasefs" unmount "$root" >/dev/null 2>&1 || true
  fusermount3 -uz "$root" 2>/dev/null || true
  umount "$root" 2>/dev/null || umount -l "$root" 2>/dev/null || true
  rm -rf "$base"
}
trap cleanup EXIT INT TERM

group=$(getent group 65534 | cut -d: -f1)
timeout 30 "$leasefs" mount "$root" --socket "$sock" --socket-group "$group" >/dev/null 2>&1
timeout 10 "$leasectl" --socket "$sock" start "console browser test" >/dev/null
"$leasectl" console --socket "$sock" >"$base/console.out" 2>"$base/console.err" &
console=$!
i=0
while ! grep -q '^http://' "$base/console.out"; do
  i=$((i + 1))
  [ $i -lt 100 ] || { echo "the console printed no URL: $(cat "$base/console.err")"; exit 1; }
  sleep 0.1
done
mkdir -p "$work/screenshots"
CONSOLE_URL=$(head -n 1 "$base/console.out") LEASECTL="$leasectl" SOCK="$sock" ROOT="$root" \
  HOSTILE_NAME="$name" PLAYWRIGHT_DIR="$work/playwright" SHOTS="$work/screenshots" \
  timeout 240 node "$here/console_browser_test.cjs"
