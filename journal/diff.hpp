// What a turn changed: for each path it journaled, the pre-image against the
// state after the turn (the first pre-image a later turn kept of it, or the tree
// as it is now). Text contents as a unified diff (`diff -u` from diffutils, on
// copies made by the daemon, so no path in the tree is followed), binary ones as
// a summary; creates, deletes, renames (the same inode under a new name), mode,
// owner, xattr and symlink changes as lines of their own, every name and xattr
// value quoted as git quotes names (base/inert_text.hpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
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

// {"turn", "changes":[{path, change, ...}], "text": "..."}.
nlohmann::json diff(const Journal& journal, const DiffRequest& request);

}  // namespace leasefs::journal
