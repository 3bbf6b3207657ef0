// Typed, bounded access to a command's JSON arguments, shared by every
// control/commands_<group>.cpp: each getter names the command and the argument
// in its error, and finish() refuses arguments nobody asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "control/commands.hpp"
#include "protocol/arg_text.hpp"

namespace leasefs::service {
class Service;
}  // namespace leasefs::service

namespace leasefs::control {

using nlohmann::json;

// Bounds on every argument: free text a person writes, names (paths, keywords,
// ids), lists. Past one, the request is refused (bad_request), never cut short.
constexpr size_t kMaxTextBytes = 16 * 1024;
constexpr size_t kMaxNoteBytes = 64 * 1024;  // memory.save content
constexpr size_t kMaxNameBytes = 1024;
constexpr size_t kMaxIdArgBytes = 64;
constexpr size_t kMaxListItems = 64;

// Typed access to a command's arguments. Every getter names the command and the
// argument in its error; finish() refuses arguments nobody asked for, so a typo
// ("path" for "paths") is an error instead of a silently wider grant.
class Args {
 public:
  Args(std::string_view cmd, const json& args) : cmd_(cmd), args_(args) {}

  std::string str(const char* name, size_t max = kMaxTextBytes) {
    auto v = opt_str(name, max);
    if (!v) missing(name, "string");
    return *v;
  }

  std::optional<std::string> opt_str(const char* name, size_t max = kMaxTextBytes) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) wrong(name, "string", *v);
    const auto& text = v->get_ref<const std::string&>();
    if (text.size() > max) too_long(name, max);
    return text;
  }

  std::string str_or(const char* name, std::string fallback, size_t max = kMaxTextBytes) {
    auto v = opt_str(name, max);
    return v ? *v : std::move(fallback);
  }

  bool flag(const char* name) {
    const json* v = find(name);
    if (!v) return false;
    if (!v->is_boolean()) wrong(name, "boolean", *v);
    return v->get<bool>();
  }

  std::vector<std::string> str_list(const char* name, size_t max_items = kMaxListItems,
                                    size_t max_item = kMaxNameBytes) {
    const json* v = find(name);
    if (!v) return {};
    if (!v->is_array()) wrong(name, "array of strings", *v);
    if (v->size() > max_items) {
      throw Error(Errc::kBadRequest, "command '" + std::string(cmd_) + "': argument '" + name +
                                         "' has more than " + std::to_string(max_items) +
                                         " elements");
    }
    std::vector<std::string> out;
    for (const auto& item : *v) {
      if (!item.is_string()) wrong(name, "array of strings", item, "an element");
      if (item.get_ref<const std::string&>().size() > max_item) too_long(name, max_item);
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  // An array of strings, or one string of comma-separated items.
  std::vector<std::string> csv_list(const char* name) {
    const json* v = find(name);
    if (!v) return {};
    if (v->is_string()) {
      if (v->get_ref<const std::string&>().size() > kMaxNameBytes) too_long(name, kMaxNameBytes);
      return protocol::split_csv(v->get_ref<const std::string&>());
    }
    return str_list(name);
  }

  std::optional<uint64_t> opt_count(const char* name) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      wrong(name, "non-negative integer", *v);
    }
    return v->get<uint64_t>();
  }

  const json* raw(const char* name) { return find(name); }

  // Call last: refuses arguments the command does not take.
  void finish() {
    for (const auto& [key, value] : args_.items()) {
      (void)value;
      if (!seen_.contains(key)) {
        std::string known;
        for (const auto& k : seen_) known += (known.empty() ? "" : ", ") + k;
        std::string shown = key.size() > 64 ? key.substr(0, 64) + "..." : key;
        throw Error(Errc::kBadRequest,
                    "command '" + std::string(cmd_) + "' takes no argument '" + shown + "'" +
                        (known.empty() ? " (it takes none)" : " (it takes: " + known + ")"));
      }
    }
  }

  [[noreturn]] void missing(const char* name, const char* expected) {
    throw Error(Errc::kBadRequest, "command '" + std::string(cmd_) + "' needs argument '" + name +
                                       "' (" + expected + ")");
  }

  [[noreturn]] void too_long(const char* name, size_t max) {
    throw Error(Errc::kBadRequest, "command '" + std::string(cmd_) + "': argument '" + name +
                                       "' is longer than " + std::to_string(max) +
                                       " bytes; shorten it");
  }

  [[noreturn]] void invalid(const char* name, const std::string& why) {
    throw Error(Errc::kInvalidArgument,
                "command '" + std::string(cmd_) + "': argument '" + name + "' " + why);
  }

 private:
  const json* find(const char* name) {
    seen_.insert(name);
    auto it = args_.find(name);
    if (it == args_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  [[noreturn]] void wrong(const char* name, const char* expected, const json& got,
                          const char* what = nullptr) {
    throw Error(Errc::kBadRequest,
                "command '" + std::string(cmd_) + "': argument '" + name + "' must be a " +
                    expected +
                    (what ? std::string(", got ") + what + " of type " : std::string(", got ")) +
                    protocol::json_type_name(got));
  }

  std::string_view cmd_;
  const json& args_;
  std::set<std::string> seen_;
};

// The service the handlers call; an internal error when none is attached.
service::Service& service(CommandContext& ctx);

}  // namespace leasefs::control
