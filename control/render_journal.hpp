// The wire's view of the journal's answers (journal/diff.hpp, journal/undo.hpp,
// through service/results.hpp): the JSON a diff or undo reply carries.
#pragma once

#include <nlohmann/json.hpp>

#include "journal/diff.hpp"
#include "journal/undo.hpp"
#include "service/results.hpp"

namespace leasefs::control {

// {"turn", "changes":[{path, change, ...}], "text"}, and "journal":"off" when
// nothing is kept.
nlohmann::json render(const service::DiffResult& result);
// {"turn", "restored":[...], "removed":[...], "not_undoable":[{path,why}],
//  "conflicts":[{path,turn}], "dry_run", "applied", "journaled_in_turn",
//  "can_be_undone"}.
nlohmann::json render(const service::UndoResult& result);
// {"turn", "dry_run", "pruned":[{turn, bytes, "not_undoable_now":[paths]}], "bytes"}.
nlohmann::json render(const service::PruneResult& result);

}  // namespace leasefs::control
