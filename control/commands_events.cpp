// What happened: watch (the stream itself is the server's), audit.show,
// audit.records, audit.heads and audit.verify.
#include "control/command_args.hpp"

namespace leasefs::control {
namespace {

// A verifier key is a name, 8 hex digits and 44 base64 characters.
constexpr size_t kMaxVerifierKeyBytes = 1024;

}  // namespace

Result handle_watch(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("watch", args);
  const json* since = a.raw("since_ms");
  if (since && !since->is_number_integer()) {
    a.invalid("since_ms", "must be milliseconds since the Unix epoch");
  }
  a.finish();
  json out{{"watching", true}};
  if (!since) return out;
  // The past is the audit log's, which only an approver reads.
  if (!actor.approver) {
    throw Error(Errc::kForbidden, "uid " + std::to_string(actor.uid) +
                                      " may not replay the audit log (watch --since): only "
                                      "an approver may; watch without --since");
  }
  if (!ctx.audit_since) throw Error(Errc::kInternal, "no audit log attached");
  out.update(ctx.audit_since(since->get<int64_t>()));
  return out;
}

Result handle_audit_show(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("audit.show", args);
  memory::AuditQuery q;
  q.turn = a.opt_count("turn");
  q.op = a.opt_str("op", kMaxIdArgBytes).value_or("");
  q.paths = a.str_list("paths");
  a.finish();
  // What every uid did, agent-chosen names included, is for approvers.
  if (!actor.approver) {
    throw Error(Errc::kForbidden, "uid " + std::to_string(actor.uid) +
                                      " may not read the audit log: only root or an approver "
                                      "may");
  }
  if (!ctx.audit_select) throw Error(Errc::kInternal, "no audit log attached");
  return ctx.audit_select(q);
}

Result handle_audit_records(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  constexpr uint64_t kMaxRecords = 1000;  // one reply; the shipper asks again from there
  Args a("audit.records", args);
  const uint64_t after = a.opt_count("after_seq").value_or(0);
  const uint64_t limit = a.opt_count("limit").value_or(kMaxRecords);
  a.finish();
  if (limit == 0 || limit > kMaxRecords) {
    a.invalid("limit", "must be between 1 and " + std::to_string(kMaxRecords));
  }
  if (!actor.approver) {
    throw Error(Errc::kForbidden, "uid " + std::to_string(actor.uid) +
                                      " may not read the audit log: only root or an approver "
                                      "may");
  }
  if (!ctx.audit_lines) throw Error(Errc::kInternal, "no audit log attached");
  return ctx.audit_lines(after, static_cast<size_t>(limit));
}

Result handle_audit_heads(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  constexpr uint64_t kMaxHeads = 1000;  // one reply; the shipper asks again from there
  Args a("audit.heads", args);
  const uint64_t after = a.opt_count("after_size").value_or(0);
  const uint64_t limit = a.opt_count("limit").value_or(kMaxHeads);
  a.finish();
  if (limit == 0 || limit > kMaxHeads) {
    a.invalid("limit", "must be between 1 and " + std::to_string(kMaxHeads));
  }
  // The heads say what the chain holds: read by whoever may read the chain.
  if (!actor.approver) {
    throw Error(Errc::kForbidden, "uid " + std::to_string(actor.uid) +
                                      " may not read the signed heads: only root or an approver "
                                      "may");
  }
  if (!ctx.audit_heads) throw Error(Errc::kInternal, "no audit log attached");
  return ctx.audit_heads(after, static_cast<size_t>(limit));
}

Result handle_audit_verify(CommandContext& ctx, const json& args, const gate::Actor&) {
  Args a("audit.verify", args);
  const std::optional<std::string> key = a.opt_str("key", kMaxVerifierKeyBytes);
  a.finish();
  if (!ctx.audit_verify) throw Error(Errc::kInternal, "no audit log attached");
  json result = ctx.audit_verify(key);
  if (result.is_object() && result.value("ok", true) == false) {
    std::string message = result.value("message", std::string("the audit hash chain is broken"));
    throw Error(Errc::kAuditBroken, message);
  }
  return result;
}

}  // namespace leasefs::control
