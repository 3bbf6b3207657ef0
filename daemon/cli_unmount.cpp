// `leasefs unmount PATH`: unmount, then make sure the daemon that served it is gone.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.hpp"
#include "daemon/cli.hpp"
#include "daemon/mount_table.hpp"
#include "fuse/takeover.hpp"
#include "state/longrun_dir.hpp"

namespace leasefs::daemon {

namespace {

// Alive and not a zombie: a detached daemon that exited waits for the system's
// init to reap it, which can take a while in containers.
bool running(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

// Dead mounts left beneath by crashes (a takeover mounts on top of them): the
// path is cleared all the way down, each layer failing closed until it goes.
bool clear_dead_layers(const std::string& path) {
  for (int i = 0; i < 10000 && fuse::dead_leasefs_mount(path); ++i) {
    if (!fusermount({"-uz"}, path)) return false;
  }
  return !fuse::dead_leasefs_mount(path);
}

}  // namespace

int run_unmount(const std::string& given, bool force) {
  std::string path = given;
  if (char buf[PATH_MAX]; ::realpath(given.c_str(), buf)) {
    path = buf;
  } else if (!given.empty() && given[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd)) path = std::string(cwd) + "/" + given;
  }
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (!leasefs_mount_at(path)) {
    // A root served at another mount point (leasefs mount ROOT MOUNTPOINT): the
    // root names the mount as well as its mount point does.
    std::vector<std::string> serving;
    for (const auto& m : base::read_mountinfo()) {
      if (m.fstype == "fuse.leasefs" && m.source == path) serving.push_back(m.mount_point);
    }
    if (serving.size() != 1) {
      std::fprintf(stderr, "error: %s is not a leasefs mount%s\n", path.c_str(),
                   serving.empty() ? "" : " (it is the root of several; name the mount point)");
      return 1;
    }
    std::fprintf(stderr, "note: %s is served at %s; unmounting that\n", path.c_str(),
                 serving[0].c_str());
    path = serving[0];
  }
  // statfs always reaches the daemon (stat may be answered from the attr cache).
  struct statfs sfs {};
  if (::statfs(path.c_str(), &sfs) != 0 && errno == ENOTCONN) {
    // A crash leaves this; systemd runs ExecStop= after one too. Removing it would
    // open the raw tree to whoever enters the path before a new daemon mounts.
    if (!force) {
      std::fprintf(stderr,
                   "note: %s is a dead mount (its daemon has ended); it stays, and the tree "
                   "stays closed, until a daemon takes over (leasefs mount %s).\n"
                   "To remove it and open the raw tree, run: leasefs unmount --force %s\n",
                   path.c_str(), path.c_str(), path.c_str());
      return 0;
    }
    std::fprintf(stderr, "note: %s was a dead mount (its daemon had ended); cleared\n",
                 path.c_str());
    return clear_dead_layers(path) ? 0 : 1;
  }
  pid_t pid = 0;
  {
    base::UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (fd) pid = state::LongrunDir::lock_holder(fd.get());
  }
  if (pid <= 0 && !force) {
    // No daemon holds the root, yet the mount answered: one being torn down.
    // Over io_uring the kernel ends a killed daemon's connection only once its
    // rings are gone, after the process itself; removing the mount then would
    // open the raw tree, as for a dead one. Kept, as a dead mount is.
    std::fprintf(stderr,
                 "note: no daemon serves %s; its mount stays, and the tree stays closed, "
                 "until a daemon takes over (leasefs mount %s).\n"
                 "To remove it and open the raw tree, run: leasefs unmount --force %s\n",
                 path.c_str(), path.c_str(), path.c_str());
    return 0;
  }
  if (!fusermount({"-u"}, path) && !fusermount({"-uz"}, path)) {
    std::fprintf(stderr, "error: cannot unmount %s\n", path.c_str());
    return 1;
  }
  if (pid <= 0) return clear_dead_layers(path) ? 0 : 1;
  ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running(pid)) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "error: the daemon (pid %d) is still running after 10 s\n", pid);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return clear_dead_layers(path) ? 0 : 1;
}

}  // namespace leasefs::daemon
