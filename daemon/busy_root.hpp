// Processes that already reach the tree a mount is about to cover.
//
// Mounting over ROOT does not move a process whose cwd, root, open descriptors
// or memory mappings are already inside ROOT: it keeps the raw tree underneath
// and writes it ungated. `leasefs mount` refuses to cover such a tree unless
// --allow-busy, and `status` names those processes while they live.
//
// A reference counts when its path (as /proc shows it) is ROOT or below AND it
// lies on the raw tree's device: a process inside a leasefs mount at the same
// path (live or dead) reaches the mount, not the tree, and is not listed.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace leasefs::daemon {

struct BusyProcess {
  pid_t pid = 0;
  std::string command;  // /proc/PID/comm
  std::string where;    // "cwd", "root", "fd 3 (ROOT/a.txt)", "mapping (ROOT/lib.so)"
};

// Scans /proc/* (all but `except`) for references into `root` (an absolute,
// canonical path) on device `dev`.
std::vector<BusyProcess> find_busy_processes(const std::string& root, dev_t dev, pid_t except);

// "1234 (bash: cwd), 5678 (python3: fd 3 (/srv/p/x))", at most `limit` named.
std::string describe_busy(const std::vector<BusyProcess>& busy, size_t limit = 10);

}  // namespace leasefs::daemon
