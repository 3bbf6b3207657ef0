#include "leasectl/console.hpp"

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "leasectl/console_assets.hpp"
#include "leasectl/console_guard.hpp"
#include "leasectl/console_http.hpp"
#include "protocol/client.hpp"
#include "protocol/daemon_discovery.hpp"

namespace leasefs::leasectl {

namespace {

using nlohmann::json;
using protocol::Client;
using protocol::DiscoveredDaemon;

constexpr auto kPollEvery = std::chrono::milliseconds(1000);
constexpr int kRescanEvery = 2;  // polls between two looks for daemons
constexpr const char* kCookie = "leasefs_console_token";

// What a page may ask a daemon to do; everything else is refused here.
const std::set<std::string> kActions = {"approve", "reject", "grant", "revoke",      "end-turn",
                                        "ask",     "undo",   "diff",  "audit.verify"};

// The daemons to show: the one named, or every one discovery trusts. This is
// the one place that finds them.
std::vector<DiscoveredDaemon> find_daemons(const std::string& socket) {
  if (!socket.empty()) return {DiscoveredDaemon{socket, "", "", 0, 0}};
  return protocol::trusted_daemons(::getuid());
}

class Console {
 public:
  explicit Console(ConsoleOptions o) : options_(std::move(o)) {}

  // Polls the daemons until stopped, publishing a new snapshot when it changes.
  void poll_loop(const std::atomic<bool>& stop) {
    int round = 0;
    std::vector<DiscoveredDaemon> daemons;
    while (!stop) {
      if (round++ % kRescanEvery == 0) {
        auto found = find_daemons(options_.socket);
        std::lock_guard lock(mu_);
        daemons_ = found;
        daemons = std::move(found);
      }
      json list = json::array();
      for (const auto& d : daemons) list.push_back(look_at(d));
      publish(json{{"daemons", std::move(list)}});
      for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(kPollEvery / 10);
    }
    std::lock_guard lock(mu_);
    stopped_ = true;
    changed_.notify_all();
  }

  // The latest snapshot newer than `*version`, or nullopt after `wait`.
  std::optional<std::string> next_snapshot(uint64_t* version, std::chrono::seconds wait) {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, wait, [&] { return stopped_ || version_ != *version; });
    if (version_ == *version) return std::nullopt;
    *version = version_;
    return snapshot_;
  }

  // One action from the page, sent with this user's rights; the daemon's reply.
  json act(const json& body) {
    auto text = [&](const char* key) {
      auto it = body.find(key);
      return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string socket = text("daemon");
    const std::string cmd = text("cmd");
    const json args = body.contains("args") ? body["args"] : json::object();
    if (!kActions.count(cmd) || !args.is_object()) {
      return {{"ok", false}, {"error", {{"code", "bad_request"}, {"message", "not an action"}}}};
    }
    std::optional<DiscoveredDaemon> target;
    {
      std::lock_guard lock(mu_);
      for (const auto& d : daemons_) {
        if (d.socket == socket) target = d;
      }
    }
    if (!target) {
      return {{"ok", false},
              {"error", {{"code", "no_daemon"}, {"message", "no such daemon on this page"}}}};
    }
    try {
      Client c = protocol::connect_daemon(*target);
      json reply = c.call(cmd, args);
      wake();
      return reply;
    } catch (const std::exception& e) {
      return {{"ok", false}, {"error", {{"code", "no_daemon"}, {"message", e.what()}}}};
    }
  }

 private:
  json look_at(const DiscoveredDaemon& d) {
    json out = {{"id", d.socket}, {"socket", d.socket}, {"mountpoint", d.mountpoint},
                {"root", d.root}, {"owner", d.owner},   {"pid", d.pid}};
    try {
      Client c = protocol::connect_daemon(d);
      // A daemon that does not answer in 3 s shows as unreachable this round and
      // holds up the others by no more than that.
      for (const char* cmd : {"status", "audit.verify", "diff"}) {
        json reply = c.call(cmd, json::object(), std::nullopt, std::chrono::seconds(3));
        out[cmd] = reply.value("ok", false) ? reply.value("result", json::object())
                                            : json{{"error", reply.value("error", json())}};
      }
    } catch (const std::exception& e) {
      out["unreachable"] = e.what();
    }
    return out;
  }

  void publish(const json& snapshot) {
    std::string text = snapshot.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard lock(mu_);
    if (text == snapshot_) return;
    snapshot_ = std::move(text);
    ++version_;
    changed_.notify_all();
  }
  // An action changed something: the next poll's snapshot is sent even if equal.
  void wake() {
    std::lock_guard lock(mu_);
    snapshot_.clear();
  }

  ConsoleOptions options_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<DiscoveredDaemon> daemons_;
  std::string snapshot_;
  uint64_t version_ = 0;
  bool stopped_ = false;
};

std::atomic<bool> g_stop{false};
httplib::Server* g_server = nullptr;
void on_stop_signal(int) {
  g_stop = true;
  if (g_server) g_server->stop();
}

// The page, its assets, the event stream and the one action route.
void add_routes(httplib::Server& server, const ConsoleGuard& guard, Console& console) {
  guard_every_request(server, guard, kCookie);
  serve_console_page(server, guard, kCookie, kConsoleHtml);
  server.Get("/console.js", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(kConsoleJs), "text/javascript; charset=utf-8");
  });
  server.Get("/console.css", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(kConsoleCss), "text/css; charset=utf-8");
  });
  server.Get("/events", [&](const httplib::Request&, httplib::Response& res) {
    auto version = std::make_shared<uint64_t>(0);
    auto idle = std::make_shared<int>(0);
    res.set_chunked_content_provider(
        "text/event-stream", [&console, version, idle](size_t, httplib::DataSink& sink) {
          // A second at a time, so that an interrupted console stops at once; a
          // comment now and then finds a page that has gone.
          if (g_stop) return false;
          auto snap = console.next_snapshot(version.get(), std::chrono::seconds(1));
          if (!snap && ++*idle < 15) return true;
          *idle = 0;
          const std::string msg = snap ? "data: " + *snap + "\n\n" : std::string(": idle\n\n");
          return sink.write(msg.data(), msg.size());
        });
  });
  server.Post("/api/action", [&](const httplib::Request& req, httplib::Response& res) {
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) {
      refuse(res, 400, "not a JSON object");
      return;
    }
    res.set_content(console.act(body).dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
  });
}

}  // namespace

int run_console(const ConsoleOptions& options) {
  httplib::Server server;
  int exit_code = 0;
  const std::optional<Listening> at =
      bind_console(server, options.listen, "leasectl console", exit_code);
  if (!at) return exit_code;
  const ConsoleGuard guard(new_console_token(), at->host, at->port);
  Console console(options);
  add_routes(server, guard, console);

  std::thread poller([&] { console.poll_loop(g_stop); });
  g_server = &server;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::printf("%s\n", console_url(*at, guard).c_str());
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "leasectl console: serving %s until interrupted (Ctrl-C); keep the URL private, "
      "it carries the token\n",
      options.socket.empty() ? "every leasefs daemon you may reach" : options.socket.c_str());
  server.listen_after_bind();
  g_stop = true;
  poller.join();
  g_server = nullptr;
  return 0;
}

}  // namespace leasefs::leasectl
