// Which audit records `leasectl audit show` and `watch --since` read back: by
// time, turn, op and path. A record without a "turn" of its own belongs to the
// turn the log was in when it was written (the last "turn" seen before it).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace leasefs::memory {

struct AuditQuery {
  std::int64_t since_ms = 0;
  std::optional<std::uint64_t> turn;
  std::string op;                  // the record's "op"; empty: any
  std::vector<std::string> paths;  // the record names one of these, or a path beneath one
};

// Reads the log in order: matches() is called once per record, oldest first.
class AuditMatcher {
 public:
  explicit AuditMatcher(const AuditQuery& query) : q_(query) {}
  bool matches(const nlohmann::json& event, std::int64_t ts_ms);

 private:
  bool names_a_path(const nlohmann::json& event) const;
  const AuditQuery& q_;
  std::uint64_t turn_ = 0;
};

}  // namespace leasefs::memory
