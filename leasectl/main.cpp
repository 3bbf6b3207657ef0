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
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/inert_text.hpp"
#include "base/json_text.hpp"
#include "leasectl/command_line.hpp"
#include "leasectl/console.hpp"
#include "leasectl/fleet_command.hpp"
#include "leasectl/fleet_console.hpp"
#include "leasectl/host_hooks.hpp"
#include "leasectl/mcp_server.hpp"
#include "leasectl/output.hpp"
#include "leasectl/tool_hook.hpp"
#include "protocol/arg_text.hpp"
#include "protocol/client.hpp"
#include "protocol/command_registry.hpp"
#include "protocol/daemon_discovery.hpp"

namespace {

using leasefs::leasectl::Call;
using leasefs::leasectl::Style;
using leasefs::protocol::Client;
using leasefs::protocol::NoDaemon;
using leasefs::protocol::UntrustedDaemon;
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
  // -C DIR: as if started in DIR (git's and make's -C); empty: the current directory.
  std::string directory;
  bool json = false;
  std::string idempotency_key;
  bool as_hook = false;
};

// Nothing to connect to: no socket named and none found (what() says so).
class NoTarget : public NoDaemon {
 public:
  using NoDaemon::NoDaemon;
};

// Where to connect. A socket named with --socket or LEASEFS_SOCKET is the
// caller's choice; one found from the current directory is used only if its
// mount and, once connected, its peer pass the checks of daemon_discovery.hpp.
// Throws NoTarget, UntrustedDaemon, or NoDaemon (nothing answers); `tried` says
// which socket, for the message.
Client connect_to_daemon(const Options& o, std::string* tried) {
  if (!o.socket.empty()) {
    *tried = o.socket + " (--socket)";
    return leasefs::protocol::connect_daemon({o.socket});
  }
  if (const char* env = std::getenv("LEASEFS_SOCKET"); env && *env) {
    *tried = std::string(env) + " (LEASEFS_SOCKET)";
    return leasefs::protocol::connect_daemon({env});
  }
  std::string dir = o.discover_from;
  if (dir.empty()) {
    // getcwd(3) asks the kernel for the name: nothing mounted there is entered.
    std::error_code ec;
    dir = std::filesystem::current_path(ec).string();
    if (ec) {
      *tried = "none: no --socket, no LEASEFS_SOCKET, and the current directory is unknown";
      throw NoTarget(*tried);
    }
  }
  auto found = leasefs::protocol::discover_daemon(dir, ::getuid());
  if (!found.daemon) {
    if (found.untrusted) throw UntrustedDaemon(found.problem);
    *tried = "none: no --socket, no LEASEFS_SOCKET, and " + found.problem;
    throw NoTarget(*tried);
  }
  *tried = found.daemon->socket + " (the daemon registered for the leasefs mount at " +
           found.daemon->mountpoint + ")";
  return leasefs::protocol::connect_daemon(*found.daemon);
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

int print_error(const json& reply, const Style& err_style) {
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

int run_watch(Client& client, const Options& o, const Call& call, const Style& style,
              const Style& err_style) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one event, one line, as it happens
  const auto types = call.local.value("types", std::vector<std::string>());
  json ack = client.call(call.cmd, call.args);
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
    if (!types.empty() && std::find(types.begin(), types.end(),
                                    event.is_object() ? event.value("type", std::string())
                                                      : std::string()) == types.end()) {
      return;
    }
    if (o.json) {
      std::printf("%s\n", line.c_str());
    } else if (event.is_discarded()) {
      std::printf("%s\n", leasefs::base::inert(line).c_str());
    } else {
      leasefs::leasectl::print_result(stdout, call.cmd, event, style);
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
  Style style{!o.json && !no_color && ::isatty(STDOUT_FILENO) == 1};
  Style err_style{!no_color && ::isatty(STDERR_FILENO) == 1};
  std::string tried;
  try {
    Client client = connect_to_daemon(o, &tried);
    if (const auto* spec = leasefs::protocol::find_command_spec(call.cmd); spec && spec->streams) {
      try {
        return run_watch(client, o, call, style, err_style);
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
  } catch (const UntrustedDaemon& e) {
    return untrusted_daemon(e.what());
  } catch (const NoTarget&) {
    return no_daemon(tried, "");
  } catch (const NoDaemon& e) {
    return no_daemon(tried, e.what());
  }
}

// A host hook runs `turn` or `end-turn` for the session's directory, quietly, or
// one of the tool hooks.
int run_as_hook(Options& o, const Call& call) {
  const json input = read_hook_input();
  const bool stop_active = input.value("stop_hook_active", false);
  // The host says where the session works; the daemon is found for that path,
  // which is never entered: the agent may have mounted or parked anything there.
  if (o.directory.empty() && input.contains("cwd") && input["cwd"].is_string()) {
    o.discover_from = input["cwd"].get<std::string>();
  }
  if (call.cmd == "refusals.mark" || call.cmd == "refusals.since") {
    // The tool hooks: bounded, and never a failed tool call (leasectl/tool_hook.hpp).
    return leasefs::leasectl::run_tool_hook(
        call.cmd, input, [&o](const std::string& cmd, const json& args) {
          std::string tried;
          return connect_to_daemon(o, &tried).call(
              cmd, args, std::nullopt,
              std::chrono::milliseconds(leasefs::leasectl::kToolHookTimeoutMs));
        });
  }
  if (call.cmd != "turn" && call.cmd != "end-turn") {
    std::fprintf(stderr,
                 "leasectl --hook runs `turn`, `end-turn`, `refusals mark` or `refusals since`, "
                 "not `%s`\n",
                 call.cmd.c_str());
    return 2;
  }
  const int rc = run_command(o, call, /*quiet=*/true);
  return rc == kExitOk ? kExitOk : hook_failure(call.cmd, rc, stop_active);
}

void add_global_options(CLI::App& app, Options& o) {
  app.fallthrough();
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("leasectl (leasefs) ") + LEASEFS_VERSION);
  app.add_option("--socket", o.socket, "control socket of the daemon");
  // Only a name: the daemon is found for DIR as for the current directory,
  // without entering it (see Discovery in DESIGN.md).
  app.add_option("-C", o.directory,
                 "run as if leasectl was started in DIR: the daemon is the one serving DIR, "
                 "and hooks --install's --project is taken relative to it")
      ->type_name("DIR")
      ->each([&o](const std::string& dir) { o.discover_from = dir; });
  app.add_flag("--json", o.json, "print the daemon's reply as one JSON object");
  app.add_option("--idempotency-key", o.idempotency_key,
                 "a retried command with the same key runs once");
  app.add_flag("--hook", o.as_hook,
               "run as an agent host's hook: turn and end-turn print nothing on success and on "
               "any failure say why on stderr and exit 2, which blocks the prompt; refusals "
               "mark|since (the tool hooks) always exit 0 and print the host's JSON when "
               "there is something to say");
}

// leasectl's own commands: each sets `run` to what it does.
using Run = std::function<int()>;

constexpr const char* kHookHosts = "claude-code or codex";

void add_hooks_command(CLI::App& app, const Options& o, Run& run) {
  auto* hooks_cmd = app.add_subcommand(
      "hooks", std::string("print agent host settings that drive turns and fail closed (HOST: ") +
                   kHookHosts + ")");
  hooks_cmd->alias("hook");  // the first spelling
  // At most one host; none is answered below with the hosts there are, which
  // CLI11's "A subcommand is required" would not name.
  hooks_cmd->require_subcommand(0, 1);
  hooks_cmd->callback([&run, hooks_cmd] {
    if (!hooks_cmd->get_subcommands().empty()) return;
    run = [] {
      std::fprintf(stderr,
                   "leasectl hooks: name the agent host: %s\n"
                   "  e.g. `leasectl hooks claude-code` prints its settings, "
                   "`leasectl hooks codex --install` merges them into .codex/hooks.json\n",
                   kHookHosts);
      return kExitUsage;
    };
  });
  auto install = std::make_shared<bool>(false);
  auto project = std::make_shared<std::string>(".");
  for (auto [name, help] :
       {std::pair{"claude-code",
                  "Claude Code: turn on each prompt, end-turn on stop, refusals after each tool"},
        {"codex", "Codex CLI: turn on each prompt, end-turn on stop, refusals after each tool"}}) {
    auto* host = hooks_cmd->add_subcommand(name, help);
    host->add_flag(
        "--install", *install,
        std::string("merge them into the project's ") +
            (std::string(name) == "codex" ? ".codex/hooks.json" : ".claude/settings.json") +
            ", keeping what is there (running it again adds nothing)");
    host->add_option("--project", *project,
                     "the project directory for --install (default: the current one)");
    host->callback([&run, &o, install, project, host = std::string(name)] {
      run = [&o, install, project, host] {
        if (!*install) return leasefs::leasectl::print_hooks(host);
        std::string dir = *project;
        if (!o.directory.empty() && !dir.starts_with('/')) dir = o.directory + "/" + dir;
        return leasefs::leasectl::install_hooks(host, dir) == 0 ? kExitOk : kExitUsage;
      };
    });
  }
}

// `requests` and `grants`: status, narrowed.
void add_status_views(CLI::App& app, Call& call) {
  for (const auto& [name, member, help] :
       {std::tuple{"requests", "pending_requests",
                   "the requests waiting for an answer, with who asked (--json: the list)"},
        std::tuple{"grants", "grants", "the grants in force this turn (--json: the list)"}}) {
    app.add_subcommand(name, help)->callback([&call, name, member] {
      call = {"status", json::object(), json::object(), name, member};
    });
  }
}

void add_console_command(CLI::App& app, const Options& o, Run& run) {
  auto console_options = std::make_shared<leasefs::leasectl::ConsoleOptions>();
  auto* console_cmd = app.add_subcommand(
      "console", "serve a web page on loopback to watch and answer every daemon you may reach");
  console_cmd
      ->add_option("--listen", console_options->listen,
                   "ADDR:PORT to listen on (default 127.0.0.1 and a free port)")
      ->capture_default_str();
  // --fleet: the same page for the fleet's ledger (`leasectl fleet console`).
  auto fleet = std::make_shared<leasefs::leasectl::FleetConsoleOptions>();
  auto use_fleet = std::make_shared<bool>(false);
  auto* fleet_flag = console_cmd->add_flag(
      "--fleet", *use_fleet,
      "show the fleet's ledger under your own database role, not this machine's daemons");
  console_cmd
      ->add_option("--db", fleet->db,
                   "with --fleet: libpq connection string, without a password (~/.pgpass)")
      ->needs(fleet_flag);
  console_cmd->callback([&run, &o, console_options, fleet, use_fleet] {
    if (*use_fleet) {
      fleet->listen = console_options->listen;
      run = [fleet] { return leasefs::leasectl::run_fleet_console(*fleet); };
      return;
    }
    run = [&o, console_options] {
      // A named daemon (--socket, LEASEFS_SOCKET) is the only one shown.
      console_options->socket = o.socket;
      if (const char* env = std::getenv("LEASEFS_SOCKET"); console_options->socket.empty() && env) {
        console_options->socket = env;
      }
      return leasefs::leasectl::run_console(*console_options);
    };
  });
}

void add_mcp_command(CLI::App& app, const Options& o, Run& run) {
  app.add_subcommand("mcp", "serve the agent-side tools over MCP on stdin/stdout")
      ->callback([&run, &o] {
        run = [&o] {
          // One connection per tool call, found and checked like any other command.
          auto call_daemon = [&o](const std::string& cmd, const json& args) -> json {
            std::string tried;
            return connect_to_daemon(o, &tried).call(cmd, args);
          };
          return leasefs::leasectl::run_mcp_server(std::cin, std::cout, call_daemon);
        };
      });
}

// An unknown command word is named, with the nearest command, before CLI11
// would only say that a subcommand is required.
std::optional<int> unknown_command(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--socket" || arg == "--idempotency-key" || arg == "--listen" || arg == "-C") {
      ++i;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      for (const auto& a : sub->get_aliases()) names.push_back(a);
    }
    if (std::find(names.begin(), names.end(), arg) != names.end()) return std::nullopt;
    const std::string near = leasefs::protocol::closest_word(arg, names);
    std::fprintf(stderr, "leasectl: unknown command '%s'%s\nRun `leasectl --help` for the list.\n",
                 arg.c_str(), near.empty() ? "" : ("; did you mean '" + near + "'?").c_str());
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  Call call;
  Run run;  // set by a command of leasectl's own
  CLI::App app{"leasectl: control a leasefs daemon (tasks, turns, write leases, checkpoints)"};
  add_global_options(app, o);
  leasefs::leasectl::add_protocol_commands(app, call);
  add_hooks_command(app, o, run);
  add_status_views(app, call);
  add_console_command(app, o, run);
  add_mcp_command(app, o, run);
  leasefs::leasectl::add_fleet_command(app, run);
  if (auto rc = unknown_command(app, argc, argv)) return *rc;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (run) return run();
  if (o.as_hook) return run_as_hook(o, call);
  return run_command(o, call, /*quiet=*/false);
}
