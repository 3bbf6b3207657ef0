#include "leasectl/fleet_console.hpp"

#include <arpa/inet.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/inert_text.hpp"
#include "fleet/person_desk.hpp"
#include "fleet/person_login.hpp"
#include "leasectl/console_assets.hpp"
#include "leasectl/console_guard.hpp"
#include "leasectl/console_http.hpp"

namespace leasefs::leasectl {

namespace {

using nlohmann::json;

constexpr auto kPollEvery = std::chrono::milliseconds(1000);
// Its own cookie: a browser sends a cookie to every port of 127.0.0.1, and the
// daemons' console beside this one keeps its token under its own name.
constexpr const char* kCookie = "leasefs_fleet_console_token";
// Refusals are looked for among the last records of each chain only (a range
// of the primary key), never by a scan of the whole audit.
constexpr int kRefusalWindow = 2000;
constexpr int kRefusalsShown = 20;

// The page shows what `leasectl fleet requests` prints: the agent's text through
// base::inert, names and paths through base::quote_name.
json quoted(const std::vector<std::string>& names) {
  json out = json::array();
  for (const auto& n : names) out.push_back(base::quote_name(n));
  return out;
}

json request_json(const fleet::PendingRequest& r) {
  return {{"id", r.id},
          {"machine", r.machine},
          {"project_id", r.project_id},
          {"root", base::quote_name(r.root)},
          {"task_id", base::inert(r.task_id)},
          {"turn", r.turn},
          {"paths", quoted(r.paths)},
          {"ops", quoted(r.ops)},
          {"reason", base::inert(r.reason)},
          {"requester_uid", r.requester_uid},
          {"requester_pid", r.requester_pid},
          {"requester_command", base::inert(r.requester_command)}};
}

// One refusal event of a shipped record, its fields as text.
json refusal_json(const std::string& project_id, const std::string& seq, const std::string& event) {
  const json e = json::parse(event, nullptr, false);
  auto text = [&](const char* key) {
    if (!e.is_object() || !e.contains(key)) return std::string();
    const json& v = e[key];
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  json out = {{"project_id", project_id},
              {"seq", seq},
              {"op", base::inert(text("op"))},
              {"path", base::quote_name(text("path"))},
              {"reason", base::inert(text("reason"))},
              {"process", base::inert(text("process"))},
              {"pid", base::inert(text("pid"))},
              {"uid", base::inert(text("uid"))},
              {"turn", base::inert(text("turn"))},
              {"count", base::inert(text("count"))}};
  if (e.is_object() && e.contains("ts_ms") && e["ts_ms"].is_number()) out["ts_ms"] = e["ts_ms"];
  return out;
}

// libpq's messages run over lines ("...failed: ...\n\tIs the server running"):
// one line of them for the page's header.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c != '\n' && c != '\t' && c != '\r') {
      out += c;
    } else if (!out.empty() && out.back() != ' ') {
      out += ' ';
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

json failure(const std::string& code, const std::string& message) {
  return {{"ok", false}, {"error", {{"code", code}, {"message", base::inert(message)}}}};
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The ledger under the person's role: one session, shared by the poller and the
// actions under a lock, opened again after it broke (a stopped server, a link
// down: libpq closes it, and the page says the centre is unreachable).
class FleetDesk {
 public:
  FleetDesk(std::string conninfo, fleet::PgConnection first)
      : conninfo_(std::move(conninfo)), user_(first.user()), db_(std::move(first)) {}

  const std::string& user() const { return user_; }

  void poll_loop(const std::atomic<bool>& stop) {
    while (!stop) {
      publish(look());
      std::unique_lock lock(mu_);
      woken_.wait_for(lock, kPollEvery, [&] { return stop || wake_; });
      wake_ = false;
    }
    std::lock_guard lock(mu_);
    stopped_ = true;
    changed_.notify_all();
  }
  void stop() {
    std::lock_guard lock(mu_);
    woken_.notify_all();
  }

  std::optional<std::string> next_snapshot(uint64_t* version, std::chrono::seconds wait) {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, wait, [&] { return stopped_ || version_ != *version; });
    if (version_ == *version) return std::nullopt;
    *version = version_;
    return snapshot_;
  }

  // approve or reject: one request (id), or every pending one of a project
  // (project, its id) under path_prefix. What the ledger refuses is an error.
  json act(const json& body) {
    auto text = [&](const char* key) {
      auto it = body.find(key);
      return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string cmd = text("cmd");
    const std::string id = text("id");
    const std::string project = text("project");
    if ((cmd != "approve" && cmd != "reject") || id.empty() == project.empty() ||
        (!id.empty() && !all_digits(id)) || (!project.empty() && !all_digits(project))) {
      return failure("bad_request",
                     "not an action: approve or reject, with one request id or a project id");
    }
    json result;
    try {
      std::lock_guard lock(db_mu_);
      fleet::PgConnection& db = connection();
      std::vector<fleet::Decided> decided;
      if (!id.empty()) {
        decided.push_back(fleet::decide(db, id, cmd, text("reason")));
      } else {
        decided = fleet::decide_matching(db, project, text("path_prefix"), cmd, text("reason"));
      }
      json rows = json::array();
      for (const auto& d : decided) {
        rows.push_back({{"request_id", d.request_id}, {"decision_id", d.decision_id}});
      }
      result = {{"ok", true}, {"result", {{"decided", rows}, {"by", user_}}}};
    } catch (const fleet::DecisionRefused& e) {
      result = failure("refused", e.what());
    } catch (const fleet::PgError& e) {
      result = ledger_failure(e);
    } catch (const std::exception& e) {
      result = failure("unreachable", e.what());
    }
    wake();
    return result;
  }

 private:
  static json ledger_failure(const fleet::PgError& e) {
    const bool no_server = e.sqlstate().empty() || e.sqlstate().starts_with("08");
    return failure(
        no_server ? "unreachable" : "refused",
        std::string(no_server ? "the ledger does not answer: " : "the ledger refused: ") +
            one_line(e.what()));
  }

  // The session, opened again when the last one broke. Under db_mu_.
  fleet::PgConnection& connection() {
    if (!db_ || !db_->open()) {
      db_.reset();
      db_.emplace(fleet::open_as_person(conninfo_));
    }
    return *db_;
  }

  json look() {
    json out = {{"user", user_}};
    try {
      std::lock_guard lock(db_mu_);
      fleet::PgConnection& db = connection();
      json projects = json::array();
      fleet::PgResult p =
          db.exec("SELECT id, machine, root FROM fleet.projects ORDER BY machine, root, id");
      for (int i = 0; i < p.rows(); ++i) {
        projects.push_back({{"id", p.text(i, 0)},
                            {"machine", p.text(i, 1)},
                            {"root", base::quote_name(p.text(i, 2))}});
      }
      json requests = json::array();
      for (const auto& r : fleet::pending_requests(db)) requests.push_back(request_json(r));
      json refusals = json::array();
      fleet::PgResult f = db.exec(
          "SELECT h.project_id, a.seq, a.event::text FROM fleet.audit_heads h"
          " CROSS JOIN LATERAL (SELECT r.seq, r.event FROM fleet.audit_records r"
          "   WHERE r.project_id = h.project_id AND r.seq > h.seq - $1::bigint"
          "     AND r.event->>'type' = 'refusal'"
          "   ORDER BY r.seq DESC LIMIT $2::int) a"
          " ORDER BY h.project_id, a.seq DESC",
          {std::to_string(kRefusalWindow), std::to_string(kRefusalsShown)});
      for (int i = 0; i < f.rows(); ++i) {
        refusals.push_back(refusal_json(f.text(i, 0), f.text(i, 1), f.text(i, 2)));
      }
      out["centre"] = {{"reachable", true}};
      out["projects"] = std::move(projects);
      out["requests"] = std::move(requests);
      out["refusals"] = std::move(refusals);
    } catch (const fleet::PgError& e) {
      out["centre"] = {{"reachable", false}, {"error", ledger_failure(e)["error"]["message"]}};
    } catch (const std::exception& e) {
      out["centre"] = {{"reachable", false}, {"error", base::inert(e.what())}};
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
  // An action changed the ledger: look again now, and send what is seen.
  void wake() {
    std::lock_guard lock(mu_);
    snapshot_.clear();
    wake_ = true;
    woken_.notify_all();
  }

  const std::string conninfo_;
  const std::string user_;
  std::mutex db_mu_;  // the session; taken before mu_, never inside it
  std::optional<fleet::PgConnection> db_;
  std::mutex mu_;
  std::condition_variable changed_, woken_;
  std::string snapshot_;
  uint64_t version_ = 0;
  bool wake_ = false;
  bool stopped_ = false;
};

std::atomic<bool> g_stop{false};
httplib::Server* g_server = nullptr;
void on_stop_signal(int) {
  g_stop = true;
  if (g_server) g_server->stop();
}

// A loopback address: the page acts as the person on the ledger, so it is
// never offered to the network (ssh -L carries it elsewhere).
bool loopback(const std::string& host) {
  unsigned char addr[16];
  if (inet_pton(AF_INET, host.c_str(), addr) == 1) return addr[0] == 127;
  if (inet_pton(AF_INET6, host.c_str(), addr) == 1) {
    static const unsigned char kOne[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return std::equal(addr, addr + 16, kOne);
  }
  return false;
}

void add_routes(httplib::Server& server, const ConsoleGuard& guard, FleetDesk& desk) {
  guard_every_request(server, guard, kCookie);
  serve_console_page(server, guard, kCookie, kFleetHtml);
  server.Get("/fleet.js", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(kFleetJs), "text/javascript; charset=utf-8");
  });
  server.Get("/console.css", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(kConsoleCss), "text/css; charset=utf-8");
  });
  server.Get("/events", [&desk](const httplib::Request&, httplib::Response& res) {
    auto version = std::make_shared<uint64_t>(0);
    auto idle = std::make_shared<int>(0);
    res.set_chunked_content_provider(
        "text/event-stream", [&desk, version, idle](size_t, httplib::DataSink& sink) {
          if (g_stop) return false;
          auto snap = desk.next_snapshot(version.get(), std::chrono::seconds(1));
          if (!snap && ++*idle < 15) return true;
          *idle = 0;
          const std::string msg = snap ? "data: " + *snap + "\n\n" : std::string(": idle\n\n");
          return sink.write(msg.data(), msg.size());
        });
  });
  server.Post("/api/action", [&desk](const httplib::Request& req, httplib::Response& res) {
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) {
      refuse(res, 400, "not a JSON object");
      return;
    }
    res.set_content(desk.act(body).dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
  });
}

}  // namespace

int run_fleet_console(const FleetConsoleOptions& options) {
  constexpr const char* kWho = "leasectl fleet console";
  httplib::Server server;
  int exit_code = 0;
  const std::optional<Listening> at = bind_console(server, options.listen, kWho, exit_code);
  if (!at) return exit_code;
  if (!loopback(at->host)) {
    std::fprintf(stderr, "%s: listens on a loopback address only (127.0.0.1, ::1), not %s\n", kWho,
                 at->host.c_str());
    return 2;
  }
  // The first login is made before the URL is printed: a wrong role or
  // password is said at once, not on the page.
  std::optional<FleetDesk> desk;
  try {
    desk.emplace(options.db, fleet::open_as_person(options.db));
  } catch (const fleet::LoginRefused& e) {
    std::fprintf(stderr, "%s: %s\n", kWho, e.what());
    return 2;
  } catch (const fleet::PgError& e) {
    const bool no_server = e.sqlstate().empty() || e.sqlstate().starts_with("08");
    std::fprintf(stderr, "%s: %s: %s\n", kWho,
                 no_server ? "the ledger does not answer" : "the ledger refused the login",
                 base::inert(e.what()).c_str());
    return no_server ? 3 : 1;
  }
  const ConsoleGuard guard(new_console_token(), at->host, at->port);
  add_routes(server, guard, *desk);

  std::thread poller([&] { desk->poll_loop(g_stop); });
  g_server = &server;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::printf("%s\n", console_url(*at, guard).c_str());
  std::fflush(stdout);
  std::fprintf(stderr,
               "%s: serving the fleet's ledger as %s until interrupted (Ctrl-C); keep the URL "
               "private, it carries the token\n",
               kWho, desk->user().c_str());
  server.listen_after_bind();
  g_stop = true;
  desk->stop();
  poller.join();
  g_server = nullptr;
  return 0;
}

}  // namespace leasefs::leasectl
