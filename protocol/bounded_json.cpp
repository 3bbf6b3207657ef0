#include "protocol/bounded_json.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "protocol/request.hpp"

namespace leasefs::protocol {

namespace {

using nlohmann::json;
using DomSax = nlohmann::detail::json_sax_dom_parser<json>;

// Checks each event, then hands it to nlohmann's own DOM builder. Returning
// false stops the parse at once; `error` says why.
class BoundedSax {
 public:
  BoundedSax(json& result, const JsonBounds& bounds) : dom_(result, false), bounds_(bounds) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string& text) {
    if (!value()) return false;
    // The lexer reads an integer that overflows 64 bits as a double: refuse it
    // rather than let an id or a count silently become an approximation.
    if (text.find_first_of(".eE") == std::string::npos) {
      return fail("integer " + shorten(text) + " is out of range (at most 64 bits)");
    }
    if (!std::isfinite(v)) return fail("number " + shorten(text) + " is out of range");
    return dom_.number_float(v, text);
  }
  bool string(std::string& s) {
    return value() && text(s, bounds_.max_string_bytes, "string") && dom_.string(s);
  }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t n) {
    if (!value() || !open()) return false;
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(std::string& k) {
    if (!text(k, bounds_.max_key_bytes, "key")) return false;
    auto& seen = keys_.back();
    for (const auto& s : seen) {
      if (s == k) return fail("key '" + shorten(k) + "' appears twice in one object");
    }
    seen.push_back(k);
    return dom_.key(k);
  }
  bool end_object() {
    keys_.pop_back();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return value() && open() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    if (error_.empty()) {
      // 406 is a number the lexer read but a double cannot hold (1e999): valid
      // JSON syntax, a value out of range.
      syntax_ = e.id != 406;
      error_ = syntax_ ? std::string(e.what())
                       : "a number out of range at byte " + std::to_string(position);
    }
    return false;
  }

  bool failed() const { return !error_.empty(); }
  bool syntax() const { return syntax_; }
  const std::string& error() const { return error_; }

 private:
  bool value() {
    if (++values_ > bounds_.max_values) {
      return fail("more than " + std::to_string(bounds_.max_values) + " values");
    }
    return true;
  }
  bool open() {
    if (++depth_ > bounds_.max_depth) {
      return fail("nested deeper than " + std::to_string(bounds_.max_depth) + " levels");
    }
    return true;
  }
  bool text(const std::string& s, size_t max, const char* what) {
    if (s.size() > max) {
      return fail(std::string("a ") + what + " longer than " + std::to_string(max) + " bytes");
    }
    if (s.find('\0') != std::string::npos) {
      return fail(std::string("a ") + what + " holds a NUL character (\\u0000)");
    }
    return true;
  }
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  static std::string shorten(const std::string& s) {
    return s.size() > 32 ? s.substr(0, 32) + "..." : s;
  }

  DomSax dom_;
  const JsonBounds& bounds_;
  size_t depth_ = 0;
  size_t values_ = 0;
  std::vector<std::vector<std::string>> keys_;  // per open object; bounded by the line
  std::string error_;
  bool syntax_ = false;
};

}  // namespace

json parse_bounded_json(std::string_view text, const JsonBounds& bounds) {
  json result;
  BoundedSax sax(result, bounds);
  bool ok = json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                            /*strict=*/true);
  if (!ok || sax.failed()) {
    // What was built so far is dropped here; nlohmann destroys values without
    // recursion, and the depth was bounded anyway.
    if (sax.syntax()) {
      throw Error(Errc::kBadJson,
                  "request is not valid JSON (expected one JSON object per line): " + sax.error());
    }
    throw Error(Errc::kBadRequest,
                "request refused: " + sax.error() + "; send a smaller, flatter request");
  }
  return result;
}

}  // namespace leasefs::protocol
