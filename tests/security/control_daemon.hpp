// The real `leasefs` daemon for the control-plane security tests: mounted over a
// fresh root in a temporary directory, its socket reachable by the agent (uid and
// gid 65534, through --socket-group), and always taken down by its DaemonSite:
// the destructor detaches the mount and kills the daemon whatever the test did.
//
// The agent is a forked child that drops to 65534 before it does anything, so the
// daemon sees a real second uid through SO_PEERCRED.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/support/daemon_site.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {

inline constexpr gid_t kAgentGid = 65534;

class ControlDaemon {
 public:
  // Creates the temporary root; mount() starts the daemon.
  ControlDaemon();
  ControlDaemon(const ControlDaemon&) = delete;
  ControlDaemon& operator=(const ControlDaemon&) = delete;

  // `leasefs mount ROOT --socket SOCK --socket-group <65534's group> EXTRA...`;
  // the result of the command (the daemon runs on in the background).
  RunResult mount(const std::vector<std::string>& extra = {});
  // The daemon's pid (from .longrun/lock), 0 if none.
  pid_t pid() const;
  // Sends `sig` and waits up to `within_ms` for the daemon to end; true if it did.
  bool stop_with(int sig, int within_ms);
  bool mounted() const;

  const std::string& base() const { return site_.base; }
  const std::string& root() const { return root_; }
  const std::string& socket() const { return sock_; }

 private:
  mutable DaemonSite site_;  // pid() records every daemon it sees
  std::string root_, sock_;
};

// Runs `body` in a forked child as uid/gid 65534 (no supplementary groups); the
// child's exit status is body's return value. Returns the child's pid at once
// when `wait` is false (kill it with kill_child), else its exit status.
pid_t spawn_agent(const std::function<int()>& body);
int wait_child(pid_t pid, int timeout_ms);
void kill_child(pid_t pid);

// A connected Unix stream socket (close it yourself), or -1.
int connect_unix(const std::string& socket);

// One line on a fresh connection as the calling process; the reply line, or ""
// when none came within timeout_ms.
std::string call_line(const std::string& socket, const std::string& line, int timeout_ms);

}  // namespace leasefs::test
