#include "control/peer.hpp"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59  // Linux 4.13
#endif

namespace leasefs::control {

bool ApproverPolicy::is_approver(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) const {
  if (uid == 0 || uid == owner_uid) return true;
  if (std::find(uids.begin(), uids.end(), uid) != uids.end()) return true;
  if (gids.empty()) return false;
  if (std::find(gids.begin(), gids.end(), gid) != gids.end()) return true;
  for (gid_t g : groups) {
    if (std::find(gids.begin(), gids.end(), g) != gids.end()) return true;
  }
  return false;
}

std::optional<gate::Actor> peer_actor(int fd, const ApproverPolicy& policy) {
  struct ucred cred {};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred)) {
    return std::nullopt;
  }
  gate::Actor actor;
  actor.pid = cred.pid;
  actor.uid = cred.uid;
  actor.gid = cred.gid;
  std::vector<gid_t> groups;
  if (!policy.gids.empty()) {
    // Only asked when a group could make an approver. Unknown groups make none.
    if (auto g = peer_groups(fd)) {
      groups = std::move(*g);
    } else {
      spdlog::warn("control: cannot read the supplementary groups of pid {}: {}", cred.pid,
                   std::strerror(errno));
    }
  }
  actor.approver = policy.is_approver(cred.uid, cred.gid, groups);
  return actor;
}

std::optional<std::vector<gid_t>> peer_groups(int fd) {
  std::vector<gid_t> groups(64);
  while (true) {
    socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      return groups;
    }
    // ERANGE: `len` now holds the size needed.
    if (errno != ERANGE || len / sizeof(gid_t) <= groups.size()) return std::nullopt;
    groups.resize(len / sizeof(gid_t));
  }
}

}  // namespace leasefs::control
