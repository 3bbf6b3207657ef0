// One table per enum gives both directions of its wire spelling: the name an
// enum value is written as (JSON, audit, ledger) and the value a name reads back
// as. A value missing from its table is a bug the tests of that enum catch; it
// reads as `fallback` rather than throwing in a noexcept path.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace leasefs::base {

template <typename Enum, std::size_t N>
using EnumNames = std::array<std::pair<Enum, std::string_view>, N>;

template <typename Enum, std::size_t N>
constexpr std::string_view enum_name(const EnumNames<Enum, N>& names, Enum value,
                                     std::string_view fallback = "unknown") noexcept {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return fallback;
}

template <typename Enum, std::size_t N>
constexpr std::optional<Enum> enum_from_name(const EnumNames<Enum, N>& names,
                                             std::string_view text) noexcept {
  for (const auto& [v, name] : names) {
    if (name == text) return v;
  }
  return std::nullopt;
}

}  // namespace leasefs::base
