// Who is asking the control plane: from the socket peer's credentials.
#pragma once

#include <sys/types.h>

namespace leasefs::gate {

struct Actor {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // Approvers (root, the daemon's owner, configured uids/gids) may grant,
  // approve, reject and complete a task. Everyone else is the agent side.
  bool approver = false;
};

}  // namespace leasefs::gate
