// The real `leasefs` daemon over a fresh root (RootDaemonTest), attacked by a
// process running as uid 65534. Its own: the agent forked as that uid, a listing
// by fd, and mounts under the root (a small disk) detached after the leasefs ones.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/daemon_site.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {

inline const std::string kLeasefs = LEASEFS_BIN;

class FdcrashTest : public RootDaemonTest {
 protected:
  FdcrashTest() : RootDaemonTest("leasefs-fdcrash-") {}
  void TearDown() override {
    RootDaemonTest::TearDown();
    for (const std::string& mp : other_mounts) run_argv({"umount", "-l", mp});
  }
  // Forks a child that drops to the agent's uid and runs `body` (which must only
  // make async-signal-safe calls) until it is killed; killed in TearDown.
  template <typename Body>
  pid_t spawn_agent(Body body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(kAgentUid, kAgentUid, kAgentUid) != 0 ||
          ::setresuid(kAgentUid, kAgentUid, kAgentUid) != 0) {
        ::_exit(99);
      }
      body();
      ::_exit(0);
    }
    if (pid > 0) children.push_back(pid);
    return pid;
  }
  // Entries of a directory opened by fd (not through any mount), sorted.
  static std::vector<std::string> list_dir(int dir_fd) {
    std::vector<std::string> out;
    const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return out;
    DIR* d = ::fdopendir(fd);
    while (struct dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

  std::vector<std::string> other_mounts;  // detached after the leasefs ones
};

}  // namespace leasefs::test
