#include "protocol/arg_text.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>

namespace leasefs::protocol {

std::vector<std::string> split_csv(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<int64_t> parse_duration_ms(std::string_view text) noexcept {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data() || value <= 0) return std::nullopt;
  std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  int64_t scale = 0;
  // A bare number is refused: "10" could mean seconds or minutes, and a lease
  // whose length is a guess is one nobody agreed to.
  if (unit == "s")
    scale = 1000;
  else if (unit == "ms")
    scale = 1;
  else if (unit == "m")
    scale = 60'000;
  else if (unit == "h")
    scale = 3'600'000;
  else if (unit == "d")
    scale = 86'400'000;
  else
    return std::nullopt;
  if (value > INT64_MAX / scale) return std::nullopt;
  return value * scale;
}

std::string closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  // Levenshtein distance with one row; words here are a few letters long.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    const size_t d = distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Near enough: at most a third of the word wrong, and at least one letter right.
  if (best.empty() || best_d * 3 > std::max(word.size(), best.size()) + 2 ||
      best_d >= word.size()) {
    return {};
  }
  return best;
}

}  // namespace leasefs::protocol
