// What the use-case files share: the JSON view of a ledger request in the events
// they publish (replies render theirs in control/render.cpp) and the approver
// check.
#pragma once

#include <nlohmann/json.hpp>

#include "gate/actor.hpp"
#include "memory/ledger_types.hpp"

namespace leasefs::service {

nlohmann::json request_json(const memory::Request& request);

// Throws Error(kForbidden) naming `what` unless `actor` is an approver.
void require_approver(const gate::Actor& actor, const char* what);

}  // namespace leasefs::service
