// .longrun/status.md: what an agent that just got EACCES should read. The task, its
// status and turn, the grants in force, the last refusals, and the exact command to
// ask for a lease.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gate/task_state.hpp"
#include "service/fleet_link.hpp"

namespace leasefs::service {

// `disk_full`: the disk's reserve is spent (base/disk_reserve.hpp).
// `heads_note`: why the audit's heads go unsigned (report/head_signer.hpp); empty
// while they are signed. `fleet`: what a fleet bridge last reported, if one did.
std::string render_status_md(const gate::TaskState& state,
                             const std::vector<nlohmann::json>& refusals, int64_t now_ms,
                             bool disk_full = false, const std::string& heads_note = "",
                             const FleetLink* fleet = nullptr);

}  // namespace leasefs::service
