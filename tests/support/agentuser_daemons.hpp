// Real `leasefs` daemons and agent-side processes for the agent-as-its-own-user
// tests, with cleanup on every exit path: every mount point used is detached, every
// daemon and background process seen is killed, every throwaway user is removed.
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

#include "daemon/mount_table.hpp"
#include "tests/support/daemon_run.hpp"
#include "tests/support/mounted_fs.hpp"
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

class AgentUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base = make_temp_dir("leasefs-agentuser-");
    ::chmod(base.c_str(), 0755);  // other users traverse it
  }
  void TearDown() override {
    // Innermost first: a stacked mount before the one it sits on.
    for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
      if (base::leasefs_mount_at(*it)) {
        RunOptions o;
        o.timeout_s = 10;
        run_argv({"fusermount3", "-uz", *it}, o);
      }
    }
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    for (const auto& user : users) {
      RunOptions o;
      o.timeout_s = 30;
      run_argv({"userdel", "-f", user}, o);
    }
    remove_tree(base);
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
  void remember_daemon(const std::string& dir) {
    pid_t pid = read_lock_pid(dir + "/.longrun/lock");
    if (pid > 0) pids.push_back(pid);
  }
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

  std::string base;
  std::vector<std::string> mounts;
  std::vector<pid_t> pids;
  std::vector<std::string> users;
};

}  // namespace leasefs::test
