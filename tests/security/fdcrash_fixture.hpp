// The real `leasefs` daemon over a fresh root, attacked by a process running as
// uid 65534. Teardown clears every leasefs mount stacked on the root (a takeover
// leaves dead ones beneath the live one), kills every daemon and agent seen,
// whatever happened in the test.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/mount_table.hpp"
#include "fuse/takeover.hpp"
#include "tests/support/daemon_run.hpp"
#include "tests/support/mounted_fs.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {

inline const std::string kLeasefs = LEASEFS_BIN;
inline constexpr uid_t kAgentUid = 65534;

// Polls `done` every 10 ms for up to `seconds`; true once it holds.
template <typename Pred>
bool wait_until(Pred done, int seconds = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class FdcrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base = make_temp_dir("leasefs-fdcrash-");
    ::chmod(base.c_str(), 0755);
    root = base + "/root";
    sock = base + "/ctl.sock";
    ::mkdir(root.c_str(), 0755);
  }
  void TearDown() override {
    for (pid_t pid : children) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    for (int i = 0; i < 1000 && base::leasefs_mount_at(root); ++i) {
      remember(read_lock_pid(root + "/.longrun/lock"));
      RunOptions o;
      o.timeout_s = 10;
      run_argv({"fusermount3", "-uz", root}, o);
    }
    for (pid_t pid : daemons) ::kill(pid, SIGKILL);
    for (const std::string& mp : other_mounts) run_argv({"umount", "-l", mp});
    remove_tree(base);
  }
  void remember(pid_t pid) {
    if (pid > 0) daemons.push_back(pid);
  }
  RunResult leasefs(const std::vector<std::string>& args) {
    RunResult r = run_binary(kLeasefs, args);
    if (base::leasefs_mount_at(root) && !fuse::dead_leasefs_mount(root)) {
      remember(read_lock_pid(root + "/.longrun/lock"));
    }
    return r;
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

  std::string base, root, sock;
  std::vector<pid_t> daemons;
  std::vector<pid_t> children;
  std::vector<std::string> other_mounts;  // detached after the leasefs ones
};

}  // namespace leasefs::test
