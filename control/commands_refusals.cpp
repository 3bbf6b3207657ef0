// What the agent's host hands back to the model after a tool call:
// refusals.mark and refusals.since (service/refusal_feed.hpp). Both are the
// agent side's: they read refusals and change no lease, request or state.
#include "control/command_args.hpp"
#include "service/service.hpp"

namespace leasefs::control {

namespace {

// A host's id of a tool call (Claude Code's toolu_..., Codex's call_...).
constexpr size_t kMaxCallBytes = 256;

}  // namespace

Result handle_refusals_mark(CommandContext& ctx, const json& args, const gate::Actor&) {
  Args a("refusals.mark", args);
  const std::string call = a.str("call", kMaxCallBytes);
  a.finish();
  if (call.empty()) throw Error(Errc::kInvalidArgument, "refusals.mark needs the call's id");
  // Refusals still gathered (report/pump.hpp) belong before the mark, not after it.
  if (ctx.flush_refusals) ctx.flush_refusals();
  service(ctx).refusal_feed().mark(call);
  return json{{"marked", call}};
}

Result handle_refusals_since(CommandContext& ctx, const json& args, const gate::Actor&) {
  Args a("refusals.since", args);
  const std::string call = a.str_or("call", "", kMaxCallBytes);
  a.finish();
  // The tool's own refusals may still be gathered: they are noted first.
  if (ctx.flush_refusals) ctx.flush_refusals();
  service::Service& s = service(ctx);
  const gate::TaskState state = s.state();
  service::RefusalFeed::Window w = s.refusal_feed().take(call, state.turn_index);
  return json{{"turn", state.turn_index},
              {"window", w.whole_turn ? "turn" : "call"},
              {"refusals", std::move(w.refusals)},
              {"left_out", w.left_out},
              {"in_progress", state.has_task() && state.status == gate::TaskStatus::kInProgress}};
}

}  // namespace leasefs::control
