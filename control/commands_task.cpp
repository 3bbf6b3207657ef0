// The task's commands: status, start, turn, end-turn, transition, checkpoint,
// resume.
#include "control/command_args.hpp"
#include "control/render.hpp"
#include "gate/task_status.hpp"
#include "service/journal_use_cases.hpp"
#include "service/service.hpp"

namespace leasefs::control {

namespace {

gate::TaskStatus status_arg(Args& a, const char* name, const std::string& text) {
  auto st = gate::parse_status(text);
  if (!st) {
    std::string names;
    for (auto s : gate::kAllStatuses)
      names += (names.empty() ? "" : ", ") + std::string(to_string(s));
    a.invalid(name, "is not a task status: '" + text + "' (one of: " + names + ")");
  }
  return *st;
}

}  // namespace

Result handle_status(CommandContext& ctx, const json& args, const gate::Actor&) {
  Args a("status", args);
  a.finish();
  if (ctx.flush_refusals) ctx.flush_refusals();
  StatusView view;
  view.report = service(ctx).status();
  if (ctx.control_stats) view.budget_refusals = ctx.control_stats();
  if (ctx.journal) view.journal = ctx.journal->status();
  return Result(ctx.status_replies->text(std::move(view)));
}

Result handle_start(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("start", args);
  service::StartArgs s;
  s.description = a.str("description");
  s.keywords = a.str_list("keywords");
  s.done_when = a.str_or("done_when", "");
  a.finish();
  return render(service(ctx).start(s, actor));
}

Result handle_turn(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("turn", args);
  a.finish();
  return render(service(ctx).turn(actor));
}

Result handle_end_turn(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("end-turn", args);
  a.finish();
  return render(service(ctx).end_turn(actor));
}

Result handle_checkpoint(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("checkpoint", args);
  service::CheckpointArgs c;
  c.retry_pending = a.flag("retry_pending");
  if (c.retry_pending) {
    c.summary = a.str_or("summary", "");
    c.next = a.str_or("next", "");
  } else {
    c.summary = a.str("summary");
    c.next = a.str("next");
  }
  if (auto st = a.opt_str("status", kMaxIdArgBytes)) c.status = status_arg(a, "status", *st);
  c.current_step = a.str_or("current_step", "");
  c.verified = a.str_or("verified", "");
  c.discarded = a.str_or("discarded", "");
  c.needs_approval = a.str_or("needs_approval", "");
  a.finish();
  return render(service(ctx).checkpoint(c, actor));
}

Result handle_resume(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("resume", args);
  auto id = a.opt_str("task_id", kMaxIdArgBytes);
  a.finish();
  return render(service(ctx).resume(id, actor));
}

Result handle_transition(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("transition", args);
  gate::TaskStatus to = status_arg(a, "state", a.str("state", kMaxIdArgBytes));
  std::string reason = a.str_or("reason", "");
  a.finish();
  return render(service(ctx).transition(to, reason, actor));
}

}  // namespace leasefs::control
