// What a turn changed: for each path it journaled, the pre-image against the
// state after the turn (the first pre-image a later turn kept of it, or the tree
// as it is now). Text contents as a unified diff (`diff -u` from diffutils, on
// copies made by the daemon, so no path in the tree is followed), binary ones as
// a summary; creates, deletes, renames (the same inode under a new name), mode,
// owner, xattr and symlink changes as lines of their own, every name and xattr
// value quoted as git quotes names (base/inert_text.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "journal/journal.hpp"

namespace leasefs::journal {

struct DiffRequest {
  uint64_t turn = 0;
  std::vector<std::string> paths;  // prefixes; empty: all
  bool stat = false;               // no content diffs, one line per path
  // Who asks, when not an approver: contents are shown only of files whose
  // mode let this uid/gid read them, before and after (the journal must not
  // hand an agent the old content of a file it could never read).
  std::optional<std::pair<uint32_t, uint32_t>> reader;
};

// One path's change, as a reply carries it (control/render_journal.cpp).
struct DiffChange {
  enum class What { kRenamed, kLeftover, kCreated, kDeleted, kReplaced, kModified };
  // A before -> after pair of one property, as text.
  using Pair = std::pair<std::string, std::string>;
  // One xattr's change: its values in hex (std::nullopt: none), or, when the
  // reader may not see them, only that it changed.
  struct Xattr {
    bool shown = true;
    std::optional<std::string> before, after;
  };

  std::string path;
  What what = What::kModified;
  std::string to;                   // renamed: the new name
  std::optional<EntryKind> kind;    // leftover, created, deleted: what it is (was)
  std::string blob;                 // leftover: the journal's copy
  std::optional<Pair> mode, owner;  // modified: "0644" -> "0600", "uid:gid" -> "uid:gid"
  std::optional<Pair> target;       // modified symlink
  std::map<std::string, Xattr> xattrs;
  bool content = false;  // the content changed
  bool binary = false;   // ... and is binary
  bool undoable = true;
  std::string why;  // when not undoable
};

// "renamed", "leftover", "created", "deleted", "replaced", "modified".
std::string_view what_name(DiffChange::What what) noexcept;

struct DiffReport {
  uint64_t turn = 0;
  std::vector<DiffChange> changes;
  std::string text;  // what a person reads: the lines above and the unified diffs
};

DiffReport diff(const Journal& journal, const DiffRequest& request);

}  // namespace leasefs::journal
