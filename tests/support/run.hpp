// Tests run real tools through the project's one spawner (base/spawn.hpp).
#pragma once

#include <sys/types.h>

#include <string>

#include "base/spawn.hpp"

namespace leasefs::test {

using base::run_argv;
using base::run_sh;
using base::RunOptions;
using base::RunResult;

// `sh -c SCRIPT` as uid:gid (no supplementary groups) in `cwd`, for at most
// `timeout_s` seconds: what an agent's shell does.
inline RunResult run_sh_as(uid_t uid, gid_t gid, const std::string& script, const std::string& cwd,
                           int timeout_s = 60) {
  RunOptions o;
  o.uid = uid;
  o.gid = gid;
  o.cwd = cwd;
  o.timeout_s = timeout_s;
  return run_sh(script, o);
}

}  // namespace leasefs::test
