// The lease's commands: grant, revoke, request, approve, reject, ask.
#include "control/command_args.hpp"
#include "control/render.hpp"
#include "gate/op.hpp"
#include "service/service.hpp"

namespace leasefs::control {

Result handle_grant(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("grant", args);
  service::GrantArgs g;
  g.reason = a.str("reason");
  g.paths = a.str_list("paths");
  std::vector<std::string> ops = a.csv_list("ops");
  if (!ops.empty()) {
    auto mask = gate::parse_op_classes(ops);
    if (!mask) a.invalid("ops", "names an " + *gate::op_classes_problem(ops));
    g.ops = *mask;
  }
  if (const json* ttl = a.raw("ttl")) {
    std::optional<int64_t> ms;
    if (ttl->is_string()) {
      ms = protocol::parse_duration_ms(ttl->get_ref<const std::string&>());
    } else if (ttl->is_number_integer() || ttl->is_number_unsigned()) {
      int64_t secs = ttl->is_number_unsigned() && ttl->get<uint64_t>() > INT64_MAX / 1000
                         ? -1
                         : ttl->get<int64_t>();
      if (secs > 0 && secs <= INT64_MAX / 1000) ms = secs * 1000;
    } else {
      throw Error(Errc::kBadRequest,
                  "command 'grant': argument 'ttl' must be a string like \"10m\" or an "
                  "integer number of seconds, got " +
                      protocol::json_type_name(*ttl));
    }
    if (!ms || *ms <= 0) {
      a.invalid("ttl",
                "must be a positive duration with a unit (30s, 10m, 2h, 1d) or an integer "
                "number of seconds");
    }
    g.ttl_ms = ms;
  }
  a.finish();
  return render(service(ctx).grant(g, actor));
}

Result handle_revoke(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("revoke", args);
  auto id = a.opt_str("grant_id", kMaxIdArgBytes);
  // all: every grant in force, as no id has always meant; both at once is a slip.
  if (a.flag("all") && id) a.invalid("all", "and a grant id: give one or the other");
  a.finish();
  return render(service(ctx).revoke(id, actor));
}

Result handle_request(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("request", args);
  service::RequestArgs r;
  r.reason = a.str("reason");
  r.paths = a.str_list("paths");
  a.finish();
  return render(service(ctx).request(r, actor));
}

namespace {

// approve and reject take the same arguments: the request's id and the approver's words.
struct DecisionArgs {
  std::string id;
  std::string reason;
  std::string source = "local";
};

DecisionArgs decision_args(const char* command, const json& args) {
  Args a(command, args);
  DecisionArgs d{a.str("id", kMaxIdArgBytes), a.str_or("reason", "")};
  // A fleet bridge names the central decision it applies: the audit says so.
  if (auto central = a.opt_str("fleet_decision", kMaxIdArgBytes)) {
    if (central->empty() || central->find_first_not_of("0123456789") != std::string::npos) {
      a.invalid("fleet_decision", "must be the central decision's number");
    }
    d.source = "fleet:" + *central;
  }
  a.finish();
  return d;
}

}  // namespace

Result handle_approve(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  const DecisionArgs d = decision_args("approve", args);
  return render(service(ctx).approve(d.id, d.reason, actor, d.source));
}

Result handle_reject(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  const DecisionArgs d = decision_args("reject", args);
  return render(service(ctx).reject(d.id, d.reason, actor, d.source));
}

Result handle_ask(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("ask", args);
  const std::string wait = a.str("wait", kMaxNameBytes);
  a.finish();
  std::optional<int64_t> ms;
  if (wait == "off") {
    ms = 0;
  } else if (wait != "default") {
    ms = protocol::parse_duration_ms(wait);
    if (!ms || *ms <= 0) {
      a.invalid("wait",
                "must be a duration (30s, 2m), \"off\", or \"default\" (the mount's --ask)");
    }
  }
  return render(service(ctx).set_ask(ms, actor));
}

}  // namespace leasefs::control
