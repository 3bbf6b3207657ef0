#include "fleet/bridge.hpp"

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <thread>
#include <utility>

#include "base/failpoint.hpp"
#include "base/sha256.hpp"
#include "fleet/request_digest.hpp"

namespace leasefs::fleet {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kAuditBatch = 500;
constexpr uint64_t kHeadsBatch = 200;
constexpr auto kDaemonTimeout = std::chrono::seconds(20);
constexpr auto kSettle = std::chrono::milliseconds(500);

// One line on stderr (the unit's journal): what the bridge did or could not do.
void say(const std::string& text) {
  std::fprintf(stderr, "leasefs-bridge: %s\n", text.c_str());
}

// A decision's key on the daemon: the central id, so a retry is the same call.
std::string decision_key(const std::string& decision_id) {
  return "fleet-decision-" + decision_id;
}

std::string reply_error(const json& reply) {
  const json e = reply.value("error", json::object());
  return e.value("code", std::string("error")) + ": " + e.value("message", std::string());
}

}  // namespace

Bridge::Bridge(BridgeOptions options) : options_(std::move(options)) {
  for (const DaemonLink& link : options_.daemons) daemons_.push_back(Daemon{.link = link});
}

void Bridge::run(const std::atomic<bool>& stop) {
  while (!stop) {
    if (!db_) {
      try {
        connect_centre();
      } catch (const PgError& e) {
        centre_lost(e.what());
        for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(options_.reconnect / 10);
        continue;
      }
    }
    try {
      pass();
    } catch (const PgError& e) {
      if (e.sqlstate().empty()) {
        centre_lost(e.what());
        continue;
      }
      // A refusal by the ledger (a row it will not take): said, and tried again
      // next time; nothing is lost locally, the daemon still holds it.
      say("the ledger refused: " + std::string(e.what()));
    }
    wait(stop);
  }
}

void Bridge::connect_centre() {
  PgConnection db = PgConnection::open(options_.conninfo);
  const std::string role = db.user();
  PgResult enrolled = [&] {
    try {
      return db.exec("SELECT count(*) FROM fleet.machines WHERE name = current_user");
    } catch (const PgError& e) {
      if (e.sqlstate().empty()) throw;
      throw BridgeRefused("the role '" + role + "' is not an enrolled machine: " + e.what());
    }
  }();
  if (enrolled.text(0, 0) != "1") {
    throw BridgeRefused("the role '" + role +
                        "' is not an enrolled machine of this ledger (fleet.enroll_machine)");
  }
  db.exec("SELECT fleet.listen_for_decisions()");
  machine_ = role;
  db_ = std::move(db);
  say("connected to the ledger as machine " + machine_);
  for (Daemon& d : daemons_) d.project_id.clear();  // looked up again on this session
}

void Bridge::centre_lost(const std::string& why) {
  if (db_) say("lost the ledger: " + why);
  db_.reset();
  for (Daemon& d : daemons_) {
    try {
      tell_centre(d, false, why);
    } catch (const protocol::NoDaemon&) {
      d.control.reset();
    }
  }
}

json Bridge::call(Daemon& d, const std::string& cmd, json args,
                  const std::optional<std::string>& key) {
  if (!d.control) d.control = protocol::Client::connect(d.link.socket);
  try {
    return d.control->call(cmd, std::move(args), key, kDaemonTimeout);
  } catch (const protocol::NoDaemon&) {
    d.control.reset();
    throw;
  }
}

void Bridge::tell_centre(Daemon& d, bool reachable, const std::string& detail, bool force) {
  const std::string centre = reachable ? "reachable" : "unreachable";
  if (!force && d.told_centre == centre) return;
  json reply = call(d, "fleet.report", {{"centre", centre}, {"detail", detail}});
  if (reply.value("ok", false)) {
    d.told_centre = centre;
  } else {
    say(d.link.root + ": fleet.report refused: " + reply_error(reply));
  }
}

void Bridge::pass() {
  const bool periodic = Clock::now() >= next_poll_;
  if (periodic) next_poll_ = Clock::now() + options_.repoll;
  for (Daemon& d : daemons_) {
    try {
      if (!d.watch) {
        // Subscribed first, so that nothing that happens after this pass is missed.
        protocol::Client w = protocol::Client::connect(d.link.socket);
        json ack = w.call("watch");
        if (ack.value("ok", false)) d.watch = std::move(w);
        d.told_centre.clear();  // a daemon that restarted knows nothing yet
        // Events just before the subscription may have records not yet written
        // (an apply by a bridge that died): one more pass a moment later ships them.
        settle_ = Clock::now() + kSettle;
      }
      tell_centre(d, true, "the bridge reaches the ledger as " + machine_, periodic);
      sync(d);
    } catch (const nlohmann::json::exception& e) {
      // A reply of a shape the bridge does not know: said, and tried again.
      say(d.link.root + ": an unexpected reply: " + e.what());
    } catch (const protocol::NoDaemon& e) {
      // A daemon that is down is served when it is back; the others go on.
      d.control.reset();
      d.watch.reset();
      say(d.link.root + ": " + e.what());
    }
  }
}

