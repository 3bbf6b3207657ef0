// The MCP server: a line loop and one table of tools. JSON-RPC errors are for
// messages the server cannot take (not JSON, unknown method, unknown tool); a tool
// that ran and failed (the daemon refused, no daemon answers, a bad argument)
// answers a result with isError, so the model reads why and what to do.
#include "leasectl/mcp_server.hpp"

#include <istream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "base/inert_text.hpp"
#include "protocol/command_options.hpp"

namespace leasefs::leasectl {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr size_t kMaxLineBytes = size_t{1} << 20;

constexpr const char* kHowToAsk =
    "Do not look for another way to write. Ask with the request_lease tool (reason: what you "
    "will change and why; paths: the files or globs), then wait for a person to approve it. "
    "An approval is good for the current turn only; ask again in the next one.";

// A bad argument: answered as a tool error, naming the argument.
struct BadArgument : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A tool is one daemon command: its arguments, their schema and checks come from
// the command's descriptor (protocol/command_options.hpp), those it offers to MCP.
struct Tool {
  const char* name;
  const char* title;
  const char* description;
  std::string_view command;
  bool read_only;
  // Turns a successful result into the text the model reads (default: the JSON).
  std::string (*explain)(const json& result);
};

std::string get_string(const json& args, const std::string& key, bool required) {
  if (!args.contains(key)) {
    if (required) throw BadArgument("missing required argument '" + key + "'");
    return {};
  }
  if (!args[key].is_string()) throw BadArgument("'" + key + "' must be a string");
  std::string v = args[key].get<std::string>();
  if (required && v.empty()) throw BadArgument("'" + key + "' must not be empty");
  return v;
}

std::vector<std::string> get_strings(const json& args, const std::string& key) {
  if (!args.contains(key)) return {};
  const json& v = args[key];
  if (!v.is_array()) throw BadArgument("'" + key + "' must be an array of strings");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) throw BadArgument("'" + key + "' must hold strings only");
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::string refusals_text(const json& status) {
  const json refusals = status.value("recent_refusals", json::array());
  std::string out;
  if (refusals.empty()) {
    out = "No recent refusals.\n";
  } else {
    out = "Recent refusals (newest last):\n";
    for (const auto& r : refusals) {
      // The host shows this text to the person too: names quoted, the rest inert.
      out += "- " + base::inert(r.value("op", std::string("?"))) + " " +
             base::quote_name(r.value("path", std::string("?"))) + " by " +
             base::inert(r.value("process", std::string("?"))) + " (pid " +
             std::to_string(r.value("pid", 0)) +
             "): " + base::inert(r.value("reason", std::string("?"))) +
             (r.contains("turn") ? " (turn " + std::to_string(r.value("turn", 0)) + ")" : "") +
             "\n";
    }
  }
  out += "Access now: " + status.value("access_mode", std::string("?")) + ", turn " +
         std::to_string(status.value("turn", 0)) + ".\n";
  if (const json ask = status.value("ask", json()); ask.is_object() && ask.value("on", false)) {
    // Ask mode: the refused operation itself waited for a person (or waits now).
    out += "Ask mode is on: a write without a lease waits up to " +
           std::to_string(ask.value("timeout_ms", int64_t{0}) / 1000) +
           " s for a person to approve it, and fails if nobody does; " +
           std::to_string(ask.value("waiting", 0)) + " waiting now.\n";
  }
  out += kHowToAsk;
  return out;
}

std::string waiting_for_a_person(const json& result) {
  return result.dump(2) +
         "\nWaiting for a person to approve or reject it. Do not write until the status tool "
         "shows a lease.";
}

const std::vector<Tool>& tools() {
  static const std::vector<Tool> table = {
      {"status", "leasefs status",
       "The task, its status and turn, the lease in force (if any), pending requests, and the "
       "last refusals.",
       "status", true, nullptr},
      {"why_refused", "Why was my write refused?",
       "The last writes leasefs refused (operation, path, process, reason) and how to ask a "
       "person for a lease instead of looking for another way to write.",
       "status", true, refusals_text},
      {"request_lease", "Ask for a write lease",
       "Asks a person for a write lease for this turn. Say what you will change and why; name "
       "the paths (globs relative to the project root). Then wait: a person approves or "
       "rejects it. The lease ends with the turn.",
       "request", false, waiting_for_a_person},
      {"checkpoint", "Save a checkpoint",
       "Saves a resume record to the project memory (before anything is printed) and pauses "
       "the task: writes close until a person grants again.",
       "checkpoint", false, nullptr},
      {"memory_search", "Search the project memory",
       "Full-text search of the project's memory: checkpoints and notes.", "memory.search", true,
       nullptr},
      {"memory_save", "Save a note to the project memory",
       "Saves a note (a title, the text, keywords) to the project memory, for this task and "
       "later ones.",
       "memory.save", false, nullptr},
  };
  return table;
}

// The options of `tool`'s command that MCP offers; required there when the
// command line requires them or excuses them only by an option MCP lacks.
std::vector<const protocol::OptionSpec*> offered(const Tool& tool) {
  std::vector<const protocol::OptionSpec*> out;
  for (const auto& spec : protocol::command_options(tool.command).options) {
    if (spec.mcp) out.push_back(&spec);
  }
  return out;
}

bool required_in_mcp(const protocol::OptionSpec& spec) {
  return spec.required || !spec.required_unless.empty();
}

int64_t mcp_max(const protocol::OptionSpec& spec) {
  return spec.mcp_max > 0 ? spec.mcp_max : spec.max;
}

ojson property_schema(const protocol::OptionSpec& spec) {
  ojson p;
  switch (spec.kind) {
    case protocol::ArgKind::kText:
      p["type"] = "string";
      if (!spec.choices.empty()) {
        p["enum"] = std::vector<std::string>(spec.choices.begin(), spec.choices.end());
      }
      break;
    case protocol::ArgKind::kTexts:
      p = {{"type", "array"}, {"items", {{"type", "string"}}}};
      break;
    case protocol::ArgKind::kFlag:
      p["type"] = "boolean";
      break;
    case protocol::ArgKind::kNumber:
      p = {{"type", "integer"}, {"minimum", spec.min}, {"maximum", mcp_max(spec)}};
      break;
  }
  if (!spec.mcp->empty()) p["description"] = *spec.mcp;
  return p;
}

ojson input_schema(const Tool& tool) {
  ojson properties = ojson::object();
  ojson required = ojson::array();
  for (const auto* spec : offered(tool)) {
    properties[std::string(spec->arg)] = property_schema(*spec);
    if (required_in_mcp(*spec)) required.push_back(std::string(spec->arg));
  }
  ojson schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = std::move(required);
  schema["additionalProperties"] = false;
  return schema;
}

// The daemon command's arguments for these tool arguments, as leasectl would send them.
json to_args(const Tool& tool, const json& a) {
  json args = json::object();
  for (const auto* spec : offered(tool)) {
    const std::string key(spec->arg);
    switch (spec->kind) {
      case protocol::ArgKind::kText:
        if (std::string v = get_string(a, key, required_in_mcp(*spec));
            required_in_mcp(*spec) || !v.empty()) {
          args[key] = v;
        }
        break;
      case protocol::ArgKind::kTexts:
        if (auto v = get_strings(a, key); !v.empty()) args[key] = v;
        break;
      case protocol::ArgKind::kFlag:
        if (a.contains(key) && !a[key].is_boolean())
          throw BadArgument("'" + key + "' must be true or false");
        if (a.value(key, false)) args[key] = true;
        break;
      case protocol::ArgKind::kNumber:
        if (spec->fallback) args[key] = *spec->fallback;
        if (!a.contains(key)) break;
        if (!a[key].is_number_integer() || a[key].get<int64_t>() < spec->min ||
            a[key].get<int64_t>() > mcp_max(*spec)) {
          throw BadArgument("'" + key + "' must be an integer from " + std::to_string(spec->min) +
                            " to " + std::to_string(mcp_max(*spec)));
        }
        args[key] = a[key];
        break;
    }
  }
  return args;
}

json rpc_error(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json rpc_result(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json tool_result(const std::string& text, bool is_error, const json* structured = nullptr) {
  json r = {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", is_error}};
  if (structured && structured->is_object()) r["structuredContent"] = *structured;
  return r;
}

json list_tools() {
  json list = json::array();
  for (const auto& t : tools()) {
    list.push_back(
        {{"name", t.name},
         {"title", t.title},
         {"description", t.description},
         {"inputSchema", json::parse(input_schema(t).dump())},
         {"annotations",
          {{"readOnlyHint", t.read_only}, {"destructiveHint", false}, {"openWorldHint", false}}}});
  }
  return {{"tools", list}};
}

json call_tool(const json& id, const json& params, const DaemonCall& call) {
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return rpc_error(id, -32602, "tools/call needs params.name (a string)");
  }
  const std::string name = params["name"].get<std::string>();
  const Tool* tool = nullptr;
  for (const auto& t : tools()) {
    if (name == t.name) tool = &t;
  }
  if (!tool) {
    std::string names;
    for (const auto& t : tools()) names += (names.empty() ? "" : ", ") + std::string(t.name);
    return rpc_error(
        id, -32602,
        "Unknown tool: " + name + " (this server offers the agent's side only: " + names + ")");
  }
  json args = params.value("arguments", json::object());
  if (!args.is_object()) return rpc_result(id, tool_result("arguments must be an object", true));
  json command_args;
  try {
    command_args = to_args(*tool, args);
  } catch (const BadArgument& e) {
    return rpc_result(id, tool_result(std::string(name) + ": " + e.what(), true));
  }
  json reply;
  try {
    reply = call(std::string(tool->command), command_args);
  } catch (const std::exception& e) {
    return rpc_result(id, tool_result(std::string("no leasefs daemon answers: ") + e.what() +
                                          ". Writes stay refused; tell the person.",
                                      true));
  }
  if (!reply.value("ok", false)) {
    json error = reply.value("error", json::object());
    return rpc_result(id, tool_result("error[" + error.value("code", std::string("unknown")) +
                                          "]: " + error.value("message", std::string()),
                                      true, &error));
  }
  json result = reply.value("result", json::object());
  const std::string text = tool->explain ? tool->explain(result) : result.dump(2);
  return rpc_result(id, tool_result(text, false, &result));
}

}  // namespace

std::optional<json> handle_mcp_message(const std::string& line, const DaemonCall& call) {
  json msg = json::parse(line, nullptr, false);
  if (msg.is_discarded()) return rpc_error(nullptr, -32700, "Parse error: not JSON");
  if (!msg.is_object()) {
    return rpc_error(nullptr, -32600, "Invalid Request: one JSON object per line (no batches)");
  }
  const bool has_id = msg.contains("id");
  const json id = has_id ? msg["id"] : json();
  if (has_id && !id.is_string() && !id.is_number_integer()) {
    return rpc_error(nullptr, -32600, "Invalid Request: id must be a string or an integer");
  }
  if (!msg.contains("method")) {
    // A response to a request of ours; this server sends none, so ignore it.
    return std::nullopt;
  }
  if (msg.value("jsonrpc", json()) != "2.0" || !msg["method"].is_string()) {
    return has_id ? std::optional<json>(rpc_error(id, -32600, "Invalid Request: not JSON-RPC 2.0"))
                  : std::nullopt;
  }
  const std::string method = msg["method"].get<std::string>();
  const json params = msg.value("params", json::object());
  if (!has_id) return std::nullopt;  // notifications (initialized, cancelled): nothing to say

  if (method == "initialize") {
    return rpc_result(
        id,
        {{"protocolVersion", kMcpProtocolVersion},
         {"capabilities", {{"tools", {{"listChanged", false}}}}},
         {"serverInfo",
          {{"name", "leasectl"}, {"title", "leasefs (agent side)"}, {"version", LEASEFS_VERSION}}},
         {"instructions",
          "This project is mounted through leasefs: every change to the tree is refused "
          "(EACCES) unless a person granted a lease for this turn. When a write is refused, "
          "call why_refused, then request_lease, and wait. Save progress with checkpoint."}});
  }
  if (method == "ping") return rpc_result(id, json::object());
  if (method == "tools/list") return rpc_result(id, list_tools());
  if (method == "tools/call") return call_tool(id, params, call);
  return rpc_error(id, -32601, "Method not found: " + method);
}

int run_mcp_server(std::istream& in, std::ostream& out, const DaemonCall& call) {
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::optional<json> reply;
    if (line.size() > kMaxLineBytes) {
      reply = rpc_error(nullptr, -32600, "Invalid Request: line longer than 1 MiB");
    } else {
      reply = handle_mcp_message(line, call);
    }
    if (reply) {
      out << reply->dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
      out.flush();
    }
  }
  return 0;
}

}  // namespace leasefs::leasectl
