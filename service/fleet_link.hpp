// What a fleet bridge last said about the centre (the shared ledger): whether it
// reaches it. The daemon decides everything locally whatever this says; it is
// shown (status, status.md) so that a person knows why no central decision comes
// and that a local approver still decides.
#pragma once

#include <cstdint>
#include <string>

namespace leasefs::service {

struct FleetLink {
  bool reachable = false;
  std::string detail;       // the bridge's words (shown inert)
  uint32_t bridge_uid = 0;  // who reported
  int64_t reported_ms = 0;

  bool operator==(const FleetLink&) const = default;
};

// fleet.report's arguments: the centre's state, a stale decision dropped, or both.
struct FleetReportArgs {
  std::string centre;  // "reachable", "unreachable" or "" (unchanged)
  std::string detail;
  std::string dropped_decision;  // the central decision id, "" when none was dropped
  std::string dropped_request;   // the local request it named
  std::string dropped_why;
};

}  // namespace leasefs::service
