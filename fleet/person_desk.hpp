// The person's side of the ledger: what an approver sees and decides, under
// their own database role. Who may see and decide what is the engine's (the
// policies in fleet/schema/ledger.sql); this only reads what the role is shown
// and inserts decisions as current_user, every value a parameter.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fleet/pg_connection.hpp"

namespace leasefs::fleet {

// A decision the ledger would not take, said for a person to read.
class DecisionRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PendingRequest {
  std::string id;  // the ledger's request id
  std::string machine;
  std::string project_id;
  std::string root;
  std::string task_id;
  std::string turn;
  std::vector<std::string> paths;
  std::vector<std::string> ops;
  std::string reason;  // the agent's text: shown only through base::inert
  std::string requester_uid, requester_pid, requester_command;
  std::string digest;
};

// Every request of a project delegated to this role that has no decision yet,
// oldest first.
std::vector<PendingRequest> pending_requests(PgConnection& db);

struct Decided {
  std::string decision_id;
  std::string request_id;
};

// Inserts one decision ("approve" or "reject") for request `request_id`, naming
// the digest the ledger holds for it. Throws DecisionRefused when the request is
// not one this role may see (none, or not delegated), when it is decided already
// (by whom), or when the engine refuses the row.
Decided decide(PgConnection& db, const std::string& request_id, const std::string& decision,
               const std::string& reason);

// Whether every path of `r` is `prefix` or under it (a path prefix, not a
// string one: "src" covers "src/a" but not "srcx").
bool paths_under(const PendingRequest& r, const std::string& prefix);

// The pending requests of project `project` (its root, or its id) whose paths
// are all under `path_prefix` ("" for any), each decided with a row of its own.
// A request decided by someone else meanwhile is skipped, not an error.
std::vector<Decided> decide_matching(PgConnection& db, const std::string& project,
                                     const std::string& path_prefix, const std::string& decision,
                                     const std::string& reason);

}  // namespace leasefs::fleet
