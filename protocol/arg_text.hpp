// Argument text shared by the daemon's command table and leasectl (which must not
// link the daemon's side to parse it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasefs::protocol {

// "write, create,,rename" -> {"write","create","rename"}: items trimmed, empty ones dropped.
std::vector<std::string> split_csv(std::string_view text);
// "10m", "30s", "1h", "2d", "500ms" or a number of seconds -> milliseconds.
std::optional<int64_t> parse_duration_ms(std::string_view text) noexcept;

// The candidate nearest to `word` by edit distance, if it is near enough to be a
// slip ("stauts" -> "status"); empty otherwise. For "did you mean" messages.
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace leasefs::protocol
