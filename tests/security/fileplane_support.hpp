// Shared by the file-plane security tests: seeding the backing tree, snapshots
// with scoped grants, and running an attempt as a second uid in a child process.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/mounted_fs.hpp"

namespace leasefs::test::fileplane {

inline constexpr uid_t kAgent = 65534;  // the agent's uid in these tests (gid 65534)

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs a shell script in the backing tree (not through the mount), as root.
inline RunResult in_backing(const MountedFs& fs, const std::string& script) {
  RunOptions o;
  o.cwd = fs.backing();
  return run_sh("set -e; umask 000; " + script, o);
}

struct GrantSpec {
  std::vector<std::string> paths;  // none: the whole tree
  gate::OpMask ops = gate::kAllOps;
};

// An in-progress task for `turn` holding `grants`.
inline gate::GateSnapshot leased(uint64_t turn, std::vector<GrantSpec> grants) {
  gate::GateSnapshot s;
  s.has_task = true;
  s.status = gate::TaskStatus::kInProgress;
  s.turn = turn;
  int n = 0;
  for (auto& spec : grants) {
    gate::Grant g;
    g.id = "G_" + std::to_string(++n);
    g.turn = turn;
    g.reason = "security test";
    g.paths = std::move(spec.paths);
    g.ops = spec.ops;
    s.grants.push_back(std::move(g));
  }
  return s;
}

// Runs `fn` in a forked child as the agent's uid (gid 65534, no supplementary
// groups), or as root when `uid` is empty. Returns 0 for success or the errno
// `fn` returned; 254 when the child could not drop privileges.
inline int as_agent(const std::function<int()>& fn, std::optional<uid_t> uid = kAgent) {
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (uid && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                ::setresuid(*uid, *uid, *uid) != 0)) {
      ::_exit(254);
    }
    ::_exit(fn() & 0xff);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

// 0 when `rc` says success, errno otherwise.
inline int err_of(long rc) {
  return rc < 0 ? errno : 0;
}

}  // namespace leasefs::test::fileplane
