// JSON as stored in memory.db and audit.jsonl: compact, and never throwing on
// invalid UTF-8 from a caller (it is replaced, not rejected).
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace leasefs::base {

class JsonText;

inline std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Whether JSON text holds `text` exactly: whether it is UTF-8, by the JSON
// library's own check (its strict dump throws on a byte that is not). A name is
// bytes, and an agent may pick any.
inline bool is_utf8(std::string_view text) noexcept {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (...) {
    return false;
  }
}

// A JSON object written member by member, for a text made on every mutation (a
// journal entry's event), where building the object first costs more than the
// rest: each value's text comes from json_text(), and the members are kept in
// key order, as nlohmann keeps an object's, so that str() is exactly what
// json_text() gives for the same object (tests/base has the equality).
class ObjectText {
 public:
  // Adds the member, or replaces the one with this key. Numbers and booleans
  // are written as the JSON library writes them; strings (and anything else)
  // by the library itself.
  ObjectText& set(std::string_view key, const nlohmann::json& value) {
    return put(key, json_text(value));
  }
  ObjectText& set(std::string_view key, std::string_view value) {
    return put(key, json_text(nlohmann::json(value)));
  }
  ObjectText& set(std::string_view key, const char* value) {
    return set(key, std::string_view(value));
  }
  ObjectText& set(std::string_view key, const std::string& value) {
    return set(key, std::string_view(value));
  }
  // A value whose text is made already (one made once and written many times).
  ObjectText& set_text(std::string_view key, const JsonText& value);
  template <typename T>
  requires std::is_integral_v<T> ObjectText& set(std::string_view key, T value) {
    if constexpr (std::is_same_v<T, bool>) {
      return put(key, value ? "true" : "false");
    } else {
      return put(key, std::to_string(value));
    }
  }
  bool contains(std::string_view key) const noexcept {
    return std::binary_search(members_.begin(), members_.end(), key,
                              [](const auto& a, const auto& b) { return key_of(a) < key_of(b); });
  }
  std::string str() const {
    size_t size = 2;
    for (const Member& m : members_) size += m.key_text.size() + m.value.size() + 2;
    std::string out;
    out.reserve(size);
    out += '{';
    for (const Member& m : members_) {
      if (out.size() > 1) out += ',';
      out += m.key_text;
      out += ':';
      out += m.value;
    }
    out += '}';
    return out;
  }

 private:
  struct Member {
    std::string key;
    std::string key_text;  // the key as JSON text
    std::string value;     // the value as JSON text
  };
  static std::string_view key_of(const Member& m) noexcept { return m.key; }
  static std::string_view key_of(std::string_view k) noexcept { return k; }
  ObjectText& put(std::string_view key, std::string value_text) {
    auto at = std::lower_bound(members_.begin(), members_.end(), key,
                               [](const Member& m, std::string_view k) { return m.key < k; });
    if (at == members_.end() || at->key != key) {
      at = members_.insert(at, Member{std::string(key), key_text(key), {}});
    }
    at->value = std::move(value_text);
    return *this;
  }
  // A key of letters, digits and underscores (every key the daemon writes)
  // needs no escape; any other is written by the library.
  static std::string key_text(std::string_view key) {
    const bool plain = std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!plain) return json_text(nlohmann::json(key));
    std::string out;
    out.reserve(key.size() + 2);
    out += '"';
    out += key;
    out += '"';
    return out;
  }
  std::vector<Member> members_;  // sorted by key
};

// A JSON array written item by item from texts made already.
class ArrayText {
 public:
  ArrayText& push(const JsonText& item);
  std::string str() const { return text_ + ']'; }

 private:
  std::string text_ = "[";
};

// A JSON value serialized once by json_text(), for readers that all want the same
// bytes (the event bus's subscribers: the audit log, watch streams). Made only
// from a value, an ObjectText or an ArrayText, so its text is always one
// complete JSON document.
class JsonText {
 public:
  explicit JsonText(const nlohmann::json& value) : text_(json_text(value)) {}
  explicit JsonText(const ObjectText& object) : text_(object.str()) {}
  explicit JsonText(const ArrayText& array) : text_(array.str()) {}
  // `object` (a JSON object without `key`) with the member `key` added last,
  // its value a text made already: the object is serialized once, as one text.
  // Its members are then out of key order, which no reader minds.
  static JsonText with_member(const nlohmann::json& object, std::string_view key,
                              const JsonText& value) {
    if (!object.is_object() || object.contains(key)) {
      throw std::invalid_argument("with_member: not an object, or one that has the key");
    }
    JsonText out(object);
    out.text_.pop_back();  // the closing brace
    if (out.text_.size() > 1) out.text_ += ',';
    out.text_ += json_text(nlohmann::json(key));
    out.text_ += ':';
    out.text_ += value.text_;
    out.text_ += '}';
    return out;
  }
  const std::string& str() const noexcept { return text_; }
  // The value back, for the rare reader that needs a field.
  nlohmann::json value() const { return nlohmann::json::parse(text_); }

 private:
  std::string text_;
};

inline ObjectText& ObjectText::set_text(std::string_view key, const JsonText& value) {
  return put(key, value.str());
}

inline ArrayText& ArrayText::push(const JsonText& item) {
  if (text_.size() > 1) text_ += ',';
  text_ += item.str();
  return *this;
}

}  // namespace leasefs::base
