// leasectl: the client of a leasefs daemon's control socket.
//
// Exit codes (scripts and hooks depend on them): 0 ok, 1 the daemon refused (it
// says why: error[<code>]: <message>), 2 usage error, 3 no daemon answers.
// The socket comes from --socket, then $LEASEFS_SOCKET, then the leasefs mount
// that contains the current directory.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gate/control/client.hpp"
#include "gate/control/commands.hpp"
#include "gate/control/socket_path.hpp"
#include "gate/leasectl/inert_text.hpp"
#include "gate/leasectl/output.hpp"
#include "gate/op.hpp"
#include "gate/task_status.hpp"

namespace {

using leasefs::gate::control::Client;
using leasefs::gate::control::NoDaemon;
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
};

// What to send, once the command line is understood.
struct Call {
  std::string cmd;
  json args = json::object();
};

std::optional<std::string> find_socket(const Options& o, std::string* tried) {
  if (!o.socket.empty()) {
    *tried = o.socket + " (--socket)";
    return o.socket;
  }
  if (const char* env = std::getenv("LEASEFS_SOCKET"); env && *env) {
    *tried = std::string(env) + " (LEASEFS_SOCKET)";
    return std::string(env);
  }
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  if (!ec) {
    if (auto found = leasefs::gate::discover_socket(cwd.string())) {
      *tried = *found + " (from the leasefs mount containing " + cwd.string() + ")";
      return found;
    }
  }
  *tried = "none: no --socket, no LEASEFS_SOCKET, and " +
           (ec ? std::string("the current directory is unknown")
               : cwd.string() + " is not inside a leasefs mount");
  return std::nullopt;
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
  std::fprintf(stderr, "%s %s\n",
               err_style.red("error[" + leasefs::leasectl::inert(code) + "]:").c_str(),
               leasefs::leasectl::inert(message).c_str());
  return kExitRefused;
}

int run_watch(Client& client, const Options& o, const leasefs::leasectl::Style& style,
              const leasefs::leasectl::Style& err_style) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one event, one line, as it happens
  json ack = client.call("watch");
  if (!ack.value("ok", false)) {
    if (o.json) std::printf("%s\n", ack.dump().c_str());
    return print_error(ack, err_style);
  }
  if (o.json) std::printf("%s\n", ack.dump().c_str());
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  while (!g_interrupted) {
    auto line = client.read_line(std::chrono::milliseconds(250));
    if (!line) continue;
    if (o.json) {
      std::printf("%s\n", line->c_str());
    } else {
      json event = json::parse(*line, nullptr, false);
      std::printf("%s\n", event.is_discarded()
                              ? line->c_str()
                              : leasefs::leasectl::format_event(event, style).c_str());
    }
  }
  return kExitOk;
}

