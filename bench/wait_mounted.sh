# Sourced by the bench scripts that mount: `wait_mounted DIR` returns once DIR
# is a mount point that answers, and ends the script after 5 s without one.
wait_mounted() {  # dir
  for _ in $(seq 100); do
    grep -q " $1 " /proc/self/mountinfo && stat "$1" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "mount at $1 did not come up" >&2
  exit 1
}
