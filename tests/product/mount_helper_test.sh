#!/bin/sh
# `cmake --install` into a temporary prefix, then a real mount through mount(8):
# `mount -t fuse.leasefs ROOT MOUNTPOINT -o ro,noatime,...` and an fstab line,
# both through the installed mount.fuse.leasefs. Checks that ro makes the mount
# read-only, that fstab-only options are dropped, that an option leasefs sets
# itself is refused with its reason, and that the `uninstall` target removes
# every installed file (units, helper, /etc example included).
# mount(8) looks for helpers only in /sbin: the installed helper is linked there
# for the test (skipped, exit 77, if one is already installed).
# usage: mount_helper_test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
helper=/usr/sbin/mount.fuse.leasefs
[ -e "$helper" ] || [ -L "$helper" ] && { echo "SKIP: $helper exists"; exit 77; }
work=$(mktemp -d)
cleanup() {
  for mp in "$work/mp" "$work/fstab-mp"; do
    pid=$(cat "$mp.pid" 2>/dev/null)
    timeout 10 fusermount3 -uz "$mp" 2>/dev/null
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
  done
  rm -f "$helper"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
mountpid() { grep -l "mount $1" /proc/[0-9]*/cmdline 2>/dev/null | head -n 1 | cut -d/ -f3; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "install"; }
for f in sbin/mount.fuse.leasefs etc/leasefs/leasefs.env.example lib/systemd/system/leasefs@.service; do
  grep -qx "$prefix/$f" "$build/install_manifest.txt" || fail "$f is not in install_manifest.txt"
done
grep -q "^EnvironmentFile=-$prefix/etc/leasefs/%i.env" "$prefix/lib/systemd/system/leasefs@.service" ||
  fail "the unit does not read the env file next to the installed example"
ln -s "$prefix/sbin/mount.fuse.leasefs" "$helper"

mkdir -p "$work/root" "$work/mp" "$work/fstab-mp"
echo before > "$work/root/file"
timeout 60 mount -t fuse.leasefs "$work/root" "$work/mp" -o ro,noatime,nodev,_netdev,x-systemd.automount ||
  fail "mount -t fuse.leasefs -o ro,noatime,..."
mountpid "$work/root $work/mp" > "$work/mp.pid"
opts=$(awk -v mp="$work/mp" '$5 == mp && / - fuse\.leasefs / {print $6}' /proc/self/mountinfo)
echo "ok: mounted through mount(8), mount options $opts"
case ",$opts," in *,ro,*) ;; *) fail "not read-only: $opts" ;; esac
case ",$opts," in *,noatime,*) ;; *) fail "no noatime: $opts" ;; esac
[ "$(cat "$work/mp/file")" = before ] || fail "the mount does not show the root"
err=$( (echo after > "$work/mp/file") 2>&1) && fail "a write to a ro mount succeeded"
case $err in *"Read-only file system"*) ;; *) fail "a write to a ro mount: $err" ;; esac
[ "$(cat "$work/root/file")" = before ] || fail "the ro mount let a write through"
echo "ok: -o ro: $err"
umount "$work/mp" || fail "umount"
pid=$(cat "$work/mp.pid")
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "the daemon outlived umount"
echo "ok: umount ends the daemon"

err=$(timeout 30 mount -t fuse.leasefs "$work/root" "$work/mp" -o allow_other 2>&1) &&
  fail "-o allow_other was accepted"
case $err in *"allow_other: refused: leasefs sets it itself"*) ;; *) fail "-o allow_other: $err" ;; esac
awk -v mp="$work/mp" '$5 == mp' /proc/self/mountinfo | grep -q . && fail "a refused -o mounted anyway"
echo "ok: -o allow_other is refused: $err"

echo "$work/root $work/fstab-mp fuse.leasefs noauto,nofail,noexec 0 0" > "$work/fstab"
timeout 60 mount --fstab "$work/fstab" "$work/fstab-mp" || fail "mount from an fstab line"
mountpid "$work/root $work/fstab-mp" > "$work/fstab-mp.pid"
opts=$(awk -v mp="$work/fstab-mp" '$5 == mp && / - fuse\.leasefs / {print $6}' /proc/self/mountinfo)
case ",$opts," in *,noexec,*) ;; *) fail "fstab's noexec not passed on: $opts" ;; esac
echo "ok: fstab line mounted, options $opts"
umount "$work/fstab-mp" || fail "umount of the fstab mount"

rm -f "$helper"
cmake --build "$build" --target uninstall >"$work/uninstall.log" 2>&1 || { cat "$work/uninstall.log"; fail "uninstall"; }
left=$(find "$prefix" -type f -o -type l)
[ -z "$left" ] || fail "uninstall left: $left"
[ -d "$prefix/etc/leasefs" ] && fail "uninstall left the empty etc/leasefs"
echo "ok: uninstall removed every installed file, units and helper included"
