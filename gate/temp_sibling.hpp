// Temporary siblings: edits the way tools make them.
//
// `sed -i`, `perl -i`, an editor's atomic save and `git checkout -- FILE` never
// write the file in place: they create a temporary file beside it, write it, and
// rename it over the original (git also refreshes its index through
// `.git/index.lock`). Under a grant for one exact path, the temporary name is out
// of scope, so each of these tools would be refused.
//
// The rule: a file created, under a path-narrowed grant with the write class, in a
// directory that the grant's scope reaches into (the directory part of one of its
// globs matches; for `dir/` and `dir/**`, also any directory the glob matches),
// becomes a temporary sibling for this turn. A temporary sibling may only be
// written, have its attributes set, be unlinked, or be renamed onto a file the
// lease covers for writing (for the tool, replacing the file's content is a write
// of it), or onto a new name the lease covers for creating. It can never be renamed to an
// out-of-scope name or linked. It lives as long as the lease that made it: once no path-narrowed
// grant with the write class is in force for its turn (`turn`, `end-turn`, `revoke`, a checkpoint),
// it is no longer one, and if it is still in the tree the filesystem takes it
// out (into the turn's journal) and reports it (`temporary_leftover`).
//
// `.git/index.lock` (in any directory) is a temporary sibling whose only rename
// target is the `.git/index` beside it: git's cache of the tree's state, which
// `git checkout -- FILE` must refresh. It can create no objects.
//
// The filesystem tracks which inodes are temporary siblings; these functions are
// the policy, over one snapshot.
#pragma once

#include <cstdint>
#include <string_view>

#include "gate/decision.hpp"

namespace leasefs::gate {

// Whether a create of `path`, which the lease does not cover, may make a
// temporary sibling. Allowed names the grant that allows it.
Decision decide_temp_sibling(const GateSnapshot& snapshot, std::string_view path,
                             const Caller& caller, int64_t now_ms) noexcept;

// `op` on a temporary sibling created in turn `turn`: write and attr classes and
// unlink, while that turn lasts and a path-narrowed grant with the write class is
// in force.
Decision decide_on_temp_sibling(const GateSnapshot& snapshot, Op op, uint64_t turn,
                                const Caller& caller, int64_t now_ms) noexcept;

// Renaming a temporary sibling at `from` (created in `turn`) onto `to`: onto a
// file there (`to_exists`) as a write of it, onto a new name as a create of it.
Decision decide_temp_sibling_rename(const GateSnapshot& snapshot, std::string_view from,
                                    std::string_view to, bool to_exists, uint64_t turn,
                                    const Caller& caller, int64_t now_ms) noexcept;

// Whether a temporary sibling created in `turn` is still one under `snapshot` at
// `now_ms`: the task in progress, `turn` current, and a path-narrowed grant with the
// write class of that turn in force, not expired (false: a leftover to take out of the tree).
bool temp_sibling_turn_open(const GateSnapshot& snapshot, uint64_t turn, int64_t now_ms) noexcept;

}  // namespace leasefs::gate