void Bridge::sync(Daemon& d) {
  ensure_project(d);
  json status = call(d, "status", json::object());
  if (!status.value("ok", false)) {
    say(d.link.root + ": status refused: " + reply_error(status));
    return;
  }
  ship_requests(d, status["result"]);
  base::failpoint("bridge.after_requests");
  ship_audit(d);
  // A head listed after its records were asked for (its turn ended meanwhile)
  // has its records in the daemon's log already: one more round ships both.
  if (ship_heads(d)) {
    ship_audit(d);
    ship_heads(d);
  }
  apply_decisions(d);
  sync_policy(d, status["result"]);
}

void Bridge::ensure_project(Daemon& d) {
  if (!d.project_id.empty()) return;
  db_->exec(
      "INSERT INTO fleet.projects (root) VALUES ($1)"
      " ON CONFLICT (machine, root) DO NOTHING",
      {d.link.root});
  PgResult r = db_->exec("SELECT id FROM fleet.projects WHERE machine = current_user AND root = $1",
                         {d.link.root});
  if (r.rows() != 1) throw PgError("the ledger has no project for " + d.link.root, "P0002");
  d.project_id = r.text(0, 0);
}

void Bridge::ship_requests(Daemon& d, const json& status) {
  for (const json& p : status.value("pending_requests", json::array())) {
    const std::string digest = request_digest(p);
    PgResult r = db_->exec(
        "INSERT INTO fleet.requests (project_id, local_id, task_id, turn, paths, ops, reason,"
        " requester_uid, requester_pid, requester_command, created_ms, digest)"
        " VALUES ($1, $2, $3, $4, $5::jsonb, '[]'::jsonb, $6, $7, $8, $9,"
        " (extract(epoch from now()) * 1000)::bigint, $10)"
        " ON CONFLICT (project_id, task_id, local_id) DO NOTHING RETURNING id",
        {d.project_id, p.value("id", std::string()), p.value("task_id", std::string()),
         std::to_string(p.value("turn", int64_t{0})), p.value("paths", json::array()).dump(),
         p.value("reason", std::string()), std::to_string(p.value("requester_uid", int64_t{0})),
         std::to_string(p.value("requester_pid", int64_t{0})),
         p.value("requester_command", std::string()), digest});
    if (r.rows() == 1) say(d.link.root + ": request " + p.value("id", std::string()) + " filed");
  }
}

void Bridge::ship_audit(Daemon& d) {
  for (;;) {
    PgResult head =
        db_->exec("SELECT coalesce(max(seq), 0) FROM fleet.audit_heads WHERE project_id = $1",
                  {d.project_id});
    const uint64_t after = static_cast<uint64_t>(head.integer(0, 0));
    json reply = call(d, "audit.records", {{"after_seq", after}, {"limit", kAuditBatch}});
    if (!reply.value("ok", false)) {
      say(d.link.root + ": audit.records refused: " + reply_error(reply));
      return;
    }
    const json records = reply["result"].value("records", json::array());
    if (records.empty()) return;
    db_->transaction([&] {
      for (const json& rec : records) {
        const std::string line = rec.value("line", std::string());
        json parsed = json::parse(line, nullptr, false);
        if (!parsed.is_object()) throw PgError("a record the daemon sent does not parse", "22P02");
        db_->exec(
            "INSERT INTO fleet.audit_records (project_id, seq, ts_ms, prev, hash, line, event)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)",
            {d.project_id, std::to_string(parsed.value("seq", uint64_t{0})),
             std::to_string(parsed.value("ts_ms", int64_t{0})), parsed.value("prev", std::string()),
             parsed.value("hash", std::string()), line,
             parsed.value("event", json::object()).dump()});
      }
      base::failpoint("bridge.mid_audit_batch");  // inserted, not committed
    });
    base::failpoint("bridge.after_audit_batch");
    if (records.size() < kAuditBatch) return;
  }
}

