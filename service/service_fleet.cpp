// What a fleet bridge tells the daemon. Nothing here decides anything: a central
// decision reaches the daemon only as an approve or reject on the socket, checked
// like any other. This records, audits and shows what the bridge saw.
#include <spdlog/spdlog.h>

#include "base/clock.hpp"
#include "base/error.hpp"
#include "service/service.hpp"
#include "service/service_support.hpp"

namespace leasefs::service {

using nlohmann::json;

FleetLink Service::fleet_report(const FleetReportArgs& args, const gate::Actor& actor) {
  auto lock = lock_service();
  require_approver(actor, "report for the fleet");
  if (!args.centre.empty()) {
    FleetLink link{.reachable = args.centre == "reachable",
                   .detail = args.detail,
                   .bridge_uid = actor.uid,
                   .reported_ms = base::now_ms()};
    // Audited when it changes, not on every report: a bridge repeats itself.
    const bool changed = !fleet_ || fleet_->reachable != link.reachable ||
                         fleet_->detail != link.detail || fleet_->bridge_uid != link.bridge_uid;
    fleet_ = link;
    if (changed) {
      spdlog::info("fleet: uid {} reports the centre {}: {}", actor.uid, args.centre, args.detail);
      emit({{"type", "fleet"},
            {"centre", args.centre},
            {"detail", args.detail},
            {"uid", actor.uid}});
      write_status();
    }
  }
  if (!args.dropped_decision.empty()) {
    spdlog::warn("fleet: uid {} dropped central decision {} for {}: {}", actor.uid,
                 args.dropped_decision, args.dropped_request, args.dropped_why);
    emit({{"type", "fleet_decision_dropped"},
          {"decision_id", args.dropped_decision},
          {"request_id", args.dropped_request},
          {"why", args.dropped_why},
          {"uid", actor.uid}});
  }
  return fleet_.value_or(FleetLink{});
}

}  // namespace leasefs::service
