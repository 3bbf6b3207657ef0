#include "leasectl/tool_hook.hpp"

#include <cstdio>

#include "base/inert_text.hpp"
#include "protocol/client.hpp"

namespace leasefs::leasectl {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string text_of(const json& j, const char* key) {
  const json v = j.is_object() ? j.value(key, json()) : json();
  if (v.is_string()) return base::inert(v.get<std::string>());
  return v.is_null() ? std::string("?") : base::inert(v.dump());
}

// The event this output answers: the host checks it against the one it ran.
std::string event_of(const json& input) {
  const json e = input.value("hook_event_name", json());
  if (e.is_string() && (e == "PostToolUse" || e == "PostToolUseFailure")) return e;
  return "PostToolUse";
}

void print_for_host(const std::string& event, const std::string& context,
                    const std::string& system_message) {
  ojson out = ojson::object();
  if (!system_message.empty()) out["systemMessage"] = system_message;
  out["hookSpecificOutput"] = {{"hookEventName", event}, {"additionalContext", context}};
  std::printf("%s\n", out.dump(-1, ' ', true).c_str());
}

}  // namespace

std::string refusals_for_model(const json& since) {
  const json refusals = since.value("refusals", json::array());
  const uint64_t left_out = since.value("left_out", uint64_t{0});
  if (!refusals.is_array() || (refusals.empty() && left_out == 0)) return {};
  const bool whole_turn = since.value("window", std::string()) == "turn";
  std::string out = "leasefs refused these operations ";
  out += whole_turn ? "in this turn (turn " : "during that tool call (turn ";
  out += std::to_string(since.value("turn", uint64_t{0})) + "), each with why:\n";
  for (const json& r : refusals) {
    // Every name and word here may be the agent's: one inert line each.
    out += "- " + text_of(r, "op") + " " + base::quote_name(r.value("path", std::string("?"))) +
           " by " + text_of(r, "process") + " (pid " + text_of(r, "pid") +
           "): " + text_of(r, "reason");
    if (const uint64_t n = r.value("count", uint64_t{1}); n > 1) out += " x" + std::to_string(n);
    out += "\n";
  }
  if (left_out > 0) {
    out += "- and " + std::to_string(left_out) + " more (`leasectl status` lists the last ones)\n";
  }
  if (!since.value("in_progress", true)) {
    out += "The task is not in progress: no lease is granted until a person resumes it.\n";
  }
  out +=
      "Do not look for another way to write (another tool, a copy, a rename, a new file). Ask a "
      "person for a lease, naming the paths, and wait for the answer:\n"
      "    leasectl request --reason \"what you will change and why\" --path 'src/**'\n"
      "or the request_lease tool of the leasefs MCP server. A lease lasts for the current turn "
      "only.";
  return out;
}

int run_tool_hook(const std::string& cmd, const json& input, const CallDaemon& call) {
  const json id = input.value("tool_use_id", json());
  const std::string call_id = id.is_string() ? id.get<std::string>() : std::string();
  if (cmd == "refusals.mark") {
    // Quiet whatever happens: the post-tool step says what went wrong.
    if (call_id.empty()) return 0;
    try {
      call(cmd, json{{"call", call_id}});
    } catch (const std::exception&) {
    }
    return 0;
  }
  const std::string event = event_of(input);
  json args = json::object();
  if (!call_id.empty()) args["call"] = call_id;
  std::string problem;
  try {
    const json reply = call(cmd, args);
    if (reply.value("ok", false)) {
      const std::string text = refusals_for_model(reply.value("result", json::object()));
      if (!text.empty()) print_for_host(event, text, "");
      return 0;
    }
    const json error = reply.value("error", json::object());
    problem = "the daemon answered " + text_of(error, "code") + ": " + text_of(error, "message");
  } catch (const protocol::NoDaemon& e) {
    problem = "no leasefs daemon answers (" + base::inert(e.what()) + ")";
  } catch (const std::exception& e) {
    problem = base::inert(e.what());
  }
  print_for_host(event,
                 "leasefs could not say whether that tool call was refused anything: " + problem +
                     ". Writes in this tree may fail with Permission denied; tell the person, "
                     "and do not look for another way to write.",
                 "leasefs: the post-tool hook could not reach the daemon: " + problem);
  return 0;
}

}  // namespace leasefs::leasectl
