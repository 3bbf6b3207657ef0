// JSON as stored in memory.db and audit.jsonl: compact, and never throwing on
// invalid UTF-8 from a caller (it is replaced, not rejected).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace leasefs::base {

inline std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A JSON value serialized once by json_text(), for readers that all want the same
// bytes (the event bus's subscribers: the audit log, watch streams). Made only
// from a value, so its text is always one complete JSON document.
class JsonText {
 public:
  explicit JsonText(const nlohmann::json& value) : text_(json_text(value)) {}
  const std::string& str() const noexcept { return text_; }
  // The value back, for the rare reader that needs a field.
  nlohmann::json value() const { return nlohmann::json::parse(text_); }

 private:
  std::string text_;
};

}  // namespace leasefs::base
