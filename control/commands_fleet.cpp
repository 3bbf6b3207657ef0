// fleet.report: what a fleet bridge on this machine tells the daemon.
#include "control/command_args.hpp"
#include "control/render.hpp"
#include "service/service.hpp"

namespace leasefs::control {

Result handle_fleet_report(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("fleet.report", args);
  service::FleetReportArgs r;
  r.centre = a.str_or("centre", "", kMaxNameBytes);
  r.detail = a.str_or("detail", "", kMaxNameBytes);
  r.dropped_decision = a.str_or("dropped_decision", "", kMaxIdArgBytes);
  r.dropped_request = a.str_or("dropped_request", "", kMaxIdArgBytes);
  r.dropped_why = a.str_or("dropped_why", "", kMaxNameBytes);
  a.finish();
  if (!r.centre.empty() && r.centre != "reachable" && r.centre != "unreachable") {
    a.invalid("centre", "must be 'reachable' or 'unreachable'");
  }
  if (r.centre.empty() && r.dropped_decision.empty()) {
    a.invalid("centre", "or dropped_decision: the report says nothing");
  }
  return render(service(ctx).fleet_report(r, actor));
}

}  // namespace leasefs::control
