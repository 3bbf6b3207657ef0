// `leasefs mount ROOT --agent USER`: the recommended deployment, where the agent
// runs as its own user and so can never grant itself. What USER needs:
//   - the control socket: given to USER's group (mode 0660; root is the approver);
//   - .longrun/: USER's group may traverse it and read status.md (leasectl finds
//     the socket in the registry of daemons); memory, ledger, audit and state stay
//     the daemon's;
//   - the tree: what USER could not write even under a lease is named in a warning
//     before anything is mounted (a person's choice, never a refusal).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace leasefs::daemon {

struct AgentUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;              // primary group
  std::vector<gid_t> groups;  // every group, the primary one included
};

// USER as a name or a numeric uid; nullopt and `error` when there is no such user.
std::optional<AgentUser> resolve_agent(const std::string& user, std::string* error);

// nullopt when every directory above `root` lets `agent` through; otherwise the
// refusal, with the command that fixes it.
std::optional<std::string> check_agent_can_reach(const std::string& root, const AgentUser& agent);

// A warning when `agent` could not write some file or directory of the tree even
// under a lease: neither its owner nor let in by the mode (its own entries never
// count, whatever their mode: it may chmod them). `tree` is where the tree is read
// (beneath a dead mount, /proc/self/fd/N), `root` how it is named. Never a reason
// to refuse: a root-owned secret is the person's choice, and a restart must not
// fail on what the agent did to its own files.
std::optional<std::string> entries_agent_cannot_write(const std::string& tree,
                                                      const std::string& root,
                                                      const AgentUser& agent);

}  // namespace leasefs::daemon
