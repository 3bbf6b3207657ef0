// A grant's scope is about the effect of an operation, not the call that asks.
// Some calls change more than the one name they carry:
//  - renaming a directory moves every path beneath it, so the scope must cover
//    the whole subtree under the old and the new name;
//  - renaming over an existing target also deletes the target;
//  - RENAME_EXCHANGE moves both names, each onto the other;
//  - a hard link is a new name for existing content, through which that content
//    can then be written or re-moded.
// The filesystem lists what it found (names, subtrees, whether the target exists);
// these pure functions turn that into verdicts over one snapshot.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gate/decision.hpp"

namespace leasefs::gate {

// Paths beneath a directory, relative to it ("a", "a/b"), as the filesystem found
// them within its bounds. `complete` false: the walk stopped (too many entries, too
// deep, a name too long, or not walked at all), so the subtree is judged as a path
// the gate cannot express: only a grant with no path scope covers it.
struct Subtree {
  std::vector<std::string> entries;
  bool complete = false;
};

enum class RenameTarget : uint8_t { kAbsent, kFile, kDirectory };

struct RenamePlan {
  std::string from;  // both relative to the root, as decide() takes them
  std::string to;
  bool from_is_dir = false;
  Subtree from_tree;  // used when from_is_dir
  RenameTarget target = RenameTarget::kAbsent;
  bool exchange = false;  // RENAME_EXCHANGE
  Subtree to_tree;        // used when exchanging with a directory
};

// One effect of an operation: an op class applied at a path.
struct Effect {
  Op op = Op::kRename;
  std::string path;
};

struct EffectDecision {
  Decision decision;
  Effect refused;  // the first effect refused (when not allowed)
};

EffectDecision decide_rename(const GateSnapshot& snapshot, const RenamePlan& plan,
                             const Caller& caller, int64_t now_ms);

// link(source, name): a create at `name`, and `source` must be in scope for it too.
// The new name must also not open the content to more than the old one did: every
// op class the new name would allow on the content (write, attr) must be allowed
// at the source.
EffectDecision decide_link(const GateSnapshot& snapshot, std::string_view source,
                           std::string_view name, const Caller& caller, int64_t now_ms);

}  // namespace leasefs::gate
