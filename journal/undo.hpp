// Putting a turn back: every path the turn journaled (or the named ones) returns
// to its pre-image, on the backing tree, never through the mount.
//
// Each step is idempotent and works from the journal alone, so an undo that
// died midway is finished by running it again. The undo journals what it
// changes in the current turn (origin "undo:<N>"), so it can itself be undone;
// those entries never count as conflicts of the undo they belong to.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "journal/journal.hpp"
#include "journal/preimages.hpp"

namespace leasefs::journal {

struct UndoRequest {
  uint64_t turn = 0;               // the turn to put back
  uint64_t current_turn = 0;       // where the undo's own pre-images go
  std::vector<std::string> paths;  // empty: everything the turn changed
  bool force = false;              // go ahead despite later turns' changes
  bool dry_run = false;
};

// Told of each path before and after the undo changes it (the filesystem drops
// its kernel caches for it).
using TouchFn = std::function<void(const std::string& path)>;

// What an undo did, or (dry_run) would do.
struct UndoReport {
  struct NotUndoable {
    std::string path;
    std::string why;
  };
  struct Conflict {  // a path a later turn changed again
    std::string path;
    uint64_t turn = 0;
  };
  uint64_t turn = 0;
  bool dry_run = false;
  bool applied = false;
  std::vector<std::string> restored;
  std::vector<std::string> removed;
  std::vector<NotUndoable> not_undoable;
  std::vector<Conflict> conflicts;  // those it went ahead over (force)
};

// Throws Error{undo_conflict} listing the conflicts when later turns changed
// the same paths and `force` is off; Error{not_found} when the turn has no journal.
UndoReport undo(Journal& journal, const UndoRequest& request, const TouchFn& touch);

}  // namespace leasefs::journal
