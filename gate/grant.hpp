// One grant: an approver opening writes for one turn, in their own words,
// optionally narrowed by path globs, op classes and a wall-clock TTL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/op.hpp"

namespace leasefs::gate {

struct Grant {
  std::string id;      // G_<n>
  uint64_t turn = 0;   // the only turn it covers
  std::string reason;  // the approver's words, verbatim
  uint32_t approver_uid = 0;
  std::vector<std::string> paths;  // globs relative to the root; empty = whole tree
  OpMask ops = kAllOps;
  int64_t issued_ms = 0;
  std::optional<int64_t> expires_ms;  // wall clock; none = until the turn ends
  std::string request_id;             // set when the grant came from an approved request

  bool operator==(const Grant&) const = default;
};

}  // namespace leasefs::gate
