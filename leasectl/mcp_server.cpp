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

struct Tool {
  const char* name;
  const char* title;
  const char* description;
  ojson input_schema;
  bool read_only;
  // Returns the daemon command and its arguments for these tool arguments.
  std::function<std::pair<std::string, json>(const json& args)> to_command;
  // Turns a successful result into the text the model reads (default: the JSON).
  std::function<std::string(const json& result)> explain;
};

ojson string_prop(const char* description) {
  return {{"type", "string"}, {"description", description}};
}

std::string get_string(const json& args, const char* key, bool required) {
  if (!args.contains(key)) {
    if (required) throw BadArgument(std::string("missing required argument '") + key + "'");
    return {};
  }
  if (!args[key].is_string()) throw BadArgument(std::string("'") + key + "' must be a string");
  std::string v = args[key].get<std::string>();
  if (required && v.empty()) throw BadArgument(std::string("'") + key + "' must not be empty");
  return v;
}

std::vector<std::string> get_strings(const json& args, const char* key) {
  if (!args.contains(key)) return {};
  const json& v = args[key];
  if (!v.is_array()) throw BadArgument(std::string("'") + key + "' must be an array of strings");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) throw BadArgument(std::string("'") + key + "' must hold strings only");
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

const std::vector<Tool>& tools() {
  static const std::vector<Tool> table = {
      {"status",
       "leasefs status",
       "The task, its status and turn, the lease in force (if any), pending requests, and the "
       "last refusals.",
       {{"type", "object"}, {"properties", ojson::object()}, {"additionalProperties", false}},
       true,
       [](const json&) {
         return std::pair<std::string, json>{"status", json::object()};
       },
       nullptr},
      {"why_refused",
       "Why was my write refused?",
       "The last writes leasefs refused (operation, path, process, reason) and how to ask a "
       "person for a lease instead of looking for another way to write.",
       {{"type", "object"}, {"properties", ojson::object()}, {"additionalProperties", false}},
       true,
       [](const json&) {
         return std::pair<std::string, json>{"status", json::object()};
       },
       refusals_text},
      {"request_lease",
       "Ask for a write lease",
       "Asks a person for a write lease for this turn. Say what you will change and why; name "
       "the paths (globs relative to the project root). Then wait: a person approves or "
       "rejects it. The lease ends with the turn.",
       {{"type", "object"},
        {"properties",
         {{"reason", string_prop("what you will change and why, in plain words")},
          {"paths",
           {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"description", "files or globs relative to the root, e.g. src/pay.c or src/**"}}}}},
        {"required", {"reason"}},
        {"additionalProperties", false}},
       false,
       [](const json& a) {
         json args = {{"reason", get_string(a, "reason", true)}};
         auto paths = get_strings(a, "paths");
         if (!paths.empty()) args["paths"] = paths;
         return std::pair<std::string, json>{"request", args};
       },
       [](const json& r) {
         return r.dump(2) +
                "\nWaiting for a person to approve or reject it. Do not write until the "
                "status tool shows a lease.";
       }},
      {"checkpoint",
       "Save a checkpoint",
       "Saves a resume record to the project memory (before anything is printed) and pauses "
       "the task: writes close until a person grants again.",
       {{"type", "object"},
        {"properties",
         {{"summary", string_prop("what was done")},
          {"next", string_prop("what comes next")},
          {"status",
           {{"type", "string"},
            {"enum", {"paused", "blocked", "waiting_verification"}},
            {"description", "how the task stops (default paused)"}}},
          {"current_step", string_prop("the step in progress")},
          {"verified", string_prop("what was checked and how")},
          {"discarded", string_prop("approaches tried and dropped")},
          {"needs_approval", string_prop("what must be approved next")}}},
        {"required", {"summary", "next"}},
        {"additionalProperties", false}},
       false,
       [](const json& a) {
         json args = {{"summary", get_string(a, "summary", true)},
                      {"next", get_string(a, "next", true)}};
         for (const char* k :
              {"status", "current_step", "verified", "discarded", "needs_approval"}) {
           std::string v = get_string(a, k, false);
           if (!v.empty()) args[k] = v;
         }
         return std::pair<std::string, json>{"checkpoint", args};
       },
       nullptr},
      {"memory_search",
       "Search the project memory",
       "Full-text search of the project's memory: checkpoints and notes.",
       {{"type", "object"},
        {"properties",
         {{"query", string_prop("words to look for")},
          {"limit",
           {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}, {"description", "at most"}}}}},
        {"required", {"query"}},
        {"additionalProperties", false}},
       true,
       [](const json& a) {
         json args = {{"query", get_string(a, "query", true)}, {"limit", 10}};
         if (a.contains("limit")) {
           if (!a["limit"].is_number_integer() || a["limit"].get<int64_t>() < 1 ||
               a["limit"].get<int64_t>() > 100) {
             throw BadArgument("'limit' must be an integer from 1 to 100");
           }
           args["limit"] = a["limit"];
         }
         return std::pair<std::string, json>{"memory.search", args};
       },
       nullptr},
      {"memory_save",
       "Save a note to the project memory",
       "Saves a note (a title, the text, keywords) to the project memory, for this task and "
       "later ones.",
       {{"type", "object"},
        {"properties",
         {{"title", string_prop("a short title")},
          {"content", string_prop("the note")},
          {"keywords", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
        {"required", {"title", "content"}},
        {"additionalProperties", false}},
       false,
       [](const json& a) {
         json args = {{"title", get_string(a, "title", true)},
                      {"content", get_string(a, "content", true)}};
         auto keywords = get_strings(a, "keywords");
         if (!keywords.empty()) args["keywords"] = keywords;
         return std::pair<std::string, json>{"memory.save", args};
       },
       nullptr},
  };
  return table;
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
         {"inputSchema", json::parse(t.input_schema.dump())},
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
    return rpc_error(id, -32602,
                     "Unknown tool: " + name +
                         " (this server offers the agent's side only: status, why_refused, "
                         "request_lease, checkpoint, memory_search, memory_save)");
  }
  json args = params.value("arguments", json::object());
  if (!args.is_object()) return rpc_result(id, tool_result("arguments must be an object", true));
  std::pair<std::string, json> command;
  try {
    command = tool->to_command(args);
  } catch (const BadArgument& e) {
    return rpc_result(id, tool_result(std::string(name) + ": " + e.what(), true));
  }
  json reply;
  try {
    reply = call(command.first, command.second);
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
