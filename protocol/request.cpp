#include "protocol/request.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "protocol/bounded_json.hpp"
#include "protocol/command_registry.hpp"

namespace leasefs::protocol {

namespace {

std::string joined_commands() {
  std::string out;
  for (const auto& spec : command_registry()) {
    if (!out.empty()) out += ", ";
    out += spec.name;
  }
  return out;
}

}  // namespace

Request parse_request(std::string_view line, nlohmann::json* id_out) {
  // Every bound is checked while the line is read, before anything walks it.
  nlohmann::json doc = parse_bounded_json(line);
  if (!doc.is_object()) {
    throw Error(Errc::kBadRequest,
                "request must be a JSON object like {\"id\":1,\"cmd\":\"status\"}, got " +
                    json_type_name(doc));
  }

  Request req;
  if (auto it = doc.find("id"); it != doc.end()) {
    if (!(it->is_null() || it->is_string() || it->is_number())) {
      throw Error(Errc::kBadRequest,
                  "field 'id' must be a string or a number, got " + json_type_name(*it));
    }
    if (it->is_string() && it->get_ref<const std::string&>().size() > kMaxIdBytes) {
      throw Error(Errc::kBadRequest,
                  "field 'id' is longer than " + std::to_string(kMaxIdBytes) + " bytes");
    }
    req.id = *it;
    if (id_out) *id_out = req.id;
  }

  auto cmd = doc.find("cmd");
  if (cmd == doc.end()) {
    throw Error(Errc::kBadRequest,
                "field 'cmd' is missing (expected a string, one of: " + joined_commands() + ")");
  }
  if (!cmd->is_string()) {
    throw Error(Errc::kBadRequest, "field 'cmd' must be a string, got " + json_type_name(*cmd));
  }
  req.cmd = cmd->get<std::string>();
  if (!find_command_spec(req.cmd)) {
    std::string shown = req.cmd.size() > 64 ? req.cmd.substr(0, 64) + "..." : req.cmd;
    throw Error(Errc::kUnknownCommand,
                "unknown command '" + shown + "'; valid commands: " + joined_commands());
  }

  if (auto args = doc.find("args"); args != doc.end() && !args->is_null()) {
    if (!args->is_object()) {
      throw Error(Errc::kBadRequest,
                  "field 'args' must be an object, got " + json_type_name(*args));
    }
    req.args = std::move(*args);
  }

  if (auto key = doc.find("idempotency_key"); key != doc.end() && !key->is_null()) {
    if (!key->is_string()) {
      throw Error(Errc::kBadRequest,
                  "field 'idempotency_key' must be a string, got " + json_type_name(*key));
    }
    std::string k = key->get<std::string>();
    if (k.empty() || k.size() > 256) {
      throw Error(Errc::kBadRequest, "field 'idempotency_key' must be 1 to 256 bytes long");
    }
    req.idempotency_key = std::move(k);
  }

  for (const auto& [name, value] : doc.items()) {
    (void)value;
    if (name != "id" && name != "cmd" && name != "args" && name != "idempotency_key") {
      std::string shown = name.size() > 64 ? name.substr(0, 64) + "..." : name;
      throw Error(Errc::kBadRequest,
                  "unknown field '" + shown + "' (a request has id, cmd, args, idempotency_key)");
    }
  }
  return req;
}

nlohmann::json ok_reply(const nlohmann::json& id, nlohmann::json result) {
  return nlohmann::json{{"id", id}, {"ok", true}, {"result", std::move(result)}};
}

nlohmann::json error_reply(const nlohmann::json& id, Errc code, std::string_view message) {
  return nlohmann::json{
      {"id", id},
      {"ok", false},
      {"error", {{"code", std::string(wire_name(code))}, {"message", std::string(message)}}}};
}

std::string json_type_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  return value.type_name();
}

std::string to_line(const nlohmann::json& value) {
  // The same bytes as the audit log's and the event bus's (base::JsonText), so a
  // watch stream can send an event's text as its line.
  std::string out = base::json_text(value);
  out.push_back('\n');
  return out;
}

std::string ok_reply_line(const nlohmann::json& id, std::string_view result_text) {
  // ok_reply's object as json_text writes it: compact, its keys in order.
  std::string out = "{\"id\":";
  out += base::json_text(id);
  out += ",\"ok\":true,\"result\":";
  out += result_text;
  out += "}\n";
  return out;
}

void LineFramer::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    auto nl = std::find(bytes.begin(), bytes.end(), '\n');
    size_t chunk = static_cast<size_t>(nl - bytes.begin());
    bool complete = nl != bytes.end();

    if (discarding_) {
      // Throwing away the tail of an over-long line.
      if (complete) discarding_ = false;
    } else if (partial_.size() + chunk > max_) {
      partial_.clear();
      partial_.shrink_to_fit();
      ready_.push_back(Line{{}, true});
      discarding_ = !complete;
    } else {
      partial_.append(bytes.data(), chunk);
      if (complete) {
        if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
        ready_.push_back(Line{std::move(partial_), false});
        partial_ = std::string();
      }
    }
    bytes.remove_prefix(complete ? chunk + 1 : chunk);
  }
}

void LineFramer::finish() {
  if (discarding_) {
    discarding_ = false;
    return;
  }
  if (partial_.empty()) return;
  if (partial_.back() == '\r') partial_.pop_back();
  ready_.push_back(Line{std::move(partial_), false});
  partial_ = std::string();
}

std::optional<LineFramer::Line> LineFramer::next() {
  if (ready_.empty()) return std::nullopt;
  Line line = std::move(ready_.front());
  ready_.pop_front();
  return line;
}

}  // namespace leasefs::protocol
