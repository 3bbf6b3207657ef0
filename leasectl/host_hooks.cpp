#include "leasectl/host_hooks.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

namespace leasefs::leasectl {

namespace {

using ojson = nlohmann::ordered_json;

// The path of this leasectl, shell-quoted, so a host hook runs this very binary
// (the installed one when it is run installed) whatever the host's PATH is.
std::string self_command() {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) self = "leasectl";
  std::string out = "'";
  for (char c : self) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What ends each leasefs hook command: how an earlier install is recognized.
constexpr std::string_view kPromptTail = " --hook turn || exit 2";
constexpr std::string_view kStopTail = " --hook end-turn";
constexpr std::string_view kToolStartTail = " --hook refusals mark";
constexpr std::string_view kToolEndTail = " --hook refusals since";

struct HookEvent {
  const char* event;
  std::string_view tail;
  int timeout_s;
};

// The events each host gets. A tool hook never blocks the tool (it exits 0,
// within leasectl's own 5 s bound; the host's timeout is the backstop). Claude
// Code runs PostToolUse only after a tool that succeeded and PostToolUseFailure
// after one that failed (a refused write usually fails the command); Codex runs
// PostToolUse after both.
std::vector<HookEvent> host_events(const std::string& host) {
  std::vector<HookEvent> events = {{"UserPromptSubmit", kPromptTail, 30},
                                   {"Stop", kStopTail, 30},
                                   {"PreToolUse", kToolStartTail, 10},
                                   {"PostToolUse", kToolEndTail, 10}};
  if (host != "codex") events.push_back({"PostToolUseFailure", kToolEndTail, 10});
  return events;
}

// Claude Code (.claude/settings.json) and Codex CLI (.codex/hooks.json) read the
// same shape: event -> matcher groups -> command handlers; a group without a
// matcher runs for every tool. Only exit code 2 blocks (with stderr as the
// reason); any other failure lets the prompt through, so the prompt hook turns
// every failure into 2, even a leasectl that cannot be run.
ojson hook_settings(const std::string& host) {
  const std::string self = self_command();
  ojson hooks = ojson::object();
  for (const HookEvent& e : host_events(host)) {
    hooks[e.event] =
        ojson::array({ojson{{"hooks", ojson::array({ojson{{"type", "command"},
                                                          {"command", self + std::string(e.tail)},
                                                          {"timeout", e.timeout_s}}})}}});
  }
  return {{"hooks", hooks}};
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Puts `ours` (one matcher group) into `groups`: an existing leasefs handler
// takes its command; otherwise the group is appended. Returns whether anything
// changed. Throws on a shape the hosts would not read either.
bool merge_event(ojson& groups, const ojson& ours, std::string_view tail) {
  if (!groups.is_array()) throw std::runtime_error("is not a list of matcher groups");
  const ojson& our_handler = ours["hooks"][0];
  for (ojson& group : groups) {
    if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) continue;
    for (ojson& handler : group["hooks"]) {
      if (!handler.is_object() || !handler.contains("command") || !handler["command"].is_string() ||
          !ends_with(handler["command"], tail)) {
        continue;
      }
      if (handler == our_handler) return false;
      handler = our_handler;
      return true;
    }
  }
  groups.push_back(ours);
  return true;
}

}  // namespace

int print_hooks(const std::string& host) {
  std::printf("%s\n", hook_settings(host).dump(2).c_str());
  if (::isatty(STDOUT_FILENO) == 1) {
    std::fprintf(stderr, "%s\n",
                 host == "codex"
                     ? "# or `leasectl hooks codex --install` writes it to .codex/hooks.json "
                       "in the project; Codex asks you to trust new hooks once"
                     : "# or `leasectl hooks claude-code --install` merges it into "
                       ".claude/settings.json in the project");
  }
  return 0;
}

int install_hooks(const std::string& host, const std::string& project_dir) {
  namespace fs = std::filesystem;
  const fs::path file =
      fs::path(project_dir) / (host == "codex" ? ".codex/hooks.json" : ".claude/settings.json");
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "error: %s: %s; left as it was\n", file.c_str(), why.c_str());
    return 1;
  };
  ojson settings = ojson::object();
  std::error_code ec;
  if (fs::exists(file, ec)) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return fail("cannot read it");
    settings = ojson::parse(text.str(), nullptr, false);
    if (settings.is_discarded() || !settings.is_object()) return fail("not a JSON object");
  }
  const ojson ours = hook_settings(host)["hooks"];
  bool changed = false;
  try {
    if (!settings.contains("hooks")) settings["hooks"] = ojson::object();
    if (!settings["hooks"].is_object()) throw std::runtime_error("\"hooks\" is not an object");
    for (const HookEvent& e : host_events(host)) {
      ojson& groups = settings["hooks"][e.event];
      if (groups.is_null()) groups = ojson::array();
      try {
        changed = merge_event(groups, ours[e.event][0], e.tail) || changed;
      } catch (const std::exception& ex) {
        throw std::runtime_error(std::string("\"hooks\".\"") + e.event + "\" " + ex.what());
      }
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  if (!changed) {
    std::printf("%s already has the leasefs hooks\n", file.c_str());
    return 0;
  }
  // Written beside it and renamed over it: a failure leaves the old file whole.
  fs::create_directories(file.parent_path(), ec);
  const fs::path tmp = file.string() + ".leasectl-tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << settings.dump(2) << "\n";
    out.close();
    if (!out) return fail("cannot write " + tmp.string());
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return fail("cannot replace it");
  }
  std::printf("added the leasefs hooks to %s\n", file.c_str());
  return 0;
}

}  // namespace leasefs::leasectl
