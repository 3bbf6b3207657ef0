#!/bin/sh
# `leasectl hook claude-code` prints settings JSON that parses, and whose hooks run
# `leasectl turn` on a prompt and `leasectl end-turn` when the agent stops.
set -eu
out=$("$1" hook claude-code)
printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
def commands(event):
    return [h["command"] for group in s["hooks"][event] for h in group["hooks"] if h["type"] == "command"]
assert "leasectl turn" in commands("UserPromptSubmit"), s
assert "leasectl end-turn" in commands("Stop"), s
print("ok: hook settings parse and name leasectl turn / end-turn")
'
