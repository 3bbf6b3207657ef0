// Running a program and waiting for it: argv (no shell) or `sh -c SCRIPT`, in a
// directory, optionally as another user, with a timeout after which its whole
// process group is killed; stdout and stderr come back together. The one
// spawner of the project: the demo, fusermount3 calls and the tests use it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace leasefs::base {

struct RunResult {
  int exit_code = -1;  // 128+N when killed by signal N; -1 when it could not start
  std::string output;  // stdout and stderr, interleaved
  bool ok() const { return exit_code == 0; }
};

struct RunOptions {
  std::string cwd;
  std::optional<uid_t> uid;  // run as this uid (gid = `gid`, no supplementary groups)
  gid_t gid = 65534;
  int timeout_s = 60;
};

RunResult run_sh(const std::string& script, const RunOptions& options = {});

// Like run_sh but for argv (no shell).
RunResult run_argv(const std::vector<std::string>& argv, const RunOptions& options = {});

}  // namespace leasefs::base
