# Sourced by bench/mutation_profile.sh and bench/mutation_syscalls.sh: the one
# workload both count. `workload OP DIR COUNT` creates files 1..COUNT in DIR,
# renames each to r<N>, or removes r1..r<COUNT>.
workload() {  # op dir count
  case $1 in
    create) (cd "$2" && seq 1 "$3" | xargs touch) ;;
    rename) (cd "$2" && seq 1 "$3" | python3 -c "
import os,sys
for line in sys.stdin:
    a=line.strip(); os.rename(a,'r'+a)") ;;
    unlink) (cd "$2" && seq 1 "$3" | sed 's/^/r/' | xargs rm -f) ;;
  esac
}
