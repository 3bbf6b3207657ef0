#!/bin/sh
# Subcommand help says what differs between `turn` and `end-turn`, lists every
# state `transition` takes, and shows --json on the commands that take it.
# usage: subcommand_help_test.sh LEASECTL
set -eu
fail() { echo "FAIL: $*"; exit 1; }
turn=$("$1" turn --help)
end=$("$1" end-turn --help)
case $turn in *"turn number goes up by one"*) ;; *) fail "turn --help: $turn" ;; esac
case $end in *"turn number stays"*"ask mode"*|*"ask mode"*"turn number stays"*) ;; *) fail "end-turn --help: $end" ;; esac
echo "ok: turn and end-turn say what differs"
help=$("$1" transition --help)
for state in pending in_progress paused blocked waiting_verification completed failed; do
  case $help in *"$state"*) ;; *) fail "transition --help lacks $state" ;; esac
done
echo "ok: transition lists its states"
for cmd in status grants requests diff "audit verify"; do
  # shellcheck disable=SC2086
  case $("$1" $cmd --help) in *--json*) ;; *) fail "$cmd --help does not show --json" ;; esac
done
echo "ok: --json shown in subcommand help"
