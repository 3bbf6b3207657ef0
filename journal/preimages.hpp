// The pre-images of a turn as diff and undo read them: the first one per path,
// with an appended-only one (Entry::appended) merged with the "content" fact
// that kept its bytes later, and, for one still appended-only, where its bytes
// are now.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "journal/journal.hpp"

namespace leasefs::journal {

// The first pre-image per path of `turn`, limited to `paths` (prefixes; empty: all).
std::vector<Entry> first_preimages(const Journal& journal, uint64_t turn,
                                   const std::vector<std::string>& paths);

// Where the first `size` bytes of appended-only pre-image `e` are: the file
// was only appended to until its turn ended, so they are the first bytes of the
// next pre-image a later turn took of the same inode (under any name), or, when
// none did, of the file in the tree now.
struct AppendedBytes {
  // A later turn's blob (`blob` set), else the tree's file at `e.path`.
  uint64_t turn = 0;
  std::string blob;
  bool unknown = false;  // a later pre-image kept no content (not undoable)
};
AppendedBytes appended_bytes(const Journal& journal, const Entry& e);

}  // namespace leasefs::journal
