// <root>/.longrun/, the one place a root's state, memory, ledger and audit live
// (I4). Opened through a descriptor taken before any mount, so that it reaches the
// tree underneath even when the mount covers the root; files inside are named by
// /proc/self/fd paths for libraries (SQLite) that want a path.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/unique_fd.hpp"

namespace leasefs::state {

class LongrunDir {
 public:
  // Creates .longrun if needed and takes an exclusive lock on it; throws
  // Error{root_locked} naming the pid that holds it. `root_fd` may be O_PATH.
  LongrunDir(int root_fd, std::string root_display);

  int fd() const noexcept { return dir_.get(); }
  const std::string& root() const noexcept { return root_; }
  // A path to `name` inside .longrun that bypasses any mount over the root.
  std::string path(std::string_view name) const;

  // Pid recorded by the holder of the lock on `root_fd`'s .longrun, or 0.
  static pid_t lock_holder(int root_fd);

  // `leasefs mount --agent`: the agent's group may traverse .longrun and read the
  // files is_agent_readable() names; every other entry is made the daemon's alone
  // (0600). nullopt: .longrun is the daemon's alone again (0700). Throws Error.
  void share_with(std::optional<gid_t> agent_gid);
  std::optional<gid_t> agent_gid() const noexcept { return agent_gid_; }
  // status.md (how to ask); nothing the agent could use to learn or change what
  // was agreed. (The daemon's socket is found in the registry of daemons.)
  static bool is_agent_readable(std::string_view name);

 private:
  std::string root_;
  base::UniqueFd dir_;
  base::UniqueFd lock_;
  std::optional<gid_t> agent_gid_;
};

}  // namespace leasefs::state
