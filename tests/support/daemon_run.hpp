// Running the real `leasefs` binary from a test, and finding the daemon it left:
// every fixture that starts one records its pid (from ROOT/.longrun/lock) so that
// it can kill it whatever the test did.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/run.hpp"

namespace leasefs::test {

// The pid a daemon wrote to its lock file (ROOT/.longrun/lock), 0 if none.
inline pid_t read_lock_pid(const std::string& lock_path) {
  std::ifstream in(lock_path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// BINARY ARGS..., for at most `timeout_s` seconds.
inline RunResult run_binary(const std::string& binary, const std::vector<std::string>& args,
                            int timeout_s = 30) {
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.timeout_s = timeout_s;
  return run_argv(argv, o);
}

}  // namespace leasefs::test
