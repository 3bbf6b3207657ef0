#include "journal/entry_kind.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace leasefs::journal {

namespace {

constexpr std::array<std::pair<EntryKind, std::string_view>, 8> kNames = {{
    {EntryKind::kAbsent, "absent"},
    {EntryKind::kFile, "file"},
    {EntryKind::kDir, "dir"},
    {EntryKind::kSymlink, "symlink"},
    {EntryKind::kOther, "other"},
    {EntryKind::kRename, "rename"},
    {EntryKind::kLeftover, "leftover"},
    {EntryKind::kContent, "content"},
}};

}  // namespace

std::string_view kind_name(EntryKind kind) noexcept {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "other";
}

EntryKind kind_from_name(std::string_view name) noexcept {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return EntryKind::kOther;
}

EntryKind kind_of(const struct stat& st) noexcept {
  if (S_ISREG(st.st_mode)) return EntryKind::kFile;
  if (S_ISDIR(st.st_mode)) return EntryKind::kDir;
  if (S_ISLNK(st.st_mode)) return EntryKind::kSymlink;
  return EntryKind::kOther;
}

void to_json(nlohmann::json& j, EntryKind kind) {
  j = std::string(kind_name(kind));
}

}  // namespace leasefs::journal
