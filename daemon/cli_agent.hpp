// `leasefs mount ROOT --agent USER`: the recommended deployment, where the agent
// runs as its own user and so can never grant itself. What USER needs:
//   - the control socket: given to USER's group (mode 0660; root is the approver);
//   - .longrun/: USER's group may traverse it and read status.md (leasectl finds
//     the socket in the registry of daemons); memory, ledger, audit and state stay
//     the daemon's;
//   - the tree: USER must be able to write it under a lease, so it is checked here,
//     before anything is mounted.
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

// nullopt when `agent` can reach `root` and write every file and directory in it
// (.longrun aside); otherwise the refusal, with the command that fixes it.
std::optional<std::string> check_agent_can_write(const std::string& root, const AgentUser& agent);

}  // namespace leasefs::daemon
