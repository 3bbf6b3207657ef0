// Real `leasefs` daemons and agent-side processes for the agent-as-its-own-user
// tests, on a DaemonSite: every mount point used is detached, every daemon seen is
// killed. Its own: the background processes the test starts, and the throwaway
// users it makes, killed and removed whatever the test did.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_run.hpp"
#include "tests/support/daemon_site.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Shell-quotes one word for `sh -c`.
inline std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class AgentUserTest : public ::testing::Test, protected DaemonSite {
 protected:
  // The agent stacks mounts of its own here: their daemons are those `leasefs`
  // started, read beneath the mount.
  AgentUserTest() : DaemonSite("leasefs-agentuser-") { trust_mounted_locks = false; }
  void TearDown() override {
    take_down();
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    for (const auto& user : users) {
      RunOptions o;
      o.timeout_s = 30;
      run_argv({"userdel", "-f", user}, o);
    }
  }

  // `leasefs ARGS...` as root; the mount `mp` and its daemon are cleaned up.
  RunResult leasefs(const std::vector<std::string>& args, const std::string& mp,
                    const std::string& lock_dir) {
    mounts.push_back(mp);
    RunResult r = run_binary(LEASEFS_BIN, args, 60);
    remember_daemon(lock_dir);
    return r;
  }
  // The daemon whose .longrun/lock is in `dir` (read underneath any mount).
  void remember_daemon(const std::string& dir) { remember(read_lock_pid(dir + "/.longrun/lock")); }
  // A user made for this test (own group, no home), removed in TearDown.
  std::pair<uid_t, gid_t> add_user(const std::string& prefix) {
    const std::string name = prefix + std::to_string(::getpid() % 100000);
    RunOptions o;
    o.timeout_s = 30;
    run_argv({"userdel", "-f", name}, o);  // a leftover of a killed run
    RunResult r = run_argv({"useradd", "--user-group", "--no-create-home", "--shell", "/bin/sh",
                            "--home-dir", "/nonexistent", name},
                           o);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    users.push_back(name);
    RunResult id = run_sh("id -u " + name + "; id -g " + name);
    uid_t uid = 0;
    gid_t gid = 0;
    std::sscanf(id.output.c_str(), "%u %u", &uid, &gid);
    EXPECT_GT(uid, 0u) << id.output;
    return {uid, gid};
  }
  // `sh -c SCRIPT` as uid:gid (no supplementary groups), in `cwd`.
  RunResult as_user(uid_t uid, gid_t gid, const std::string& script, const std::string& cwd) {
    return run_sh_as(uid, gid, script, cwd);
  }
  // Waits (bounded) until `path` exists.
  static bool wait_for_file(const std::string& path) {
    struct stat st {};
    for (int i = 0; i < 500; ++i) {
      if (::stat(path.c_str(), &st) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::vector<pid_t> pids;  // background processes the test started
  std::vector<std::string> users;
};

}  // namespace leasefs::test
