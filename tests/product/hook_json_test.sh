#!/bin/sh
# `leasectl hooks claude-code|codex` (and the first spelling, `leasectl hook`) print
# settings JSON that parses, whose prompt hook runs `leasectl --hook turn` and turns
# any failure into exit 2 (the only code a host treats as "block"), and whose stop
# hook runs `leasectl --hook end-turn`.
set -eu
for spelling in "hooks claude-code" "hooks codex" "hook claude-code"; do
  # shellcheck disable=SC2086
  out=$("$1" $spelling)
  printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
def commands(event):
    return [h["command"] for group in s["hooks"][event] for h in group["hooks"] if h["type"] == "command"]
prompt, stop = commands("UserPromptSubmit"), commands("Stop")
assert len(prompt) == 1 and prompt[0].endswith(" --hook turn || exit 2"), prompt
assert "leasectl" in prompt[0], prompt
assert len(stop) == 1 and stop[0].endswith(" --hook end-turn"), stop
'
  echo "ok: leasectl $spelling"
done
