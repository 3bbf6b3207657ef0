// What a journal entry keeps: a pre-image of each kind of thing a path can be
// (absent: it did not exist), or a fact for diff (a rename, a leftover taken
// out of the tree). The index, events and replies spell it as kind_name() does.
#pragma once

#include <sys/stat.h>

#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace leasefs::journal {

// kContent: the content an appended-only pre-image (Entry::appended) kept
// later, before its file was first changed other than by an append.
enum class EntryKind { kAbsent, kFile, kDir, kSymlink, kOther, kRename, kLeftover, kContent };

// "absent", "file", "dir", "symlink", "other", "rename", "leftover", "content".
std::string_view kind_name(EntryKind kind) noexcept;
// The kind so spelled; an unknown spelling reads as kOther.
EntryKind kind_from_name(std::string_view name) noexcept;
// What a stat says a path is: file, dir, symlink or other.
EntryKind kind_of(const struct stat& st) noexcept;
// A kind in JSON is its name (found by nlohmann through argument lookup).
void to_json(nlohmann::json& j, EntryKind kind);

}  // namespace leasefs::journal
