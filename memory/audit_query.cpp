#include "memory/audit_query.hpp"

#include <string_view>

namespace leasefs::memory {

namespace {

// `name` is `path` or beneath it ("src" holds "src/a.c", not "srcs/a.c").
bool at_or_beneath(std::string_view name, std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path.empty() || path == "." || path == "/") return true;
  if (name.substr(0, path.size()) != path) return false;
  return name.size() == path.size() || name[path.size()] == '/';
}

}  // namespace

bool AuditMatcher::matches(const nlohmann::json& event, std::int64_t ts_ms) {
  if (!event.is_object()) return false;
  if (auto t = event.find("turn"); t != event.end() && t->is_number_unsigned()) {
    turn_ = t->get<std::uint64_t>();
  }
  if (ts_ms < q_.since_ms) return false;
  if (q_.turn && turn_ != *q_.turn) return false;
  if (!q_.op.empty() && event.value("op", std::string()) != q_.op) return false;
  return q_.paths.empty() || names_a_path(event);
}

bool AuditMatcher::names_a_path(const nlohmann::json& event) const {
  auto any = [&](const nlohmann::json& v) {
    if (!v.is_string()) return false;
    for (const std::string& p : q_.paths) {
      if (at_or_beneath(v.get_ref<const std::string&>(), p)) return true;
    }
    return false;
  };
  if (auto v = event.find("path"); v != event.end() && any(*v)) return true;
  if (auto v = event.find("paths"); v != event.end() && v->is_array()) {
    for (const auto& item : *v) {
      if (any(item)) return true;
    }
  }
  return false;
}

}  // namespace leasefs::memory
