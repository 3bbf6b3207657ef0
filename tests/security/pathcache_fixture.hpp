// Shared by the cached-path security tests: the real daemon mounted over a fresh
// root (so the filesystem caches the path a write is judged by, FsOptions::
// stable_names), the repository the agent works in, grants narrowed by path, and
// the agent's acts as uid 65534 through the mount.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"
#include "tests/support/lockstep.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test::pathcache {

using nlohmann::json;

inline const RunAs kAgent{kAgentUid, kAgentGid};
// How the agent's children open a file to write through a cached handle.
inline constexpr int kWr = O_WRONLY | O_APPEND | O_CLOEXEC;

class PathCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RunOptions o;
    o.cwd = d_.root();
    RunResult r = run_sh(
        "set -e; mkdir -p .git/hooks src/sub docs; "
        "printf '[core]\\n' > .git/config; printf '#!/bin/sh\\n' > .git/hooks/pre-commit; "
        "echo a > src/a.c; echo b > docs/b.c; chown -R 65534:65534 .git src docs",
        o);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    RunResult m = d_.mount();
    ASSERT_EQ(m.exit_code, 0) << m.output;
    ctl_ = std::make_unique<ControlClient>(d_.socket());
    ASSERT_TRUE(ctl_->call("start", {{"description", "pathcache"}}).value("ok", false));
  }

  // A grant for `paths`; its id.
  std::string grant(const std::vector<std::string>& paths) {
    json g = ctl_->call("grant", {{"reason", "pathcache"}, {"paths", paths}});
    EXPECT_TRUE(g.value("ok", false)) << g.dump();
    return g["result"]["grant"].value("id", "");
  }
  void revoke(const std::string& id) {
    json r = ctl_->call("revoke", {{"grant_id", id}});
    EXPECT_TRUE(r.value("ok", false)) << r.dump();
  }
  json call(const std::string& cmd, const json& args = json::object()) {
    return ctl_->call(cmd, args);
  }

  // A path through the mount.
  std::string at(const std::string& rel) const { return d_.root() + "/" + rel; }

  // Stops the daemon (the mount goes with it) so that what follows reads the
  // tree underneath, not through the gate.
  void stop_daemon() { ASSERT_TRUE(d_.stop_with(SIGTERM, 10000)); }
  std::string underneath(const std::string& rel) const {
    std::ifstream in(d_.root() + "/" + rel, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  ControlDaemon d_;
  std::unique_ptr<ControlClient> ctl_;
};

// errno of a write of `s` through `fd` (0 when it was written whole).
inline int write_errno(int fd, const std::string& s) {
  ssize_t n = ::write(fd, s.data(), s.size());
  if (n < 0) return errno;
  return n == static_cast<ssize_t>(s.size()) ? 0 : EIO;
}

// Child side: a failure before the child told the test where it is still tells
// ('x'), so that the test does not wait for a step that will not come.
inline int bail(Lockstep& step, int code) {
  step.tell('x');
  return code;
}

// A child exit code for "expected `want`, got `got`" at step `step` (1..9):
// 0 when equal, else 100 + step.
inline int expect_errno(int got, int want, int step) {
  return got == want ? 0 : 100 + step;
}

// 0 when a call returned 0, else its errno.
inline int err(int rc) {
  return rc == 0 ? 0 : errno;
}

// The child opens `from` with `flags`, writes, runs `move`, tells the test,
// waits for the revocation of the grant that allowed the move, then writes
// again: refused.
inline int open_move_write(const std::string& from, const std::function<int()>& move,
                           Lockstep& step, int flags = kWr) {
  int fd = ::open(from.c_str(), flags, 0644);
  if (fd < 0) return bail(step, 1);
  if (write_errno(fd, "1\n") != 0) return bail(step, 2);
  if (int e = move(); e != 0) return bail(step, 10 + (e & 0x3f));
  if (write_errno(fd, "2\n") != 0) return bail(step, 3);  // the moving grant still covers it
  step.tell('m');
  step.await();
  const int e = write_errno(fd, "LEAK\n");
  ::close(fd);
  return expect_errno(e, EACCES, 4);
}

}  // namespace leasefs::test::pathcache
