// Who is on the other end of a control connection, from SO_PEERCRED, and whether
// that makes them an approver.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "gate/actor.hpp"

namespace leasefs::gate::control {

struct ApproverPolicy {
  uid_t owner_uid = 0;  // the daemon's owner (geteuid() of the daemon)
  std::vector<uid_t> uids;
  std::vector<gid_t> gids;

  // Root, the owner, a listed uid, or a listed gid (the primary gid, or a
  // supplementary group as /proc/<pid>/status reports it).
  bool is_approver(uid_t uid, gid_t gid, pid_t pid) const;
};

// The peer of a connected Unix socket; nullopt when the kernel will not say.
std::optional<Actor> peer_actor(int fd, const ApproverPolicy& policy);

// Supplementary groups of `pid` from /proc/<pid>/status ("Groups:"); empty when
// the process is gone or unreadable.
std::vector<gid_t> supplementary_groups(pid_t pid);

}  // namespace leasefs::gate::control
