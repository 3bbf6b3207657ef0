// What the use-case files share: the JSON view of a ledger request in the events
// they publish (replies render theirs in control/render.cpp), the approver and
// task checks, and the form of grant and checkpoint ids.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "gate/actor.hpp"
#include "gate/task_state.hpp"
#include "memory/ledger_types.hpp"

namespace leasefs::service {

nlohmann::json request_json(const memory::Request& request);

// Throws Error(kForbidden) naming `what` unless `actor` is an approver.
void require_approver(const gate::Actor& actor, const char* what);

// Throws Error(kNoTask) unless there is a task.
void require_task(const gate::TaskState& s);

// Throws Error(kNotInProgress) naming `what` unless the task is in progress.
void require_in_progress(const gate::TaskState& s, const char* what);

// `prefix` and `n` in four digits or more: G_0001, C_0012.
std::string padded(const char* prefix, uint64_t n);

}  // namespace leasefs::service
