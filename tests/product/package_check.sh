#!/bin/sh
# Builds the .deb from a built tree, unpacks it into a temporary root and checks
# what a Debian user gets: stripped binaries with the debug info in -dbgsym, man
# pages, bash completion, the agent-turn wrapper, the mount(8) helper, the
# /etc/leasefs example (a conffile), a postinst that makes the audit-signing key,
# a postrm, units that name /usr and pass
# `systemd-analyze verify`, and the system unit's `systemd-analyze security` score.
# usage: package_check.sh BUILD_DIR      (BUILD_DIR fully built: cpack installs it)
# cpack must not overwrite build/install_manifest.txt.
set -eu
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# cpack must leave `cmake --install`'s manifest (read by `uninstall`) as it is.
manifest_before=$(cat "$build/install_manifest.txt" 2>/dev/null || echo none)
(cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
[ "$(cat "$build/install_manifest.txt" 2>/dev/null || echo none)" = "$manifest_before" ] ||
  fail "cpack overwrote build/install_manifest.txt"
echo "ok: cpack left build/install_manifest.txt alone"
deb=$(ls "$work"/pkg/leasefs_*.deb | grep -v dbgsym)
dbg=$(ls "$work"/pkg/leasefs-dbgsym_*.ddeb "$work"/pkg/leasefs-dbgsym_*.deb 2>/dev/null | head -n 1)
echo "ok: built $(basename "$deb") and $(basename "${dbg:-no-dbgsym}")"
[ -n "$dbg" ] || fail "no -dbgsym package"
dpkg-deb --info "$deb" | grep -q 'Depends:.*fuse3' || fail "the package does not depend on fuse3"

root=$work/root
dpkg -x "$deb" "$root"
dpkg -x "$dbg" "$work/dbg"
for f in usr/bin/leasefs usr/bin/leasectl usr/bin/leasefs-agent-turn \
         usr/share/man/man8/leasefs.8.gz usr/share/man/man1/leasectl.1.gz \
         usr/share/bash-completion/completions/leasefs usr/share/bash-completion/completions/leasectl \
         usr/lib/systemd/system/leasefs@.service usr/lib/systemd/user/leasefs@.service \
         usr/share/doc/leasefs/README.md usr/share/doc/leasefs/docs/leases.md usr/sbin/mount.fuse.leasefs etc/leasefs/leasefs.env.example \
         usr/bin/leasefs-bridge usr/lib/systemd/system/leasefs-bridge.service \
         usr/lib/sysusers.d/leasefs-bridge.conf etc/leasefs/leasefs-bridge.env.example; do
  [ -e "$root/$f" ] || fail "$f is missing from the package"
done
for b in leasefs leasectl; do
  readelf -S "$root/usr/bin/$b" | grep -q '\.debug_info' && fail "usr/bin/$b is not stripped"
  id=$(readelf -n "$root/usr/bin/$b" | awk '/Build ID/ {print $3}')
  [ -f "$work/dbg/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" ] ||
    fail "no split debug info for usr/bin/$b (build id $id)"
done
echo "ok: stripped binaries, debug info in the -dbgsym package by build id"
zcat "$root/usr/share/man/man1/leasectl.1.gz" | grep -q '^\.SH "LEASECTL MCP"' || fail "leasectl(1) lacks mcp"
man -l "$root/usr/share/man/man8/leasefs.8.gz" >/dev/null 2>&1 || fail "leasefs(8) does not render"
for page in man8/leasefs.8.gz man1/leasectl.1.gz; do
  for section in ENVIRONMENT FILES '"EXIT STATUS"' EXAMPLES; do
    zcat "$root/usr/share/man/$page" | grep -qx ".SH $section" || fail "$page has no $section section"
  done
done
zcat "$root/usr/share/man/man1/leasectl.1.gz" | grep -q '^\.B LEASEFS_SOCKET' || fail "leasectl(1) does not name LEASEFS_SOCKET"
bash -c ". '$root/usr/share/bash-completion/completions/leasectl'; COMP_WORDS=(leasectl gra); COMP_CWORD=1; _leasectl; [ \"\${COMPREPLY[*]}\" = 'grant grants' ]" ||
  fail "completion of 'leasectl gra' is not 'grant grants'"
echo "ok: man pages and bash completion"

# /etc/leasefs: the commented example is a conffile, and the unit reads its siblings.
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/leasefs/leasefs.env.example ||
  fail "/etc/leasefs/leasefs.env.example is not a conffile"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/leasefs/leasefs-bridge.env.example ||
  fail "/etc/leasefs/leasefs-bridge.env.example is not a conffile"
grep -q '^EnvironmentFile=/etc/leasefs/leasefs-bridge.env$' "$root/usr/lib/systemd/system/leasefs-bridge.service" ||
  fail "the bridge's unit does not read /etc/leasefs/leasefs-bridge.env"
grep -q '^u leasefs-bridge ' "$root/usr/lib/sysusers.d/leasefs-bridge.conf" || fail "no sysusers entry for leasefs-bridge"
grep -q '^#LEASEFS_OPTIONS=--agent' "$root/etc/leasefs/leasefs.env.example" || fail "the example has no commented LEASEFS_OPTIONS"
grep -q '^EnvironmentFile=-/etc/leasefs/%i.env' "$root/usr/lib/systemd/system/leasefs@.service" ||
  fail "the system unit does not read /etc/leasefs/INSTANCE.env"
grep -q '^leasefs=/usr/bin/leasefs ' "$root/usr/sbin/mount.fuse.leasefs" || fail "mount.fuse.leasefs does not run /usr/bin/leasefs"
[ -x "$root/usr/sbin/mount.fuse.leasefs" ] || fail "mount.fuse.leasefs is not executable"
# Removal: dpkg removes every file it lists (the units among them); postrm reloads systemd.
dpkg-deb --contents "$deb" | grep -q '/usr/lib/systemd/system/leasefs@.service$' || fail "the unit is not a package file"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postrm | grep -q 'systemctl daemon-reload' || fail "no postrm reloading systemd"
# Install: postinst makes the audit-signing key when there is none, never another.
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst > "$work/postinst"
grep -q 'leasefs keygen --key /etc/leasefs/audit-signing.key' "$work/postinst" ||
  fail "postinst does not make the audit-signing key"
grep -q 'systemd-sysusers leasefs-bridge.conf' "$work/postinst" || fail "postinst does not make the bridge's user"
sh -n "$work/postinst" || fail "postinst is not valid sh"
echo "ok: /etc/leasefs example (conffile), mount.fuse.leasefs, postinst, postrm"

for unit in system/leasefs@.service user/leasefs@.service; do
  grep -q '^ExecStart=/usr/bin/leasefs ' "$root/usr/lib/systemd/$unit" || fail "$unit does not run /usr/bin/leasefs"
  grep -q '/usr/local' "$root/usr/lib/systemd/$unit" && fail "$unit still names /usr/local"
done
inst=$(systemd-escape --path /srv/project)
# The installed units, with their binary where the package was unpacked (systemd
# checks that ExecStart= exists); nothing else is changed.
mkdir -p "$work/u" "$work/xdg" && chmod 700 "$work/xdg"
sed "s#/usr/bin/leasefs#$root/usr/bin/leasefs#g" "$root/usr/lib/systemd/system/leasefs@.service" > "$work/leasefs@$inst.service"
sed "s#/usr/bin/leasefs#$root/usr/bin/leasefs#g" "$root/usr/lib/systemd/user/leasefs@.service" > "$work/u/leasefs@$inst.service"
out=$(systemd-analyze verify "$work/leasefs@$inst.service" 2>&1) || fail "verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify printed: $out"
out=$(XDG_RUNTIME_DIR="$work/xdg" systemd-analyze --user verify "$work/u/leasefs@$inst.service" 2>&1) ||
  fail "user verify: $out"
[ -z "$out" ] || fail "systemd-analyze --user verify printed: $out"
grep -q '^ExecStart=/usr/bin/leasefs-bridge run ' "$root/usr/lib/systemd/system/leasefs-bridge.service" ||
  fail "leasefs-bridge.service does not run /usr/bin/leasefs-bridge"
grep -q '/usr/local' "$root/usr/lib/systemd/system/leasefs-bridge.service" && fail "leasefs-bridge.service still names /usr/local"
sed "s#/usr/bin/leasefs-bridge#$root/usr/bin/leasefs-bridge#g" "$root/usr/lib/systemd/system/leasefs-bridge.service" > "$work/leasefs-bridge.service"
out=$(systemd-analyze verify "$work/leasefs-bridge.service" 2>&1) || fail "bridge verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify leasefs-bridge.service printed: $out"
echo "ok: systemd-analyze verify (system and user units, the bridge's unit)"
score=$(systemd-analyze security --offline=yes "$work/leasefs@$inst.service" 2>&1 |
  awk '/Overall exposure level/ {print $(NF-2)}')
echo "ok: systemd-analyze security leasefs@.service: $score"
awk -v s="$score" 'BEGIN { exit !(s + 0 > 0 && s + 0 <= 4.5) }' || fail "exposure $score is above 4.5"
