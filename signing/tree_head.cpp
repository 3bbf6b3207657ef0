#include "signing/tree_head.hpp"

#include <charconv>

#include "signing/base64.hpp"

namespace leasefs::signing {

std::string tree_head_text(const TreeHead& head) {
  return head.origin + "\n" + std::to_string(head.size) + "\n" + base64_encode(head.root_hash) +
         "\n";
}

std::optional<TreeHead> parse_tree_head(std::string_view text, std::string* why) {
  auto next_line = [&](std::string_view* line) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) return false;
    *line = text.substr(0, end);
    text.remove_prefix(end + 1);
    return true;
  };
  std::string_view origin, size, hash;
  if (!next_line(&origin) || !next_line(&size) || !next_line(&hash)) {
    *why = "a checkpoint has an origin, a size and a root hash, a line each";
    return std::nullopt;
  }
  TreeHead head;
  if (origin.empty()) {
    *why = "the checkpoint's origin is empty";
    return std::nullopt;
  }
  head.origin = std::string(origin);
  const bool digits = !size.empty() && size.find_first_not_of("0123456789") == std::string::npos;
  const auto [end, err] = std::from_chars(size.data(), size.data() + size.size(), head.size);
  if (!digits || err != std::errc() || end != size.data() + size.size() ||
      (size.size() > 1 && size[0] == '0')) {
    *why = "the checkpoint's size is not a decimal number without leading zeros";
    return std::nullopt;
  }
  const auto raw = base64_decode(hash);
  if (!raw || raw->size() != 32) {
    *why = "the checkpoint's root hash is not canonical base64 of 32 bytes";
    return std::nullopt;
  }
  head.root_hash = *raw;
  while (!text.empty()) {
    std::string_view extension;
    if (!next_line(&extension) || extension.empty()) {
      *why = "the checkpoint has an empty or unterminated extension line";
      return std::nullopt;
    }
  }
  return head;
}

std::optional<std::string> hash_bytes(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  std::string out(32, '\0');
  for (size_t i = 0; i < 32; ++i) {
    unsigned value = 0;
    const auto [end, err] = std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, value, 16);
    if (err != std::errc() || end != hex.data() + 2 * i + 2) return std::nullopt;
    out[i] = static_cast<char>(value);
  }
  if (hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) return std::nullopt;
  return out;
}

}  // namespace leasefs::signing
