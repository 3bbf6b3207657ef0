// The journal's commands: diff and undo. Arguments are checked here (types,
// bounds, unknown names) and the use cases do the rest
// (service/journal_use_cases.hpp).
#include "control/command_args.hpp"
#include "control/render_journal.hpp"
#include "service/journal_use_cases.hpp"

namespace leasefs::control {

namespace {

constexpr size_t kMaxPathBytes = 4096;

service::JournalUseCases& journal(CommandContext& ctx) {
  if (!ctx.journal) {
    throw Error(Errc::kNotFound,
                "this daemon keeps no journal (mounted with --journal=off); remount without it");
  }
  return *ctx.journal;
}

}  // namespace

Result handle_diff(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("diff", args);
  service::DiffArgs d;
  d.turn = a.opt_count("turn");
  d.paths = a.str_list("paths", kMaxListItems, kMaxPathBytes);
  d.stat = a.flag("stat");
  a.finish();
  return render(journal(ctx).diff(d, actor));
}

Result handle_undo(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("undo", args);
  service::UndoArgs u;
  auto turn = a.opt_count("turn");
  if (!turn) a.missing("turn", "the turn to put back");
  u.turn = *turn;
  u.paths = a.str_list("paths", kMaxListItems, kMaxPathBytes);
  u.force = a.flag("force");
  u.dry_run = a.flag("dry_run");
  u.reason = a.str_or("reason", "");
  a.finish();
  return render(journal(ctx).undo(u, actor));
}

Result handle_journal_prune(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("journal.prune", args);
  service::PruneArgs p;
  p.keep = a.opt_count("keep").value_or(0);
  p.dry_run = a.flag("dry_run");
  p.reason = a.str_or("reason", "");
  a.finish();
  return render(journal(ctx).prune(p, actor));
}

}  // namespace leasefs::control
