// A mount on or beneath the tree that no approver made (the daemon's mount
// watch finds them: daemon/mount_watch.hpp). While one is there, every lease is
// revoked and no grant is issued: a person who looks at the tree, and the turn
// hook run there, would meet the agent's filesystem, not the one the gate guards.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace leasefs::service {

struct ForeignMount {
  int mount_id = -1;
  std::string mount_point;
  std::string fstype;
  std::string source;
  uid_t uid = 0;  // who made it (a FUSE mount's user_id=)
  int64_t seen_ms = 0;

  bool operator==(const ForeignMount&) const = default;
};

}  // namespace leasefs::service
