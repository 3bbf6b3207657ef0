// What the use cases take, where a command has more than a value or two: filled in
// by the control plane from a request's arguments (control/commands_*.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/op.hpp"
#include "gate/task_status.hpp"

namespace leasefs::service {

struct StartArgs {
  std::string description;
  std::vector<std::string> keywords;  // added to those extracted from the description
  std::string done_when;
};

struct GrantArgs {
  std::string reason;
  std::vector<std::string> paths;
  gate::OpMask ops = gate::kAllOps;
  std::optional<int64_t> ttl_ms;
};

struct RequestArgs {
  std::string reason;
  std::vector<std::string> paths;
};

struct CheckpointArgs {
  std::string summary;
  std::string next;
  std::optional<gate::TaskStatus>
      status;  // paused | blocked | waiting_verification; default paused
  bool retry_pending = false;
  std::string current_step;    // defaults to the state's
  std::string verified;        // what was checked and how
  std::string discarded;       // approaches tried and dropped
  std::string needs_approval;  // what must be approved before the next action
};

}  // namespace leasefs::service
