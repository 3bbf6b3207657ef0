// A temporary directory where a test runs the real `leasefs` daemon, taken down
// whatever the test did: every leasefs mount on the mount points it was told of is
// detached (innermost first; a takeover leaves dead mounts beneath the live one,
// so each point is detached until none is left), every daemon seen is killed,
// and the directory is removed. Every fixture that starts the daemon is built on
// it: ControlDaemon, FdcrashTest, AgentUserTest, JournalTest, DaemonTest.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "daemon/mount_table.hpp"
#include "fuse/takeover.hpp"
#include "protocol/socket_path.hpp"
#include "tests/support/daemon_run.hpp"
#include "tests/support/mounted_fs.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {

// The agent's uid in tests against the real daemon.
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

class DaemonSite {
 public:
  // BASE is a fresh temporary directory named after `prefix`; other users may
  // traverse it (the agent reaches the root and the socket beneath it).
  explicit DaemonSite(const std::string& prefix) : base(make_temp_dir(prefix)) {
    ::chmod(base.c_str(), 0755);
  }
  ~DaemonSite() {
    take_down();
    remove_tree(base);
  }
  DaemonSite(const DaemonSite&) = delete;
  DaemonSite& operator=(const DaemonSite&) = delete;

  // BASE/root, made here and detached in take_down().
  std::string add_root() {
    const std::string root = base + "/root";
    ::mkdir(root.c_str(), 0755);
    mounts.push_back(root);
    return root;
  }
  void remember(pid_t pid) {
    if (pid > 0) daemons.push_back(pid);
  }
  // Detaches the mounts, innermost first, then kills the daemons; each only once.
  // A killed daemon leaves its socket file: one in the default place (/run/leasefs)
  // is removed too.
  void take_down() {
    std::vector<std::string> sockets;
    for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
      sockets.push_back(protocol::default_socket_path(*it));
      for (int i = 0; i < 1000 && base::leasefs_mount_at(*it); ++i) {
        if (trust_mounted_locks) remember(read_lock_pid(*it + "/.longrun/lock"));
        RunOptions o;
        o.timeout_s = 10;
        run_argv({"fusermount3", "-uz", *it}, o);
      }
    }
    mounts.clear();
    for (pid_t pid : daemons) ::kill(pid, SIGKILL);
    daemons.clear();
    for (const auto& socket : sockets) ::unlink(socket.c_str());
  }

  std::string base;
  std::vector<std::string> mounts;  // mount points, in the order they were stacked
  std::vector<pid_t> daemons;
  // Whether the lock file read through a mount names a daemon to kill: not where
  // the agent stacks a mount of its own, whose lock could name any process.
  bool trust_mounted_locks = true;
};

// The real daemon over BASE/root (socket BASE/ctl.sock) as a gtest fixture: the
// daemon `leasefs` leaves mounted is recorded at once, and the processes the
// test forked (`children`) are killed before the mount is taken down.
class RootDaemonTest : public ::testing::Test, protected DaemonSite {
 protected:
  explicit RootDaemonTest(const std::string& prefix)
      : DaemonSite(prefix), root(add_root()), sock(base + "/ctl.sock") {}
  void TearDown() override {
    for (pid_t pid : children) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    take_down();
  }
  RunResult leasefs(const std::vector<std::string>& args) {
    RunResult r = run_binary(LEASEFS_BIN, args);
    if (base::leasefs_mount_at(root) && !fuse::dead_leasefs_mount(root)) {
      remember(read_lock_pid(root + "/.longrun/lock"));
    }
    return r;
  }

  std::string root, sock;
  std::vector<pid_t> children;
};

}  // namespace leasefs::test
