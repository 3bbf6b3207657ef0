// Who is on the other end of a control connection, from SO_PEERCRED and
// SO_PEERGROUPS, and whether that makes them an approver.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "gate/actor.hpp"

namespace leasefs::control {

struct ApproverPolicy {
  uid_t owner_uid = 0;  // the daemon's owner (geteuid() of the daemon)
  std::vector<uid_t> uids;
  std::vector<gid_t> gids;

  // Root, the owner, a listed uid, or a listed gid (the primary gid, or one of
  // the peer's supplementary `groups`).
  bool is_approver(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) const;
};

// The peer of a connected Unix socket; nullopt when the kernel will not say.
std::optional<gate::Actor> peer_actor(int fd, const ApproverPolicy& policy);

// The peer's supplementary groups as the kernel recorded them when it connected
// (SO_PEERGROUPS): the same credentials SO_PEERCRED reports, so a process that
// exits and whose pid is reused cannot lend its groups to the connection, as a
// look at /proc/<pid>/status could. nullopt when the kernel will not say.
std::optional<std::vector<gid_t>> peer_groups(int fd);

}  // namespace leasefs::control
