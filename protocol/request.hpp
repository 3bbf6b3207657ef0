// The wire format of the control socket: one JSON object per line each way.
//
//   request  {"id":7,"cmd":"grant","args":{...},"idempotency_key":"k1"}
//   reply    {"id":7,"ok":true,"result":{...}}
//            {"id":7,"ok":false,"error":{"code":"bad_request","message":"..."}}
//
// `id` is any JSON scalar the client picks; it is echoed, and is null when the
// line could not be parsed far enough to find it. `args` may be omitted (an empty
// object). `idempotency_key` is honoured by mutating commands.
//
// Lines are framed by LineFramer, which never holds more than the line limit: a
// longer line is reported once as too long and the rest of it is discarded up to
// its newline, so a client cannot make the daemon allocate without bound.
#pragma once

#include <cstddef>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace leasefs::protocol {

inline constexpr size_t kMaxLineBytes = size_t{1} << 20;  // 1 MiB, newline excluded
inline constexpr size_t kMaxIdBytes = 128;                // a string request id

struct Request {
  nlohmann::json id;  // null when absent
  std::string cmd;
  nlohmann::json args = nlohmann::json::object();
  std::optional<std::string> idempotency_key;
};

// Parses one line (without its newline). Throws Error with bad_json,
// bad_request or unknown_command. When it throws after finding a usable id, that
// id is stored in `*id_out` so the error reply can echo it.
Request parse_request(std::string_view line, nlohmann::json* id_out = nullptr);

nlohmann::json ok_reply(const nlohmann::json& id, nlohmann::json result);
nlohmann::json error_reply(const nlohmann::json& id, Errc code, std::string_view message);
// How error messages name a JSON value's type: "integer" and "number" apart,
// otherwise nlohmann's name ("string", "array", "object", ...).
std::string json_type_name(const nlohmann::json& value);

// One line of output: compact JSON, invalid UTF-8 replaced, newline appended.
std::string to_line(const nlohmann::json& value);
// to_line(ok_reply(id, result)) for a result already serialized by base::json_text
// (`result_text`), without parsing it back.
std::string ok_reply_line(const nlohmann::json& id, std::string_view result_text);

// Splits a byte stream into lines of at most `max_bytes` (newline excluded).
class LineFramer {
 public:
  struct Line {
    std::string text;
    bool too_long = false;  // text is empty; the line exceeded the limit and was discarded
  };

  explicit LineFramer(size_t max_bytes = kMaxLineBytes) : max_(max_bytes) {}

  // Appends bytes; complete lines become available through next().
  void feed(std::string_view bytes);
  std::optional<Line> next();
  // The input ended: an unfinished line, if any, becomes the last line (the tail
  // of an over-long line is simply dropped; it was already reported).
  void finish();
  bool has_line() const noexcept { return !ready_.empty(); }
  // Bytes of an unfinished line held (never more than max_bytes).
  size_t buffered() const noexcept { return partial_.size(); }
  // True while the rest of an over-long line is being thrown away.
  bool discarding() const noexcept { return discarding_; }

 private:
  size_t max_;
  std::string partial_;
  bool discarding_ = false;
  std::deque<Line> ready_;
};

}  // namespace leasefs::protocol
