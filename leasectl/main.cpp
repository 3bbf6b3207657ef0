// leasectl: the client of a leasefs daemon's control socket.
//
// Exit codes (scripts and hooks depend on them): 0 ok, 1 the daemon refused (it
// says why: error[<code>]: <message>), 2 usage error, 3 no daemon answers.
// The socket comes from --socket, then $LEASEFS_SOCKET, then the registry of
// running daemons: the one whose tree contains the current directory (or, as a
// host hook, the session's directory), found without reading the tree.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/inert_text.hpp"
#include "base/json_text.hpp"
#include "gate/op.hpp"
#include "gate/task_status.hpp"
#include "leasectl/console.hpp"
#include "leasectl/host_hooks.hpp"
#include "leasectl/mcp_server.hpp"
#include "leasectl/output.hpp"
#include "protocol/arg_text.hpp"
#include "protocol/client.hpp"
#include "protocol/command_registry.hpp"
#include "protocol/daemon_discovery.hpp"
#include "protocol/socket_path.hpp"

namespace {

using leasefs::protocol::Client;
using leasefs::protocol::NoDaemon;
using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDaemon = 3;

std::atomic<bool> g_interrupted{false};

void on_signal(int) {
  g_interrupted = true;
}

struct Options {
  std::string socket;
  // Where to look for the daemon when no socket is named: the current directory,
  // or the session's directory a host hook is told.
  std::string discover_from;
  bool json = false;
  std::string idempotency_key;