void print_hook() {
  // Ordered as the hooks fire: a prompt opens a turn, the agent's stop ends it.
  using ojson = nlohmann::ordered_json;
  auto hook = [](const char* command) {
    return ojson::array(
        {ojson{{"hooks", ojson::array({ojson{{"type", "command"}, {"command", command}}})}}});
  };
  ojson settings = {{"hooks", ojson{{"UserPromptSubmit", hook("leasectl turn")},
                                    {"Stop", hook("leasectl end-turn")}}}};
  std::printf("%s\n", settings.dump(2).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"leasectl: control a leasefs daemon (tasks, turns, write leases, checkpoints)"};
  app.fallthrough();
  app.require_subcommand(1);
  app.add_option("--socket", o.socket, "control socket of the daemon");
  app.add_flag("--json", o.json, "print the daemon's reply as one JSON object");
  app.add_option("--idempotency-key", o.idempotency_key,
                 "a retried command with the same key runs once");

  Call call;
  auto simple = [&](const char* name, const char* help) {
    auto* sub = app.add_subcommand(name, help);
    sub->callback([&call, name] { call.cmd = name; });
    return sub;
  };

  simple("status", "task, status, turn, lease, pending requests, memory/audit counts");

  auto* start = app.add_subcommand("start", "start a task (searches memory first)");
  start->add_option("DESCRIPTION", o.description, "what the task is")->required();
  start->add_option("--keyword", o.keywords, "a search keyword (repeatable)");
  start->add_option("--done-when", o.done_when, "when the task counts as done");
  start->callback([&] {
    call = {"start", {{"description", o.description}}};
    if (!o.keywords.empty()) call.args["keywords"] = o.keywords;
    if (!o.done_when.empty()) call.args["done_when"] = o.done_when;
  });

  simple("turn", "advance the turn (revokes the lease)");
  simple("end-turn", "end the turn (revokes the lease)");

  auto* grant = app.add_subcommand("grant", "issue a write lease for this turn (approvers only)");
  grant->add_option("--reason", o.reason, "why, in your own words")->required();
  grant->add_option("--path", o.paths, "a glob relative to the root (repeatable)");
  grant->add_option("--ops", o.ops, "op classes: write,create,rename,unlink,attr");
  grant->add_option("--ttl", o.ttl, "wall-clock limit, e.g. 30s, 10m, 2h");
  grant->callback([&] {
    // Checked here with the daemon's own parsers: a typo is a usage error (exit 2),
    // not something for the daemon to refuse.
    if (!o.ops.empty()) {
      std::string unknown;
      auto classes = leasefs::gate::control::split_csv(o.ops);
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
      auto ms = leasefs::gate::control::parse_duration_ms(o.ttl);
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

  auto* revoke = app.add_subcommand("revoke", "revoke one grant, or all of this turn's");
  revoke->add_option("GRANT_ID", o.id, "the grant to revoke");
  revoke->callback([&] {
    call = {"revoke", json::object()};
    if (!o.id.empty()) call.args["grant_id"] = o.id;
  });

  auto* request = app.add_subcommand("request", "ask an approver for a write lease");
  request->add_option("--reason", o.reason, "what you want to change and why")->required();
  request->add_option("--path", o.paths, "a glob relative to the root (repeatable)");
  request->callback([&] {
    call = {"request", {{"reason", o.reason}}};
    if (!o.paths.empty()) call.args["paths"] = o.paths;
  });

  for (const char* name : {"approve", "reject"}) {
    auto* sub = app.add_subcommand(name, std::string(name) + " a pending request (approvers only)");
    sub->add_option("ID", o.id, "the request id (R_0001)")->required();
    sub->add_option("--reason", o.reason, "in your own words");
    sub->callback([&call, &o, name] {
      call = {name, {{"id", o.id}}};
      if (!o.reason.empty()) call.args["reason"] = o.reason;
    });
  }

  auto* checkpoint = app.add_subcommand("checkpoint", "save a resume record (memory first)");
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

  auto* resume = app.add_subcommand("resume", "resume a task from its last checkpoint");
  resume->add_option("TASK_ID", o.id, "the task (default: the current one)");
  resume->callback([&] {
    call = {"resume", json::object()};
    if (!o.id.empty()) call.args["task_id"] = o.id;
  });

  auto* transition = app.add_subcommand("transition", "move the task to another status");
  transition->add_option("STATE", o.state, "the new status")->required();
  transition->add_option("--reason", o.reason, "why");
  transition->callback([&] {
    if (!leasefs::gate::parse_status(o.state)) {
      std::string names;
      for (auto st : leasefs::gate::kAllStatuses) {
        names += (names.empty() ? "" : ", ") + std::string(leasefs::gate::to_string(st));
      }
      throw CLI::ValidationError("STATE",
                                 "'" + o.state + "' is not a task status (one of: " + names + ")");
    }
    call = {"transition", {{"state", o.state}}};
    if (!o.reason.empty()) call.args["reason"] = o.reason;
  });

  auto* memory = app.add_subcommand("memory", "search or add to the project memory");
  memory->require_subcommand(1);
  auto* search = memory->add_subcommand("search", "full-text search");
  search->add_option("QUERY", o.query, "words to look for")->required();
  search->add_option("--limit", o.limit, "at most this many hits")->check(CLI::Range(1, 1000));
  search->callback([&] { call = {"memory.search", {{"query", o.query}, {"limit", o.limit}}}; });
  auto* save = memory->add_subcommand("save", "save a note");
  save->add_option("--title", o.title, "title")->required();
  save->add_option("--content", o.content, "text")->required();
  save->add_option("--keyword", o.keywords, "a keyword (repeatable)");
  save->callback([&] {
    call = {"memory.save", {{"title", o.title}, {"content", o.content}}};
    if (!o.keywords.empty()) call.args["keywords"] = o.keywords;
  });

  simple("watch", "one line per event until interrupted");

  auto* audit = app.add_subcommand("audit", "the audit log");
  audit->require_subcommand(1);
  audit->add_subcommand("verify", "check the hash chain; non-zero exit on a break")->callback([&] {
    call.cmd = "audit.verify";
  });

  bool hook = false;
  auto* hook_cmd = app.add_subcommand("hook", "print agent host settings that drive turns");
  hook_cmd->require_subcommand(1);
  hook_cmd->add_subcommand("claude-code", "Claude Code hooks: turn on prompt, end-turn on stop")
      ->callback([&] { hook = true; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  if (hook) {
    print_hook();
    return kExitOk;
  }

  // Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
  const bool no_color = std::getenv("NO_COLOR") && *std::getenv("NO_COLOR");
  leasefs::leasectl::Style style{!o.json && !no_color && ::isatty(STDOUT_FILENO) == 1};
  leasefs::leasectl::Style err_style{!no_color && ::isatty(STDERR_FILENO) == 1};

  std::string tried;
  auto socket = find_socket(o, &tried);
  if (!socket) return no_daemon(tried, "");

  try {
    Client client = Client::connect(*socket);
    if (call.cmd == "watch") return run_watch(client, o, style, err_style);
    std::optional<std::string> key;
    if (!o.idempotency_key.empty()) key = o.idempotency_key;
    json reply = client.call(call.cmd, call.args, key);
    if (o.json)
      std::printf("%s\n", reply.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    if (!reply.value("ok", false)) return print_error(reply, err_style);
    if (!o.json) {
      leasefs::leasectl::print_result(stdout, call.cmd, reply.value("result", json::object()),
                                      style);
    }
    return kExitOk;
  } catch (const NoDaemon& e) {
    return no_daemon(tried, e.what());
  }
}
