#include "gate/control/peer.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace leasefs::gate::control {

bool ApproverPolicy::is_approver(uid_t uid, gid_t gid, pid_t pid) const {
  if (uid == 0 || uid == owner_uid) return true;
  if (std::find(uids.begin(), uids.end(), uid) != uids.end()) return true;
  if (gids.empty()) return false;
  if (std::find(gids.begin(), gids.end(), gid) != gids.end()) return true;
  for (gid_t g : supplementary_groups(pid)) {
    if (std::find(gids.begin(), gids.end(), g) != gids.end()) return true;
  }
  return false;
}

std::optional<Actor> peer_actor(int fd, const ApproverPolicy& policy) {
  struct ucred cred {};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred)) {
    return std::nullopt;
  }
  Actor actor;
  actor.pid = cred.pid;
  actor.uid = cred.uid;
  actor.gid = cred.gid;
  actor.approver = policy.is_approver(cred.uid, cred.gid, cred.pid);
  return actor;
}

std::vector<gid_t> supplementary_groups(pid_t pid) {
  std::vector<gid_t> out;
  if (pid <= 0) return out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Groups:", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    unsigned long g = 0;
    while (fields >> g) out.push_back(static_cast<gid_t>(g));
    break;
  }
  return out;
}

}  // namespace leasefs::gate::control