bool Bridge::ship_heads(Daemon& d) {
  for (;;) {
    PgResult held = db_->exec(
        "SELECT (SELECT coalesce(max(size), 0) FROM fleet.signed_heads WHERE project_id = $1),"
        " (SELECT coalesce(max(seq), 0) FROM fleet.audit_heads WHERE project_id = $1)",
        {d.project_id});
    const uint64_t after = static_cast<uint64_t>(held.integer(0, 0));
    const uint64_t chain = static_cast<uint64_t>(held.integer(0, 1));
    json reply = call(d, "audit.heads", {{"after_size", after}, {"limit", kHeadsBatch}});
    if (!reply.value("ok", false)) {
      say(d.link.root + ": audit.heads refused: " + reply_error(reply));
      return false;
    }
    const json& result = reply["result"];
    if (const std::string damaged = result.value("damaged", std::string()); !damaged.empty()) {
      say(d.link.root + ": the daemon's signed heads file is damaged at " + damaged);
    }
    const json heads = result.value("heads", json::array());
    std::vector<const json*> due;
    bool waiting = false;
    for (const json& h : heads) {
      if (h.value("size", uint64_t{0}) > chain) {
        waiting = true;  // its records are not in the ledger yet: shipped after them
        break;
      }
      due.push_back(&h);
    }
    if (due.empty()) return waiting;
    db_->transaction([&] {
      for (const json* h : due) {
        db_->exec(
            "INSERT INTO fleet.signed_heads (project_id, size, root_hash, checkpoint)"
            " VALUES ($1, $2, $3, $4)",
            {d.project_id, std::to_string(h->value("size", uint64_t{0})),
             h->value("root_hash", std::string()), h->value("checkpoint", std::string())});
      }
      base::failpoint("bridge.mid_heads_batch");  // inserted, not committed
    });
    base::failpoint("bridge.after_heads_batch");
    // A head of the ledger's last record: its "head_signed" record follows it in
    // the log by a moment, and wakes no watch; a pass shortly after ships it.
    if (due.back()->value("size", uint64_t{0}) == chain) settle_ = Clock::now() + kSettle;
    if (waiting) return true;
    if (!result.value("more", false)) return false;
  }
}

void Bridge::apply_decisions(Daemon& d) {
  PgResult due = db_->exec(
      "SELECT d.id, d.decision, d.decided_by, d.reason, d.digest, r.local_id, r.task_id, r.turn,"
      " r.digest FROM fleet.decisions d JOIN fleet.requests r ON r.id = d.request_id"
      " WHERE r.project_id = $1 AND NOT EXISTS"
      " (SELECT 1 FROM fleet.decision_outcomes o WHERE o.decision_id = d.id) ORDER BY d.id",
      {d.project_id});
  for (int i = 0; i < due.rows(); ++i) {
    const std::string id = due.text(i, 0), decision = due.text(i, 1), by = due.text(i, 2),
                      reason = due.text(i, 3), decided_digest = due.text(i, 4),
                      local_id = due.text(i, 5), task_id = due.text(i, 6), turn = due.text(i, 7),
                      filed_digest = due.text(i, 8);
    base::failpoint("bridge.after_read_decision");
    // What the daemon holds now: still pending, in the same task and turn, with
    // the digest the person decided on?
    std::string stale;
    if (decided_digest != filed_digest) {
      stale = "the decision names digest " + decided_digest.substr(0, 12) +
              "..., the request's is " + filed_digest.substr(0, 12) + "...";
    }
    json status = call(d, "status", json::object());
    const json result = status.value("result", json::object());
    std::optional<json> pending;
    for (const json& p : result.value("pending_requests", json::array())) {
      if (p.value("id", std::string()) == local_id) pending = p;
    }
    if (stale.empty() && pending) {
      if (pending->value("task_id", std::string()) != task_id) {
        stale = "the request " + local_id + " is now another task's";
      } else if (std::to_string(pending->value("turn", int64_t{0})) != turn) {
        stale = "the request was filed in turn " + turn + "; the daemon is in turn " +
                std::to_string(result.value("turn", int64_t{0}));
      } else if (request_digest(*pending) != filed_digest) {
        stale = "the request " + local_id + " is not the one decided on (its digest changed)";
      }
    }
    std::string outcome = "stale", detail = stale;
    if (stale.empty()) {
      // Applied under the central id: if this very decision was applied before a
      // crash, the daemon replays its first answer; a request no longer pending
      // and never decided by it is refused (decided elsewhere, or its turn is over).
      json reply = call(
          d, decision == "approve" ? "approve" : "reject",
          {{"id", local_id},
           {"reason", "fleet decision " + id + " by " + by + (reason.empty() ? "" : ": " + reason)},
           {"fleet_decision", id}},
          decision_key(id));
      if (reply.value("ok", false)) {
        outcome = "applied";
        detail = decision + " applied as " + local_id;
        base::failpoint("bridge.after_apply");
      } else {
        detail = "the daemon refused: " + reply_error(reply);
      }
    }
    db_->exec(
        "INSERT INTO fleet.decision_outcomes (decision_id, outcome, detail) VALUES ($1, $2, $3)"
        " ON CONFLICT (decision_id) DO NOTHING",
        {id, outcome, detail.substr(0, 4000)});
    say(d.link.root + ": decision " + id + " " + outcome + ": " + detail);
    if (outcome == "stale") {
      json reply = call(d, "fleet.report",
                        {{"dropped_decision", id},
                         {"dropped_request", local_id},
                         {"dropped_why", detail.substr(0, 1000)}});
      if (!reply.value("ok", false)) say("fleet.report refused: " + reply_error(reply));
    }
  }
}

