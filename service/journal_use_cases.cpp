#include "service/journal_use_cases.hpp"

#include <spdlog/spdlog.h>

#include "base/error.hpp"
#include "journal/diff.hpp"
#include "journal/kept_paths.hpp"
#include "journal/undo.hpp"
#include "service/service.hpp"
#include "service/service_support.hpp"

namespace leasefs::service {

namespace {

using nlohmann::json;

// Paths as a person types them ("./src/", "/src/a.c") in the journal's form.
std::vector<std::string> normalized(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (std::string p : paths) {
    while (p.starts_with("./")) p.erase(0, 2);
    while (p.starts_with('/')) p.erase(0, 1);
    while (p.size() > 1 && p.ends_with('/')) p.pop_back();
    if (p.empty() || p == ".") {
      out.clear();  // the whole tree
      return out;
    }
    if (!journal::journaled_path(p)) {
      throw Error(Errc::kInvalidArgument,
                  "path '" + p +
                      "' is not a path under the root the journal keeps (relative, no "
                      "'..', not under .longrun)");
    }
    out.push_back(p);
  }
  return out;
}

// diff and undo of a turn that has not begun: one refusal, one message. "No
// changes" would read as an answer about a turn that never was.
void require_begun(uint64_t turn, uint64_t current) {
  if (turn > current) {
    throw Error(Errc::kNotFound, "turn " + std::to_string(turn) +
                                     " has not begun: the current turn is " +
                                     std::to_string(current));
  }
}

// The undo's own changes are journaled in the current turn, whose pre-images
// already hold the state before it: an undo of the current turn cannot be undone.
// Said the same for a dry run as for the undo itself.
std::string current_turn_warning(uint64_t turn) {
  return "turn " + std::to_string(turn) +
         " is the current turn: undoing it cannot be undone (end the turn with `leasectl "
         "turn` first to keep a way back)";
}

}  // namespace

JournalUseCases::JournalUseCases(Service& service, journal::Journal& journal,
                                 report::EventBus& events, memory::Ledger* ledger)
    : service_(service), journal_(journal), events_(events), ledger_(ledger) {}

DiffResult JournalUseCases::diff(const DiffArgs& args, const gate::Actor& actor) {
  const uint64_t current = service_.state().turn_index;
  if (args.turn) require_begun(*args.turn, current);
  journal::DiffRequest req;
  req.turn = args.turn.value_or(current);
  req.paths = normalized(args.paths);
  req.stat = args.stat;
  if (!actor.approver) req.reader = std::make_pair(actor.uid, actor.gid);
  return {journal::diff(journal_, req), journal_.enabled()};
}

UndoResult JournalUseCases::undo(const UndoArgs& args, const gate::Actor& actor) {
  require_approver(actor, "undo a turn");
  std::lock_guard lock(undo_mu_);
  const gate::TaskState state = service_.state();
  require_begun(args.turn, state.turn_index);  // before the ledger and the audit hear of it
  journal::UndoRequest req;
  req.turn = args.turn;
  req.current_turn = state.turn_index;
  req.paths = normalized(args.paths);
  req.force = args.force;
  req.dry_run = args.dry_run;
  if (!args.dry_run && ledger_) {
    // The ledger first, as for a grant: an undo it cannot record does not run.
    memory::UndoRecord record;
    record.task_id = state.task_id;
    record.turn = static_cast<int64_t>(state.turn_index);
    record.undone_turn = static_cast<int64_t>(args.turn);
    record.actor_uid = actor.uid;
    record.reason = args.reason;
    record.paths = req.paths;
    record.force = args.force;
    try {
      ledger_->record_undo(record);
    } catch (const std::exception& e) {
      throw Error(Errc::kMemoryError, std::string("undo: the ledger cannot record it, nothing was "
                                                  "changed: ") +
                                          e.what());
    }
  }
  if (!args.dry_run) {
    // Recorded before it takes effect: the audit shows an undo that started,
    // even if the daemon dies midway (running it again finishes it).
    events_.publish({{"type", "undo_started"},
                     {"turn", args.turn},
                     {"current_turn", state.turn_index},
                     {"paths", req.paths},
                     {"force", args.force},
                     {"reason", args.reason},
                     {"uid", actor.uid}});
  }
  journal::UndoReport out = journal::undo(journal_, req, touch_);
  if (!args.dry_run) {
    spdlog::info("undo of turn {}: {} restored, {} removed", args.turn, out.restored.size(),
                 out.removed.size());
    json not_undoable = json::array(), forced_over = json::array();
    for (const auto& n : out.not_undoable)
      not_undoable.push_back({{"path", n.path}, {"why", n.why}});
    for (const auto& c : out.conflicts) forced_over.push_back({{"path", c.path}, {"turn", c.turn}});
    events_.publish({{"type", "undo"},
                     {"turn", args.turn},
                     {"current_turn", state.turn_index},
                     {"restored", out.restored},
                     {"removed", out.removed},
                     {"not_undoable", std::move(not_undoable)},
                     {"forced_over", std::move(forced_over)},
                     {"reason", args.reason},
                     {"uid", actor.uid}});
  }
  const bool current = args.turn == state.turn_index;
  return {std::move(out), state.turn_index, !current,
          current ? current_turn_warning(args.turn) : std::string()};
}

PruneResult JournalUseCases::prune(const PruneArgs& args, const gate::Actor& actor) {
  require_approver(actor, "delete the journal of older turns");
  std::lock_guard lock(undo_mu_);  // not while an undo reads them
  const uint64_t turn = service_.state().turn_index;
  PruneResult out{turn, args.dry_run, journal_.prune_older(turn, args.keep, args.dry_run)};
  if (!args.dry_run && !out.pruned.empty()) {
    json turns = json::array();
    uint64_t bytes = 0;
    for (const auto& p : out.pruned) {
      turns.push_back({{"turn", p.turn}, {"bytes", p.bytes}, {"paths", p.paths.size()}});
      bytes += p.bytes;
    }
    spdlog::info("journal of {} older turns deleted: {} bytes", out.pruned.size(), bytes);
    events_.publish({{"type", "journal_pruned"},
                     {"current_turn", turn},
                     {"turns", std::move(turns)},
                     {"bytes", bytes},
                     {"reason", args.reason},
                     {"uid", actor.uid}});
  }
  return out;
}

JournalStatus JournalUseCases::status() {
  const uint64_t turn = service_.state().turn_index;
  journal::Journal::Summary s = journal_.summary(turn);
  return {journal_.enabled(),        turn,         s.bytes, s.turns_kept,
          std::move(s.not_undoable), s.older_bytes};
}

}  // namespace leasefs::service
