# Sourced by bench/mutation_profile.sh, mutation_syscalls.sh and mutation_ab.sh: the one
# workload they count. `workload OP DIR COUNT` creates files 1..COUNT in DIR,
# renames each to r<N>, removes r1..r<COUNT>, or (write) writes COUNT files of
# 4 KiB by python3, one open-write-close each, as fs_bench's write_small, or
# (attrs) gives each file `write` made a mode and times, by name, as tar does
# after extracting it.
workload() {  # op dir count
  case $1 in
    create) (cd "$2" && seq 1 "$3" | xargs touch) ;;
    rename) (cd "$2" && seq 1 "$3" | python3 -c "
import os,sys
for line in sys.stdin:
    a=line.strip(); os.rename(a,'r'+a)") ;;
    unlink) (cd "$2" && seq 1 "$3" | sed 's/^/r/' | xargs rm -f) ;;
    write) (cd "$2" && python3 -c "
import sys
data = b'x' * 4096
for i in range(int(sys.argv[1])):
    with open('w%d' % i, 'wb') as f: f.write(data)" "$3") ;;
    attrs) (cd "$2" && python3 -c "
import os, sys
for i in range(int(sys.argv[1])):
    os.chmod('w%d' % i, 0o640)
    os.utime('w%d' % i, ns=(1000000000 + i, 2000000000 + i))" "$3") ;;
  esac
}
