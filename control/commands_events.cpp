// What happened: watch (the stream itself is the server's) and audit.verify.
#include "control/command_args.hpp"

namespace leasefs::control {

json handle_watch(CommandContext&, const json& args, const gate::Actor&) {
  Args a("watch", args);
  a.finish();
  return json{{"watching", true}};
}

json handle_audit_verify(CommandContext& ctx, const json& args, const gate::Actor&) {
  Args a("audit.verify", args);
  a.finish();
  if (!ctx.audit_verify) throw Error(Errc::kInternal, "no audit log attached");
  json result = ctx.audit_verify();
  if (result.is_object() && result.value("ok", true) == false) {
    std::string message = result.value("message", std::string("the audit hash chain is broken"));
    throw Error(Errc::kAuditBroken, message);
  }
  return result;
}

}  // namespace leasefs::control
