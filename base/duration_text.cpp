#include "base/duration_text.hpp"

#include <array>
#include <utility>

namespace leasefs::base {

std::string duration_text(int64_t ms) {
  if (ms <= 0) return "0s";
  if (ms < 1000) return std::to_string(ms) + "ms";
  static constexpr std::array<std::pair<int64_t, const char*>, 4> kUnits{
      {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1'000, "s"}}};
  size_t i = 0;
  while (ms < kUnits[i].first) ++i;  // ms >= 1000: stops at "s" at the latest
  std::string out = std::to_string(ms / kUnits[i].first) + kUnits[i].second;
  if (i + 1 < kUnits.size()) {
    const int64_t next = ms % kUnits[i].first / kUnits[i + 1].first;
    if (next > 0) out += " " + std::to_string(next) + kUnits[i + 1].second;
  }
  return out;
}

}  // namespace leasefs::base
