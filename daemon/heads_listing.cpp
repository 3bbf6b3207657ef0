#include "daemon/heads_listing.hpp"

#include <string>

#include "signing/heads_file.hpp"
#include "signing/signed_note.hpp"
#include "signing/tree_head.hpp"

namespace leasefs::daemon {
namespace {

// The ledger keeps root hashes as the chain's records keep theirs: lower-case hex.
std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    out += kDigits[u >> 4];
    out += kDigits[u & 0x0f];
  }
  return out;
}

}  // namespace

nlohmann::json list_signed_heads(std::string_view heads_text, uint64_t after_size, size_t max,
                                 size_t max_bytes) {
  const signing::HeadsFile file = signing::split_heads_file(heads_text);
  nlohmann::json heads = nlohmann::json::array();
  nlohmann::json out{{"entries", file.entries.size()}, {"more", false}};
  size_t bytes = 0;
  for (const signing::HeadsEntry& entry : file.entries) {
    std::string why;
    const auto note = signing::parse_note(entry.note, &why);
    const auto head = note ? signing::parse_tree_head(note->text, &why) : std::nullopt;
    if (!head) {
      out["damaged"] = "line " + std::to_string(entry.line) + ": " + why;
      break;
    }
    if (head->size <= after_size) continue;
    if (heads.size() == max || (!heads.empty() && bytes + entry.note.size() > max_bytes)) {
      out["more"] = true;
      break;
    }
    bytes += entry.note.size();
    heads.push_back(
        {{"size", head->size}, {"root_hash", hex(head->root_hash)}, {"checkpoint", entry.note}});
  }
  if (file.bad_line != 0 && !out.contains("damaged") && !out["more"].get<bool>()) {
    out["damaged"] = "line " + std::to_string(file.bad_line) + ": " + file.why;
  }
  out["heads"] = std::move(heads);
  return out;
}

}  // namespace leasefs::daemon
