#include "journal/preimages.hpp"

#include <map>

#include "journal/kept_paths.hpp"

namespace leasefs::journal {

namespace {

bool selected(const std::string& path, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  for (const auto& f : filters) {
    if (path_within(path, f)) return true;
  }
  return false;
}

}  // namespace

std::vector<Entry> first_preimages(const Journal& journal, uint64_t turn,
                                   const std::vector<std::string>& paths) {
  std::vector<Entry> out;
  std::map<std::string, size_t> at;  // path -> its first pre-image in `out`
  for (Entry& e : journal.entries(turn)) {
    if (!selected(e.path, paths)) continue;
    if (e.kind == EntryKind::kContent) {
      // The bytes an appended-only pre-image stood for, kept later: one pre-image.
      auto it = at.find(e.path);
      if (it == at.end() || !out[it->second].appended) continue;
      Entry& first = out[it->second];
      first.appended = false;
      first.blob = e.blob;
      first.undoable = e.undoable;
      first.why = e.why;
      continue;
    }
    if (e.is_fact() || !at.try_emplace(e.path, out.size()).second) continue;
    out.push_back(std::move(e));
  }
  return out;
}

AppendedBytes appended_bytes(const Journal& journal, const Entry& e) {
  for (uint64_t t : journal.turns()) {
    if (t <= e.turn) continue;
    for (const Entry& later : first_preimages(journal, t, {})) {
      if (later.kind != EntryKind::kFile || later.ino != e.ino) continue;
      if (later.appended) return appended_bytes(journal, later);  // its bytes are further on
      if (later.blob.empty()) return {t, {}, true};
      return {t, later.blob, false};
    }
  }
  return {};
}

}  // namespace leasefs::journal
