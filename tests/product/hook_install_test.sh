#!/bin/sh
# `leasectl hooks claude-code --install` and `hooks codex --install` merge the
# hooks into the project's .claude/settings.json and .codex/hooks.json: what is
# there stays (other settings, other hooks on the same events), a second run
# adds nothing, the command names this leasectl by its resolved path, the tool
# hooks come with the turn hooks, and a file
# that is not a JSON object is refused and left as it was.
# usage: hook_install_test.sh LEASECTL
set -eu
leasectl=$(readlink -f "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/p/.claude"
cat > "$work/p/.claude/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash(make:*)"]},
 "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
JSON
# Through a symlink, as an installed binary may be reached: the hook names its target.
ln -s "$leasectl" "$work/leasectl-link"
(cd "$work/p" && "$work/leasectl-link" hooks claude-code --install) || fail "claude-code --install"
"$work/leasectl-link" hooks codex --install --project "$work/p" || fail "codex --install"
cp "$work/p/.claude/settings.json" "$work/first.json"
cp "$work/p/.codex/hooks.json" "$work/first-codex.json"
out=$("$work/leasectl-link" hooks claude-code --install --project "$work/p")
case $out in *"already has the leasefs hooks"*) ;; *) fail "second install said: $out" ;; esac
"$work/leasectl-link" hooks codex --install --project "$work/p" >/dev/null
cmp -s "$work/first.json" "$work/p/.claude/settings.json" || fail "a second install changed settings.json"
cmp -s "$work/first-codex.json" "$work/p/.codex/hooks.json" || fail "a second install changed hooks.json"
python3 - "$work/p/.claude/settings.json" "$work/p/.codex/hooks.json" "$leasectl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["permissions"] == {"allow": ["Bash(make:*)"]}, s
def commands(settings, event):
    return [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
assert commands(s, "Stop") == ["notify-send done", "'%s' --hook end-turn" % sys.argv[3]], commands(s, "Stop")
assert commands(s, "UserPromptSubmit") == ["'%s' --hook turn || exit 2" % sys.argv[3]], s
c = json.load(open(sys.argv[2]))
assert commands(c, "Stop") == ["'%s' --hook end-turn" % sys.argv[3]], c
assert commands(c, "UserPromptSubmit") == ["'%s' --hook turn || exit 2" % sys.argv[3]], c
# The tool hooks: a mark before each tool, the refusals after it (Claude Code
# also after a tool that failed; Codex has no such event).
for settings, after in ((s, ["PostToolUse", "PostToolUseFailure"]), (c, ["PostToolUse"])):
    assert commands(settings, "PreToolUse") == ["'%s' --hook refusals mark" % sys.argv[3]], settings
    for event in after:
        assert commands(settings, event) == ["'%s' --hook refusals since" % sys.argv[3]], settings
    assert all("matcher" not in g for g in settings["hooks"]["PreToolUse"]), settings
assert "PostToolUseFailure" not in c["hooks"], c
PY
echo "ok: merged, kept the rest, idempotent, names $leasectl"

printf '[1, 2' > "$work/p/.claude/settings.json"
if err=$("$leasectl" hooks claude-code --install --project "$work/p" 2>&1); then fail "a broken settings.json was overwritten"; fi
case $err in *"not a JSON object; left as it was"*) ;; *) fail "broken settings.json: $err" ;; esac
[ "$(cat "$work/p/.claude/settings.json")" = '[1, 2' ] || fail "a broken settings.json was changed"
echo "ok: a settings.json that is not a JSON object is refused: $err"
