// `leasefs mount --agent`: the socket belongs to the agent's group, so approvers
// named with --approver-uid / --approver-gid reach it through a POSIX ACL entry each
// (setxattr system.posix_acl_access: the kernel's own format, no libacl).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace leasefs::control {

// Adds read-write entries for `uids` and `gids` to the socket at `path` (mode
// 0660: owner and group keep theirs, others nothing). nullopt on success, else
// what went wrong (for instance a file system without ACLs).
std::optional<std::string> allow_on_socket(const std::string& path, const std::vector<uid_t>& uids,
                                           const std::vector<gid_t>& gids);

}  // namespace leasefs::control
