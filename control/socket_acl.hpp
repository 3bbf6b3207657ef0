// Approvers named with --approver-uid / --approver-gid reach the control socket
// through a POSIX ACL entry each, whoever owns it (the agent's group with
// `leasefs mount --agent`, else the owner alone): setxattr
// system.posix_acl_access, the kernel's own format, no libacl.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace leasefs::control {

// Adds read-write entries for `uids` and `gids` to the socket at `path` (owner
// and group keep what its mode gives them, others nothing). nullopt on success, else
// what went wrong (for instance a file system without ACLs).
std::optional<std::string> allow_on_socket(const std::string& path, const std::vector<uid_t>& uids,
                                           const std::vector<gid_t>& gids);

}  // namespace leasefs::control
