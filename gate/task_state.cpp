#include "gate/task_state.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace leasefs::gate {

using nlohmann::json;

namespace {

// Reads a required or optional field with its expected type, naming it on error.
template <class T>
T field(const json& j, const char* name, std::optional<T> fallback = std::nullopt) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    if (fallback) return *fallback;
    throw std::invalid_argument(std::string("missing field \"") + name + "\"");
  }
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(std::string("field \"") + name + "\" has the wrong type (" +
                                it->type_name() + ")");
  }
}

TaskStatus status_field(const json& j, const char* name) {
  auto text = field<std::string>(j, name);
  auto status = parse_status(text);
  if (!status)
    throw std::invalid_argument(std::string("field \"") + name + "\" is not a task status: \"" +
                                text + "\"");
  return *status;
}

}  // namespace

json to_json(const Grant& g) {
  // Member by member: an initializer list builds a two-element array per member
  // first, and every state record serializes every grant in force.
  json j = json::object();
  j["id"] = g.id;
  j["turn"] = g.turn;
  j["reason"] = g.reason;
  j["approver_uid"] = g.approver_uid;
  j["paths"] = g.paths;
  j["ops"] = op_class_names(g.ops);
  j["issued_ms"] = g.issued_ms;
  j["expires_ms"] = g.expires_ms ? json(*g.expires_ms) : json(nullptr);
  if (!g.request_id.empty()) j["request_id"] = g.request_id;
  return j;
}

namespace {

Grant grant_from_json(const json& j) {
  Grant g;
  g.id = field<std::string>(j, "id");
  g.turn = field<uint64_t>(j, "turn");
  g.reason = field<std::string>(j, "reason", "");
  g.approver_uid = field<uint32_t>(j, "approver_uid", 0u);
  g.paths = field<std::vector<std::string>>(j, "paths", std::vector<std::string>{});
  std::string unknown;
  auto ops = parse_op_classes(field<std::vector<std::string>>(j, "ops", std::vector<std::string>{}),
                              &unknown);
  if (!ops) throw std::invalid_argument("grant " + g.id + " names an unknown op class: " + unknown);
  g.ops = *ops;
  g.issued_ms = field<int64_t>(j, "issued_ms", 0);
  if (auto it = j.find("expires_ms"); it != j.end() && !it->is_null()) {
    g.expires_ms = field<int64_t>(j, "expires_ms");
  }
  g.request_id = field<std::string>(j, "request_id", "");
  return g;
}

}  // namespace

json to_json(const TaskState& s) {
  json out = to_json_except_grants(s);
  json grants = json::array();
  for (const auto& g : s.grants) grants.push_back(to_json(g));
  out["grants"] = std::move(grants);
  return out;
}

json to_json_except_grants(const TaskState& s) {
  // Member by member, as to_json(Grant): every change of state is one of these.
  json history = json::array();
  for (const auto& t : s.history) {
    json h = json::object();
    h["from"] = to_string(t.from);
    h["to"] = to_string(t.to);
    h["reason"] = t.reason;
    h["at_ms"] = t.at_ms;
    history.push_back(std::move(h));
  }
  json out = json::object();
  out["schema_version"] = kStateSchemaVersion;
  out["turn_index"] = s.turn_index;
  out["grant_seq"] = s.grant_seq;
  out["checkpoint_seq"] = s.checkpoint_seq;
  out["task_id"] = s.task_id;
  out["description"] = s.description;
  out["done_when"] = s.done_when;
  out["keywords"] = s.keywords;
  out["status"] = to_string(s.status);
  out["current_step"] = s.current_step;
  out["next_step"] = s.next_step;
  out["last_checkpoint_id"] = s.last_checkpoint_id;
  out["history"] = std::move(history);
  out["created_ms"] = s.created_ms;
  out["updated_ms"] = s.updated_ms;
  if (s.ask_ms) out["ask_ms"] = *s.ask_ms;
  return out;
}

TaskState task_state_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("the top level is not a JSON object");
  // Files from before schema versions carry no version; read them as version 0.
  const int version = field<int>(j, "schema_version", 0);
  if (version > kStateSchemaVersion) {
    throw std::invalid_argument("schema_version " + std::to_string(version) +
                                " is newer than this leasefs understands (" +
                                std::to_string(kStateSchemaVersion) + ")");
  }
  TaskState s;
  s.turn_index = field<uint64_t>(j, "turn_index", 0u);
  s.grant_seq = field<uint64_t>(j, "grant_seq", 0u);
  s.checkpoint_seq = field<uint64_t>(j, "checkpoint_seq", 0u);
  s.task_id = field<std::string>(j, "task_id", "");
  s.description = field<std::string>(j, "description", "");
  s.done_when = field<std::string>(j, "done_when", "");
  s.keywords = field<std::vector<std::string>>(j, "keywords", std::vector<std::string>{});
  s.status = j.contains("status") ? status_field(j, "status") : TaskStatus::kPending;
  s.current_step = field<std::string>(j, "current_step", "");
  s.next_step = field<std::string>(j, "next_step", "");
  s.last_checkpoint_id = field<std::string>(j, "last_checkpoint_id", "");
  s.created_ms = field<int64_t>(j, "created_ms", 0);
  s.updated_ms = field<int64_t>(j, "updated_ms", 0);
  if (auto it = j.find("ask_ms"); it != j.end() && !it->is_null()) {
    const int64_t ms = field<int64_t>(j, "ask_ms", 0);
    if (ms < 0) throw std::invalid_argument("field \"ask_ms\" is negative");
    s.ask_ms = ms;
  }
  if (auto it = j.find("history"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) throw std::invalid_argument("field \"history\" is not an array");
    for (const auto& t : *it) {
      s.history.push_back({status_field(t, "from"), status_field(t, "to"),
                           field<std::string>(t, "reason", ""), field<int64_t>(t, "at_ms", 0)});
    }
  }
  if (version >= 1) {
    if (auto it = j.find("grants"); it != j.end() && !it->is_null()) {
      if (!it->is_array()) throw std::invalid_argument("field \"grants\" is not an array");
      for (const auto& g : *it) s.grants.push_back(grant_from_json(g));
    }
  }
  // version 0 had only "access_mode": "writable"|"read_only" and no grants. It is
  // deliberately not read: a mode flag is not a lease.
  return s;
}

}  // namespace leasefs::gate