  std::string description;
  std::vector<std::string> keywords;
  std::string done_when;
  std::string reason;
  std::vector<std::string> paths;
  std::string ops;
  std::string ttl;
  std::string id;
  std::string summary;
  std::string next;
  std::string status;
  bool retry_pending = false;
  std::string current_step;
  std::string verified;
  std::string discarded;
  std::string needs_approval;
  std::string state;
  std::string query;
  size_t limit = 10;
  std::string title;
  std::string content;
  std::vector<std::string> types;   // watch: only events of these types
  std::optional<int64_t> since_ms;  // watch: replay the audit log from then
};

// What to send, once the command line is understood.
struct Call {
  std::string cmd;
  json args = json::object();
  // `requests` and `grants`: status, narrowed to this member of its result.
  std::string view;
  std::string member;
};

// Where to connect. A socket named with --socket or LEASEFS_SOCKET is the
// caller's choice; one found from the current directory is used only if its
// mount and, once connected, its peer pass the checks of daemon_discovery.hpp.
struct Target {
  std::string socket;
  std::optional<leasefs::protocol::DiscoveredDaemon> discovered;
};

std::optional<Target> find_socket(const Options& o, std::string* tried, bool* untrusted) {
  if (!o.socket.empty()) {
    *tried = o.socket + " (--socket)";
    return Target{o.socket, std::nullopt};
  }
  if (const char* env = std::getenv("LEASEFS_SOCKET"); env && *env) {
    *tried = std::string(env) + " (LEASEFS_SOCKET)";
    return Target{env, std::nullopt};
  }
  std::string dir = o.discover_from;
  if (dir.empty()) {
    // getcwd(3) asks the kernel for the name: nothing mounted there is entered.
    std::error_code ec;
    dir = std::filesystem::current_path(ec).string();
    if (ec) {
      *tried = "none: no --socket, no LEASEFS_SOCKET, and the current directory is unknown";
      return std::nullopt;
    }
  }
  auto found = leasefs::protocol::discover_daemon(dir, ::getuid());
  if (!found.daemon) {
    *untrusted = found.untrusted;
    *tried = found.untrusted ? found.problem
                             : "none: no --socket, no LEASEFS_SOCKET, and " + found.problem;
    return std::nullopt;
  }
  *tried = found.daemon->socket + " (the daemon registered for the leasefs mount at " +
           found.daemon->mountpoint + ")";
  return Target{found.daemon->socket, std::move(found.daemon)};
}

// Refuses a discovered daemon whose peer is not who the mount says it should be.
int untrusted_daemon(const std::string& why) {
  std::fprintf(stderr, "leasectl: not talking to an untrusted daemon: %s\n", why.c_str());
  return kExitNoDaemon;
}

int no_daemon(const std::string& tried, const std::string& why) {
  std::fprintf(stderr,
               "leasectl: no leasefs daemon answers (socket: %s)%s%s\n"
               "  start one with `leasefs mount ROOT`, or point at it with --socket PATH or "
               "LEASEFS_SOCKET\n",
               tried.c_str(), why.empty() ? "" : ": ", why.c_str());
  return kExitNoDaemon;
}

int print_error(const json& reply, const leasefs::leasectl::Style& err_style) {
  json error = reply.value("error", json::object());
  std::string code = error.value("code", "unknown");
  std::string message = error.value("message", "");
  // A message may be several lines (undo_conflict lists paths, quoted by the
  // daemon): real lines, each shown inert.
  std::fprintf(stderr, "%s %s\n",
               err_style.red("error[" + leasefs::base::inert(code) + "]:").c_str(),
               leasefs::leasectl::render_lines(message, leasefs::base::inert_line).c_str());
  return kExitRefused;
}

// --since: a duration back from now (10m, 2h, 1d) or a local date, with a time
// or not (2026-12-06, 2026-12-06 14:30, 2026-12-06 14:30:05).
std::optional<int64_t> parse_since_ms(const std::string& text) {
  if (text.find_first_not_of("0123456789 ") != std::string::npos) {
    if (auto ms = leasefs::protocol::parse_duration_ms(text); ms && *ms >= 0) {
      return static_cast<int64_t>(std::time(nullptr)) * 1000 - *ms;
    }
  }
  for (const char* format : {"%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"}) {
    struct tm tm {};
    const char* end = ::strptime(text.c_str(), format, &tm);
    if (end && *end == '\0') {
      tm.tm_isdst = -1;
      return static_cast<int64_t>(std::mktime(&tm)) * 1000;
    }
  }
  return std::nullopt;
}

int run_watch(Client& client, const Options& o, const leasefs::leasectl::Style& style,
              const leasefs::leasectl::Style& err_style) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one event, one line, as it happens
  json args = json::object();
  if (o.since_ms) args["since_ms"] = *o.since_ms;
  json ack = client.call("watch", args);
  if (!ack.value("ok", false)) {
    if (o.json) std::printf("%s\n", ack.dump().c_str());
    return print_error(ack, err_style);
  }
  // What the audit log holds since --since comes first, one event a line like
  // the live ones.
  json replayed = json::array();
  size_t left_out = 0;
  if (auto it = ack.find("result"); it != ack.end() && it->is_object()) {
    replayed = it->value("replayed", json::array());
    left_out = it->value("replay_left_out", size_t{0});
    it->erase("replayed");
    it->erase("replay_left_out");
  }
  auto show = [&](const json& event, const std::string& line) {
    if (!o.types.empty() && std::find(o.types.begin(), o.types.end(),
                                      event.is_object() ? event.value("type", std::string())
                                                        : std::string()) == o.types.end()) {
      return;
    }
    if (o.json) {
      std::printf("%s\n", line.c_str());
    } else {
      std::printf("%s\n", event.is_discarded()
                              ? leasefs::base::inert(line).c_str()
                              : leasefs::leasectl::format_event(event, style).c_str());
    }
  };
  if (o.json) std::printf("%s\n", ack.dump().c_str());
  if (left_out > 0) {
    std::fprintf(stderr,
                 "leasectl: %zu earlier events since then are not shown (the last %zu are)\n",
                 left_out, replayed.size());
  }
  for (const auto& event : replayed) show(event, leasefs::base::json_text(event));
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  while (!g_interrupted) {
    auto line = client.read_line(std::chrono::milliseconds(250));
    if (line) show(json::parse(*line, nullptr, false), *line);
  }
  return kExitOk;
}

