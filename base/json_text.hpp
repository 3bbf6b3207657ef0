// JSON as stored in memory.db and audit.jsonl: compact, and never throwing on
// invalid UTF-8 from a caller (it is replaced, not rejected).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace leasefs::base {

inline std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace leasefs::base