void Bridge::sync_policy(Daemon& d, const json& status) {
  // Row-level security gives the machine its own rows and the all-machines ones,
  // not expired; the scope is '*' (every project) or this project's root.
  PgResult rows = db_->exec(
      "SELECT id, rule, owner, scope, (extract(epoch from expires_at) * 1000)::bigint"
      " FROM fleet.policy WHERE (machine IS NULL OR machine = current_user)"
      " AND (expires_at IS NULL OR expires_at > now()) AND scope IN ('*', $1) ORDER BY id",
      {d.link.root});
  json rules = json::array();
  for (int i = 0; i < rows.rows(); ++i) {
    json rule = json::parse(rows.text(i, 1), nullptr, false);
    // A row that is no rule object is sent as it is: the daemon refuses it by name.
    if (rule.is_object()) {
      rule["id"] = rows.text(i, 0);
      rule["owner"] = rows.text(i, 2);
      rule["scope"] = rows.text(i, 3);
      if (!rows.is_null(i, 4)) rule["expires_ms"] = std::stoll(rows.text(i, 4));
    }
    rules.push_back(std::move(rule));
  }
  const std::string version = base::sha256_hex(rules.dump());  // keys sorted: canonical
  const json held = status.value("policy", json::object());
  if (held.value("version", std::string()) == version || d.refused_policy == version) return;
  if (rules.empty() && held.value("version", std::string()).empty()) return;  // none either side
  // No idempotency key: a version sent again after another must apply again.
  json reply = call(d, "policy.apply", {{"version", version}, {"rules", rules}});
  if (reply.value("ok", false)) {
    d.refused_policy.clear();
    say(d.link.root + ": policy " + version.substr(0, 12) + " applied, " +
        std::to_string(rules.size()) + " rule(s)");
  } else {
    // A policy the daemon will never take is not sent again until the rows
    // change; anything else (busy, a state to repair) is tried at the next pass.
    const std::string code = reply.value("error", json::object()).value("code", std::string());
    if (code == "invalid_argument" || code == "unknown_command") d.refused_policy = version;
    say(d.link.root + ": policy " + version.substr(0, 12) + " refused: " + reply_error(reply));
  }
}

void Bridge::wait(const std::atomic<bool>& stop) {
  // Something to retry (a daemon not reached, the ledger down) is retried every
  // few seconds; otherwise the next pass is the re-poll's, or the first wake-up's.
  bool retry = !db_;
  for (const Daemon& d : daemons_) retry = retry || !d.watch;
  auto until = std::min(next_poll_, retry ? Clock::now() + options_.reconnect : next_poll_);
  // An event is published before its audit record is in the file (the audit
  // writer batches): one more pass a moment after an event ships that record.
  if (settle_ != Clock::time_point{}) until = std::min(until, std::exchange(settle_, {}));
  // A NOTIFY that came while a pass ran was read off the socket with that pass's
  // replies: it waits in the session's queue, and poll() would not see it.
  try {
    if (db_ && db_->take_notifications()) return;
  } catch (const PgError& e) {
    centre_lost(e.what());
    return;
  }
  while (!stop && Clock::now() < until) {
    std::vector<pollfd> fds;
    if (db_) fds.push_back({.fd = db_->socket(), .events = POLLIN, .revents = 0});
    for (Daemon& d : daemons_) {
      if (d.watch) fds.push_back({.fd = d.watch->fd(), .events = POLLIN, .revents = 0});
    }
    // Short slices, so that a stop request is seen within half a second.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    const int n =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), 500)));
    if (n <= 0) continue;
    bool woke = false;
    if (db_ && fds[0].revents != 0) {
      try {
        woke = db_->take_notifications();
      } catch (const PgError& e) {
        centre_lost(e.what());
        return;
      }
    }
    for (Daemon& d : daemons_) {
      if (!d.watch) continue;
      try {
        while (d.watch->read_line(std::chrono::milliseconds(0))) woke = true;
      } catch (const protocol::NoDaemon&) {
        d.watch.reset();  // gone: served again when it is back
        woke = true;
      }
    }
    if (woke) {
      settle_ = Clock::now() + kSettle;
      return;
    }
  }
}

}  // namespace leasefs::fleet