// --hook: what a host hook must say when the turn could not be advanced or ended.
int hook_failure(const std::string& cmd, int rc, bool stop_hook_active) {
  if (cmd == "turn") {
    std::fprintf(stderr,
                 "leasefs blocked this prompt: the turn could not be advanced (leasectl exit %d, "
                 "reason above), so a lease from an earlier turn could still be in force. Check "
                 "that leasefs serves this directory (`leasectl status`), then submit the prompt "
                 "again.\n",
                 rc);
  } else {
    std::fprintf(stderr,
                 "leasefs: the turn could not be ended (leasectl exit %d, reason above); its "
                 "lease stays until the next prompt advances the turn. Tell the person.\n",
                 rc);
  }
  // A Stop hook that blocks again after blocking once would never let the agent stop.
  return stop_hook_active ? 1 : 2;
}

// The hook input on stdin (JSON), if the host sends one; read without waiting long.
json read_hook_input() {
  if (::isatty(STDIN_FILENO) == 1) return json::object();
  std::string text;
  char buf[65536];
  while (text.size() < (size_t{1} << 20)) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) break;
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  json in = json::parse(text, nullptr, false);
  return in.is_object() ? in : json::object();
}

// Sends `call` to the daemon and prints the outcome; returns the exit code.
// `quiet`: nothing on stdout (a host hook's stdout would reach the model).
int run_command(const Options& o, const Call& call, bool quiet) {
  // Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
  const bool no_color = std::getenv("NO_COLOR") && *std::getenv("NO_COLOR");
  leasefs::leasectl::Style style{!o.json && !no_color && ::isatty(STDOUT_FILENO) == 1};
  leasefs::leasectl::Style err_style{!no_color && ::isatty(STDERR_FILENO) == 1};

  std::string tried;
  bool untrusted = false;
  auto target = find_socket(o, &tried, &untrusted);
  if (!target) return untrusted ? untrusted_daemon(tried) : no_daemon(tried, "");

  try {
    Client client = Client::connect(target->socket);
    if (target->discovered) {
      if (auto why = leasefs::protocol::check_daemon_peer(client.fd(), *target->discovered)) {
        return untrusted_daemon(*why);
      }
    }
    if (call.cmd == "watch") {
      try {
        return run_watch(client, o, style, err_style);
      } catch (const NoDaemon& e) {
        // It answered, then left: a stop, a restart or a crash, not a missing mount.
        std::fprintf(stderr,
                     "leasectl: the daemon went away (%s); the watch has ended. Run `leasectl "
                     "watch` again once leasefs serves the tree again.\n",
                     e.what());
        return kExitNoDaemon;
      }
    }
    std::optional<std::string> key;
    if (!o.idempotency_key.empty()) key = o.idempotency_key;
    json reply = client.call(call.cmd, call.args, key);
    const bool ok = reply.value("ok", false);
    if (o.json && !quiet) {
      // A narrowed view prints its list alone: `leasectl --json grants | jq '.[]'`.
      const json shown =
          ok && !call.member.empty() ? reply["result"].value(call.member, json::array()) : reply;
      std::printf("%s\n", shown.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    }
    if (!ok) return print_error(reply, err_style);
    if (!o.json && !quiet) {
      leasefs::leasectl::print_result(stdout, call.view.empty() ? call.cmd : call.view,
                                      reply.value("result", json::object()), style);
    }
    return kExitOk;
  } catch (const NoDaemon& e) {
    return no_daemon(tried, e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"leasectl: control a leasefs daemon (tasks, turns, write leases, checkpoints)"};
  app.fallthrough();
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("leasectl (leasefs) ") + LEASEFS_VERSION);
  app.add_option("--socket", o.socket, "control socket of the daemon");
  app.add_flag("--json", o.json, "print the daemon's reply as one JSON object");
  app.add_option("--idempotency-key", o.idempotency_key,
                 "a retried command with the same key runs once");
  bool as_hook = false;
  app.add_flag("--hook", as_hook,
               "run as an agent host's hook: print nothing on success; on any failure say why "
               "on stderr and exit 2, which blocks the prompt");

  Call call;
  // One subcommand per protocol command, named and described by the registry
  // ("memory.search" is `leasectl memory search`). A command without options
  // below is sent with no arguments.
  std::map<std::string_view, CLI::App*> subs;
  const std::map<std::string, std::string> group_help{
      {"memory", "search or add to the project memory"}, {"audit", "the audit log"}};
  std::map<std::string, CLI::App*> groups;
  for (const auto& spec : leasefs::protocol::command_registry()) {
    auto words = leasefs::protocol::cli_words(spec.name);
    CLI::App* parent = &app;
    std::string path;
    for (size_t i = 0; i + 1 < words.size(); ++i) {
      path += words[i] + " ";
      CLI::App*& group = groups[path];
      if (!group) {
        auto help = group_help.find(words[i]);
        group = parent->add_subcommand(words[i], help == group_help.end() ? "" : help->second);
        group->require_subcommand(1);
      }
      parent = group;
    }
    CLI::App* sub = parent->add_subcommand(words.back(), std::string(spec.summary));
    sub->callback([&call, name = spec.name] { call.cmd = std::string(name); });
    // --json is leasectl's own option, so a subcommand's help would not show it.
    sub->footer("--json (before or after the command): the daemon's reply as one JSON object");
    subs[spec.name] = sub;
  }
  // What the two turn commands do differently; a host hook runs both.
  subs.at("turn")->footer(
      "Starts a new turn: the turn number goes up by one and every grant of the last turn is "
      "revoked. Run on each prompt (the UserPromptSubmit hook); `leasectl diff` and `undo` "
      "take the turn number.\nEnd-turn instead keeps the number and ends the turn in place.\n" +
      subs.at("turn")->get_footer());
  subs.at("end-turn")
      ->footer(
          "Ends the current turn in place: every grant is revoked and every write waiting in ask "
          "mode is refused, but the turn number stays, so the next `turn` starts the next one. "
          "Run when the agent stops (the Stop hook).\n" +
          subs.at("end-turn")->get_footer());

  auto* start = subs.at("start");
  start->add_option("DESCRIPTION", o.description, "what the task is")->required();
  start->add_option("--keyword", o.keywords, "a search keyword (repeatable)");
  start->add_option("--done-when", o.done_when, "when the task counts as done");
  start->callback([&] {
    call = {"start", {{"description", o.description}}};
    if (!o.keywords.empty()) call.args["keywords"] = o.keywords;
    if (!o.done_when.empty()) call.args["done_when"] = o.done_when;
  });

  auto* grant = subs.at("grant");
  grant->add_option("--reason", o.reason, "why, in your own words")->required();
  grant->add_option("--path", o.paths, "a glob relative to the root (repeatable)");
  grant->add_option("--ops", o.ops, "op classes: write,create,rename,unlink,attr");
  grant->add_option("--ttl", o.ttl, "wall-clock limit, e.g. 30s, 10m, 2h");
  grant->callback([&] {
    // Checked here with the daemon's own parsers: a typo is a usage error (exit 2),
    // not something for the daemon to refuse.
    if (!o.ops.empty()) {
      std::string unknown;
      auto classes = leasefs::protocol::split_csv(o.ops);
      if (classes.empty() || !leasefs::gate::parse_op_classes(classes, &unknown)) {
        std::string known;
        for (const auto& n : leasefs::gate::op_class_names(leasefs::gate::kAllOps)) {
          known += (known.empty() ? "" : ",") + n;
        }
        throw CLI::ValidationError("--ops",
                                   (unknown.empty() ? std::string("no op class given")
                                                    : "unknown op class '" + unknown + "'") +
                                       " (known: " + known + ")");
      }
    }
    if (!o.ttl.empty()) {
      // A bare number is refused here: is "10" ten seconds or ten minutes?
      if (o.ttl.find_first_not_of("0123456789 ") == std::string::npos) {
        throw CLI::ValidationError("--ttl", "'" + o.ttl +
                                                "' has no unit: write 10s, 10m or 10h (units: "
                                                "ms, s, m, h, d)");
      }
      auto ms = leasefs::protocol::parse_duration_ms(o.ttl);
      if (!ms || *ms <= 0) {
        throw CLI::ValidationError("--ttl", "'" + o.ttl +
                                                "' is not a duration (a positive number with "
                                                "ms, s, m, h or d, e.g. 30s, 10m, 2h)");
      }
    }
    call = {"grant", {{"reason", o.reason}}};
    if (!o.paths.empty()) call.args["paths"] = o.paths;
    if (!o.ops.empty()) call.args["ops"] = o.ops;
    if (!o.ttl.empty()) call.args["ttl"] = o.ttl;
  });

  auto* revoke = subs.at("revoke");
  revoke->add_option("GRANT_ID", o.id, "the grant to revoke");
  revoke->callback([&] {
    call = {"revoke", json::object()};
    if (!o.id.empty()) call.args["grant_id"] = o.id;
  });

  auto* request = subs.at("request");
  request->add_option("--reason", o.reason, "what you want to change and why")->required();
  request->add_option("--path", o.paths, "a glob relative to the root (repeatable)");
  request->callback([&] {
    call = {"request", {{"reason", o.reason}}};
    if (!o.paths.empty()) call.args["paths"] = o.paths;
  });

  auto* ask = subs.at("ask");
  ask->add_option("WAIT", o.id, "how long a refused write waits: 60s, 5m, off, or default")
      ->required();
  ask->callback([&] { call = {"ask", {{"wait", o.id}}}; });

  for (const char* name : {"approve", "reject"}) {
    auto* sub = subs.at(name);
    sub->add_option("ID", o.id, "the request id (R_0001)")->required();
    sub->add_option("--reason", o.reason, "in your own words");
    sub->callback([&call, &o, name] {
      call = {name, {{"id", o.id}}};
      if (!o.reason.empty()) call.args["reason"] = o.reason;
    });
  }

  auto* checkpoint = subs.at("checkpoint");
  checkpoint->add_option("--summary", o.summary, "what was done");
  checkpoint->add_option("--next", o.next, "what comes next");
  checkpoint->add_option("--status", o.status, "paused|blocked|waiting_verification")
      ->check(CLI::IsMember({"paused", "blocked", "waiting_verification"}));
  checkpoint->add_flag("--retry-pending", o.retry_pending, "replay a checkpoint that failed");
  checkpoint->add_option("--current-step", o.current_step, "the step in progress");
  checkpoint->add_option("--verified", o.verified, "what was checked and how");
  checkpoint->add_option("--discarded", o.discarded, "approaches tried and dropped");
  checkpoint->add_option("--needs-approval", o.needs_approval, "what must be approved next");
  checkpoint->callback([&] {
    if (!o.retry_pending && (o.summary.empty() || o.next.empty())) {
      throw CLI::ValidationError("checkpoint", "--summary and --next are required");
    }
    call = {"checkpoint", json::object()};
    if (!o.summary.empty()) call.args["summary"] = o.summary;
    if (!o.next.empty()) call.args["next"] = o.next;
    if (!o.status.empty()) call.args["status"] = o.status;
    if (o.retry_pending) call.args["retry_pending"] = true;
    if (!o.current_step.empty()) call.args["current_step"] = o.current_step;
    if (!o.verified.empty()) call.args["verified"] = o.verified;
    if (!o.discarded.empty()) call.args["discarded"] = o.discarded;
    if (!o.needs_approval.empty()) call.args["needs_approval"] = o.needs_approval;
  });

  auto* resume = subs.at("resume");
  resume->add_option("TASK_ID", o.id, "the task (default: the current one)");
  resume->callback([&] {
    call = {"resume", json::object()};
    if (!o.id.empty()) call.args["task_id"] = o.id;
  });

  auto* transition = subs.at("transition");
  std::string status_names;
  for (auto st : leasefs::gate::kAllStatuses) {
    status_names += (status_names.empty() ? "" : ", ") + std::string(leasefs::gate::to_string(st));
  }
  transition->add_option("STATE", o.state, "the new status, one of: " + status_names)->required();
  transition->add_option("--reason", o.reason, "why");
  transition->callback([&] {
    if (!leasefs::gate::parse_status(o.state)) {
      throw CLI::ValidationError(
          "STATE", "'" + o.state + "' is not a task status (one of: " + status_names + ")");
    }
    call = {"transition", {{"state", o.state}}};
    if (!o.reason.empty()) call.args["reason"] = o.reason;
  });

  auto* search = subs.at("memory.search");
  search->add_option("QUERY", o.query, "words to look for")->required();
  search->add_option("--limit", o.limit, "at most this many hits")->check(CLI::Range(1, 1000));
  search->callback([&] { call = {"memory.search", {{"query", o.query}, {"limit", o.limit}}}; });
  auto* save = subs.at("memory.save");
  save->add_option("--title", o.title, "title")->required();
  save->add_option("--content", o.content, "text")->required();
  save->add_option("--keyword", o.keywords, "a keyword (repeatable)");
  save->callback([&] {
    call = {"memory.save", {{"title", o.title}, {"content", o.content}}};
    if (!o.keywords.empty()) call.args["keywords"] = o.keywords;
  });

  // diff and undo: the journal.
  std::optional<uint64_t> turn_n;
  bool diff_stat = false, undo_force = false, undo_dry_run = false;
  std::vector<std::string> journal_paths;
  auto* diff_cmd = subs.at("diff");
  diff_cmd->add_option("--turn", turn_n, "the turn (default: the current one)");
  diff_cmd->add_flag("--stat", diff_stat, "one line per changed path, no contents");
  diff_cmd->add_option("PATH", journal_paths, "only these paths (and what is beneath them)");
  diff_cmd->callback([&] {
    call = {"diff", json::object()};
    if (turn_n) call.args["turn"] = *turn_n;
    if (diff_stat) call.args["stat"] = true;
    if (!journal_paths.empty()) call.args["paths"] = journal_paths;
  });
  auto* undo_cmd = subs.at("undo");
  undo_cmd->add_option("--turn", turn_n, "the turn to put back")->required();
  undo_cmd->add_flag("--dry-run", undo_dry_run, "say what would be put back; change nothing");
  undo_cmd->add_flag("--force", undo_force, "even where later turns changed the same paths");
  undo_cmd->add_option("--reason", o.reason, "why, in your own words (for the audit)");
  undo_cmd->add_option("PATH", journal_paths, "only these paths (and what is beneath them)");
  undo_cmd->callback([&] {
    call = {"undo", {{"turn", *turn_n}}};
    if (undo_force) call.args["force"] = true;
    if (undo_dry_run) call.args["dry_run"] = true;
    if (!o.reason.empty()) call.args["reason"] = o.reason;
    if (!journal_paths.empty()) call.args["paths"] = journal_paths;
  });

  auto* audit_show = subs.at("audit.show");
  std::string audit_op;
  audit_show->add_option("--turn", turn_n, "only records of this turn");
  audit_show->add_option("--op", audit_op, "only records of this operation (open, unlink, ...)");
  audit_show->add_option("PATH", journal_paths, "only records naming these paths or beneath");
  audit_show->callback([&] {
    call = {"audit.show", json::object()};
    if (turn_n) call.args["turn"] = *turn_n;
    if (!audit_op.empty()) call.args["op"] = audit_op;
    if (!journal_paths.empty()) call.args["paths"] = journal_paths;
  });

  auto* watch_cmd = subs.at("watch");
  watch_cmd
      ->add_option("--type", o.types,
                   "only events of these types, e.g. refusal,grant (repeatable; with --json too)")
      ->delimiter(',');
  std::string since;
  watch_cmd->add_option("--since", since,
                        "first the audit log's events since then: 10m, 2h, 1d ago, or a local "
                        "date and time (2026-12-06 14:30); approvers only");
  watch_cmd->callback([&] {
    call.cmd = "watch";
    if (since.empty()) return;
    o.since_ms = parse_since_ms(since);
    if (!o.since_ms) {
      throw CLI::ValidationError("--since", "'" + since +
                                                "' is neither a duration (10m, 2h, 1d) nor a "
                                                "date (2026-12-06, 2026-12-06 14:30)");
    }
  });

  std::string hooks_host;
  auto* hooks_cmd =
      app.add_subcommand("hooks", "print agent host settings that drive turns and fail closed");
  hooks_cmd->alias("hook");  // the first spelling
  hooks_cmd->require_subcommand(1);
  bool hooks_install = false;
  std::string hooks_project = ".";
  for (auto [name, help] :
       {std::pair{"claude-code", "Claude Code: turn on each prompt, end-turn on stop"},
        {"codex", "Codex CLI: turn on each prompt, end-turn on stop"}}) {
    auto* host = hooks_cmd->add_subcommand(name, help);
    host->add_flag(
        "--install", hooks_install,
        std::string("merge them into the project's ") +
            (std::string(name) == "codex" ? ".codex/hooks.json" : ".claude/settings.json") +
            ", keeping what is there (running it again adds nothing)");
    host->add_option("--project", hooks_project,
                     "the project directory for --install (default: the current one)");
    host->callback([&hooks_host, name] { hooks_host = name; });
  }

  for (const auto& [name, member, help] :
       {std::tuple{"requests", "pending_requests",
                   "the requests waiting for an answer, with who asked (--json: the list)"},
        std::tuple{"grants", "grants", "the grants in force this turn (--json: the list)"}}) {
    app.add_subcommand(name, help)->callback([&call, name, member] {
      call = {"status", json::object(), name, member};
    });
  }

  bool console = false;
  leasefs::leasectl::ConsoleOptions console_options;
  auto* console_cmd = app.add_subcommand(
      "console", "serve a web page on loopback to watch and answer every daemon you may reach");
  console_cmd
      ->add_option("--listen", console_options.listen,
                   "ADDR:PORT to listen on (default 127.0.0.1 and a free port)")
      ->capture_default_str();
  console_cmd->callback([&] { console = true; });

  bool mcp = false;
  app.add_subcommand("mcp", "serve the agent-side tools over MCP on stdin/stdout")->callback([&] {
    mcp = true;
  });

  // An unknown command word is named, with the nearest command, before CLI11
  // would only say that a subcommand is required.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--socket" || arg == "--idempotency-key" || arg == "--listen") {
      ++i;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      for (const auto& a : sub->get_aliases()) names.push_back(a);
    }
    if (std::find(names.begin(), names.end(), arg) == names.end()) {
      const std::string near = leasefs::protocol::closest_word(arg, names);
      std::fprintf(stderr,
                   "leasectl: unknown command '%s'%s\nRun `leasectl --help` for the list.\n",
                   arg.c_str(), near.empty() ? "" : ("; did you mean '" + near + "'?").c_str());
      return kExitUsage;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  if (!hooks_host.empty()) {
    if (hooks_install)
      return leasefs::leasectl::install_hooks(hooks_host, hooks_project) == 0 ? kExitOk
                                                                              : kExitUsage;
    return leasefs::leasectl::print_hooks(hooks_host);
  }
  if (console) {
    // A named daemon (--socket, LEASEFS_SOCKET) is the only one shown.
    console_options.socket = o.socket;
    if (const char* env = std::getenv("LEASEFS_SOCKET"); console_options.socket.empty() && env) {
      console_options.socket = env;
    }
    return leasefs::leasectl::run_console(console_options);
  }
  if (mcp) {
    // One connection per tool call, found and checked like any other command.
    auto call_daemon = [&o](const std::string& cmd, const json& args) -> json {
      std::string tried;
      bool untrusted = false;
      auto target = find_socket(o, &tried, &untrusted);
      if (!target) throw std::runtime_error(tried);
      Client client = Client::connect(target->socket);
      if (target->discovered) {
        if (auto why = leasefs::protocol::check_daemon_peer(client.fd(), *target->discovered)) {
          throw std::runtime_error(*why);
        }
      }
      return client.call(cmd, args);
    };
    return leasefs::leasectl::run_mcp_server(std::cin, std::cout, call_daemon);
  }
  if (as_hook) {
    const json input = read_hook_input();
    const bool stop_active = input.value("stop_hook_active", false);
    // The host says where the session works; the daemon is found for that path,
    // which is never entered: the agent may have mounted or parked anything there.
    if (input.contains("cwd") && input["cwd"].is_string()) {
      o.discover_from = input["cwd"].get<std::string>();
    }
    if (call.cmd != "turn" && call.cmd != "end-turn") {
      std::fprintf(stderr, "leasectl --hook runs `turn` or `end-turn`, not `%s`\n",
                   call.cmd.c_str());
      return 2;
    }
    const int rc = run_command(o, call, /*quiet=*/true);
    return rc == kExitOk ? kExitOk : hook_failure(call.cmd, rc, stop_active);
  }
  return run_command(o, call, /*quiet=*/false);
}
